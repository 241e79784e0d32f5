// Package filescan reads transcript files: a line reader that holds at
// most one line in memory whatever the input, an opener that reads files
// with plain system calls by their name in a kept-open folder, a parallel
// folder walk, and ScanPaths, which reads many files ahead on several
// goroutines and hands their prompts over in file order, deduplicated.
// What a line holds is package jsonscan's business.
package filescan

import (
	"bufio"
	"bytes"
	"errors"
	"hash/maphash"
	"io"
	"io/fs"
	"runtime"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"

	"hist/lib/transcript"
)

// Read buffers: lines that fit are handled in place, without a copy.
// ScanPaths reads many files, with large reads; a reader's ScanReader reads
// one stream (StreamBufSize).
const (
	readBufSize   = 1 << 20
	StreamBufSize = 64 << 10
)

// keepLongCap bounds the buffer kept for long lines between lines: a larger
// one (left by a line of many megabytes) is released.
const keepLongCap = 8 << 20

// MaxLine is the longest transcript line handed out whole. A longer line
// (no typed prompt is that long; a line of many megabytes is a tool's
// output or an attachment) is read through to its newline without being
// held, and handed out as oversize, which no parser takes for a record, so
// it is counted as malformed: memory stays bounded whatever the input.
const MaxLine = 32 << 20

// oversize is what Next returns in place of a line longer than MaxLine:
// it is not JSON, so every reader counts it as malformed.
var oversize = []byte("\x00oversize line")

// LineReader hands out the lines of a stream one at a time, of any length,
// holding at most one line (plus the read buffer) in memory.
type LineReader struct {
	br   *bufio.Reader
	long []byte // a line longer than the buffer, assembled
	n    int64  // bytes consumed since the last reset
	done int64  // of which, up to the end of the last complete line
	lim  io.LimitedReader
	skip func(prefix []byte) bool
	// A file read from a cursor (see ResetFile): the file, where the
	// read started, and the reader's context, to go on with and to save.
	file *File
	from int64
	ctx  string
	// A file read from its start: its first bytes as they were read, for
	// the cursor's head sum (reading them again, a pread per transcript,
	// was 11% of a pi first import's CPU time).
	tee headTee
}

// headTee reads r and keeps the first transcript.HeadSize bytes read.
type headTee struct {
	r    io.Reader
	head []byte
}

func (t *headTee) Read(b []byte) (int, error) {
	n, err := t.r.Read(b)
	if k := min(n, transcript.HeadSize-len(t.head)); k > 0 {
		t.head = append(t.head, b[:k]...)
	}
	return n, err
}

// NewLineReader returns a LineReader reading r through a buffer of size
// bytes; lines up to that size are handed out without a copy.
func NewLineReader(r io.Reader, size int) *LineReader {
	return &LineReader{br: bufio.NewReaderSize(r, size)}
}

// SkipLong makes the reader ask skip about every line longer than its
// buffer, with the buffer's worth of the line's beginning: a line skip
// says yes to is read through without being held, and not handed out. A
// reader that can tell from a line's start that it has no use for it
// (a tool's output) so never assembles it.
func (lr *LineReader) SkipLong(skip func(prefix []byte) bool) { lr.skip = skip }

// Reset makes lr read r from its start, keeping its buffers.
func (lr *LineReader) Reset(r io.Reader) {
	lr.br.Reset(r)
	lr.n, lr.done = 0, 0
	lr.file, lr.from, lr.ctx = nil, 0, ""
	if cap(lr.long) > keepLongCap {
		lr.long = nil
	}
}

// Next returns the next line without its line ending; the slice is only
// valid until the next call. A last line with no newline (possibly torn) is
// returned like the others. It returns io.EOF after the last line, and any
// other error from the underlying reader.
func (lr *LineReader) Next() ([]byte, error) {
	if cap(lr.long) > keepLongCap {
		lr.long = nil
	}
	lr.long = lr.long[:0]
	for {
		frag, err := lr.br.ReadSlice('\n')
		lr.n += int64(len(frag))
		switch err {
		case nil:
			lr.done = lr.n
		case bufio.ErrBufferFull:
			if len(lr.long) == 0 && lr.skip != nil && lr.skip(frag) {
				if err := lr.discard(); err != nil {
					return nil, err
				}
				continue // at the end, the next read finds io.EOF
			}
			if len(lr.long)+len(frag) > MaxLine {
				lr.long = nil
				if err := lr.discard(); err != nil {
					return nil, err
				}
				return oversize, nil
			}
			lr.long = append(lr.long, frag...)
			continue
		case io.EOF:
			if len(frag) == 0 && len(lr.long) == 0 {
				return nil, io.EOF
			}
		default:
			return nil, err
		}
		if len(lr.long) > 0 {
			if len(lr.long)+len(frag) > MaxLine+2 { // +2: the line ending
				lr.long = nil
				return oversize, nil
			}
			lr.long = append(lr.long, frag...)
			frag = lr.long
		}
		return trimEOL(frag), nil
	}
}

// discard reads the rest of a line that is not held.
func (lr *LineReader) discard() error {
	for {
		frag, err := lr.br.ReadSlice('\n')
		lr.n += int64(len(frag))
		switch err {
		case bufio.ErrBufferFull:
			continue
		case nil:
			lr.done = lr.n
			return nil
		case io.EOF:
			return nil
		default:
			return err
		}
	}
}

// Complete reports whether the line Next returned last ended with a
// newline: a cursor is left before one that did not (see Stopped).
func (lr *LineReader) Complete() bool { return lr.done == lr.n }

// Bytes returns the number of bytes consumed since the reader was made or
// reset, line endings included.
func (lr *LineReader) Bytes() int64 { return lr.n }

// Context is the context saved with the cursor the file is read from
// ("" when it is read from its start); SetContext sets the one to save
// with where this read stops.
func (lr *LineReader) Context() string { return lr.ctx }

// SetContext sets the context saved with the cursor this read stops at.
func (lr *LineReader) SetContext(ctx string) { lr.ctx = ctx }

// Head returns a reader of the part of a file read from a cursor that
// is before it (a reader needing what its header says), or nil.
func (lr *LineReader) Head() *LineReader {
	if lr.file == nil || lr.from == 0 {
		return nil
	}
	return NewLineReader(io.NewSectionReader(lr.file, 0, lr.from), StreamBufSize)
}

func trimEOL(b []byte) []byte {
	if n := len(b); n > 0 && b[n-1] == '\n' {
		b = b[:n-1]
		if n := len(b); n > 0 && b[n-1] == '\r' {
			b = b[:n-1]
		}
	}
	return b
}

// File is a transcript opened by an Opener. It is read with plain system
// calls: opening lets only regular files (and folders, whose read fails)
// through, and their reads never block, so the runtime's poller, which an
// os.File registers each file with, has nothing to do for them.
type File struct {
	fd   int
	name string
}

// open opens path for reading without blocking on a FIFO that replaced the
// file after the walk, and returns its size when opened. skip is true (and
// f nil) for a file that vanished or is not a regular file or folder. An
// error is a *transcript.ReadError.
func open(path string) (f *File, size int64, skip bool, err error) {
	return openAt(unix.AT_FDCWD, path, path, -1)
}

// openAt is open for name in the folder dirfd; path is for errors. A
// known size (not negative: what a listing found) is taken as the file's,
// which saves a system call: the file is then not checked to be a regular
// one, as the listing did (one that became a FIFO since reads nothing, as
// its reads never block, and a device is read only up to that size).
func openAt(dirfd int, name, path string, known int64) (f *File, size int64, skip bool, err error) {
	var fd int
	for {
		fd, err = unix.Openat(dirfd, name, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
		if err != unix.EINTR {
			break
		}
	}
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, 0, true, nil
		}
		return nil, 0, false, &transcript.ReadError{Path: path, Err: &fs.PathError{Op: "open", Path: path, Err: err}}
	}
	if known >= 0 {
		return &File{fd: fd, name: path}, known, false, nil
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		syscall.Close(fd)
		return nil, 0, false, &transcript.ReadError{Path: path, Err: &fs.PathError{Op: "stat", Path: path, Err: err}}
	}
	if m := st.Mode & syscall.S_IFMT; m != syscall.S_IFREG && m != syscall.S_IFDIR {
		syscall.Close(fd)
		return nil, 0, true, nil
	}
	return &File{fd: fd, name: path}, st.Size, false, nil
}

// Opener opens files as open does, but by their name in their folder,
// which it keeps open: the kernel then looks up one name per file instead
// of every folder of its path, and a folder is opened once per scan
// however its files are ordered. It keeps up to maxDirs folders open;
// past that, a file's folder is opened and closed around it. A folder
// renamed or replaced after it was first opened is still read where it
// went (its files were listed there). Safe for concurrent use; Close
// releases the folders, once no Open is running.
type Opener struct {
	mu   sync.Mutex
	dirs map[string]int
}

// maxDirs bounds the folders an Opener keeps open: a quarter of the
// process's file limit, at most 1024 (the seed's temp files take another
// quarter).
var maxDirs = func() int {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return 64
	}
	return int(max(min(lim.Cur/4, 1024), 16))
}()

// Open is open(path), with the folder kept open.
func (o *Opener) Open(path string) (f *File, size int64, skip bool, err error) {
	return o.openKnown(path, -1)
}

// openKnown is Open for a regular file whose size a listing found (see
// openAt); a negative size is unknown.
func (o *Opener) openKnown(path string, known int64) (f *File, size int64, skip bool, err error) {
	i := strings.LastIndexByte(path, '/')
	if i <= 0 || i == len(path)-1 {
		return openAt(unix.AT_FDCWD, path, path, known)
	}
	dir := path[:i]
	o.mu.Lock()
	dirfd, ok := o.dirs[dir]
	o.mu.Unlock()
	if ok {
		return openAt(dirfd, path[i+1:], path, known)
	}
	for {
		dirfd, err = unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != unix.EINTR {
			break
		}
	}
	if err != nil {
		return open(path) // which says what is wrong with it
	}
	o.mu.Lock()
	kept := false
	if fd, ok := o.dirs[dir]; ok {
		// Another goroutine opened it meanwhile: use that one.
		unix.Close(dirfd)
		dirfd, kept = fd, true
	} else if len(o.dirs) < maxDirs {
		if o.dirs == nil {
			o.dirs = make(map[string]int)
		}
		o.dirs[dir] = dirfd
		kept = true
	}
	o.mu.Unlock()
	f, size, skip, err = openAt(dirfd, path[i+1:], path, known)
	if !kept {
		unix.Close(dirfd)
	}
	return f, size, skip, err
}

// Close closes the folders o holds.
func (o *Opener) Close() {
	o.mu.Lock()
	defer o.mu.Unlock()
	for d, fd := range o.dirs {
		unix.Close(fd)
		delete(o.dirs, d)
	}
}

// Read reads into b; io.EOF at the end.
func (f *File) Read(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	for {
		n, err := syscall.Read(f.fd, b)
		switch {
		case err == syscall.EINTR:
			continue
		case err != nil:
			return 0, &fs.PathError{Op: "read", Path: f.name, Err: err}
		case n == 0:
			return 0, io.EOF
		}
		return n, nil
	}
}

// ReadAt reads len(b) bytes at off (fewer at the end, with io.EOF).
func (f *File) ReadAt(b []byte, off int64) (int, error) {
	n := 0
	for n < len(b) {
		k, err := unix.Pread(f.fd, b[n:], off+int64(n))
		switch {
		case err == unix.EINTR:
			continue
		case err != nil:
			return n, &fs.PathError{Op: "read", Path: f.name, Err: err}
		case k == 0:
			return n, io.EOF
		}
		n += k
	}
	return n, nil
}

// Close closes the file.
func (f *File) Close() error { return syscall.Close(f.fd) }

// ResetFile starts reading f's first size bytes: what the file held when it
// was opened (an agent may be appending to it). Stopping there saves the
// read that would only find the end. The read starts at from's offset
// when the file is at least that long and its head is still the one from
// sums (see transcript.Cursor), else at the start. It returns the cursor
// the read starts from.
func (lr *LineReader) ResetFile(f *File, size int64, from transcript.Cursor) transcript.Cursor {
	if from.Offset > 0 && (from.Offset > size || from.Head == 0 || headSum(f, from.Offset) != from.Head) {
		from = transcript.Cursor{}
	}
	if from.Offset > 0 {
		if _, err := unix.Seek(f.fd, from.Offset, io.SeekStart); err != nil {
			from = transcript.Cursor{}
		}
	}
	n := size - from.Offset
	if n <= 0 && from.Offset == 0 {
		n = 1 // a folder or an empty file: let the read report it
	}
	lr.lim = io.LimitedReader{R: f, N: n}
	if from.Offset > 0 {
		lr.Reset(&lr.lim)
		lr.file, lr.from, lr.ctx = f, from.Offset, from.Context
		return from
	}
	if lr.tee.head == nil {
		lr.tee.head = make([]byte, 0, transcript.HeadSize)
	}
	lr.tee.r, lr.tee.head = &lr.lim, lr.tee.head[:0]
	lr.Reset(&lr.tee)
	return from
}

// Stopped is where the read of f from from (what ResetFile returned)
// stopped: the end of its last complete line, f's head, the reader's
// context. It is called before the reader is reset.
func (lr *LineReader) Stopped(f *File, from transcript.Cursor) transcript.Cursor {
	c := transcript.Cursor{Offset: from.Offset + lr.done, Head: from.Head, Context: lr.ctx}
	if from.Offset < transcript.HeadSize && c.Offset > from.Offset {
		// The head summed grows up to HeadSize bytes.
		if k := min(c.Offset, transcript.HeadSize); from.Offset == 0 && int64(len(lr.tee.head)) >= k {
			c.Head = transcript.HeadSum(lr.tee.head[:k])
		} else {
			c.Head = headSum(f, c.Offset)
		}
	}
	return c
}

// headSum sums f's first min(n, transcript.HeadSize) bytes (0 when they
// cannot be read).
func headSum(f *File, n int64) uint64 {
	var buf [transcript.HeadSize]byte
	b := buf[:min(n, transcript.HeadSize)]
	if k, _ := f.ReadAt(b, 0); k < len(b) {
		return 0
	}
	return transcript.HeadSum(b)
}

// KeySet is a set of prompt keys, held as 128-bit hashes (two 64-bit
// maphash sums with independent random seeds): a map of them holds no
// pointer for the garbage collector to follow at every cycle, however many
// keys a scan sees (one a prompt); two keys share a hash with a negligible
// chance, and no input can aim at one. The zero KeySet is empty.
type KeySet struct {
	m map[[2]uint64]struct{}
}

var keySeeds = [2]maphash.Seed{maphash.MakeSeed(), maphash.MakeSeed()}

// Add adds key and reports whether it was not in the set.
func (s *KeySet) Add(key string) bool {
	h := [2]uint64{maphash.String(keySeeds[0], key), maphash.String(keySeeds[1], key)}
	if s.m == nil {
		s.m = make(map[[2]uint64]struct{})
	}
	// One map operation, not a lookup and then an insert: the set is
	// large and each look at it misses the cache.
	n := len(s.m)
	s.m[h] = struct{}{}
	return len(s.m) > n
}

// Dedup passes each prompt to emit once per Key; prompts without a key
// always pass.
type Dedup struct {
	seen KeySet
	emit func(transcript.Prompt) error
	n    int
}

// NewDedup returns a Dedup passing prompts to emit.
func NewDedup(emit func(transcript.Prompt) error) *Dedup {
	return &Dedup{emit: emit}
}

// Count returns the number of prompts passed to emit.
func (d *Dedup) Count() int { return d.n }

// Add passes p to emit unless a prompt with its Key was passed before, and
// returns emit's error.
func (d *Dedup) Add(p transcript.Prompt) error {
	if p.Key != "" && !d.seen.Add(p.Key) {
		return nil
	}
	if err := d.emit(p); err != nil {
		return err
	}
	d.n++
	return nil
}

// ScanFunc reads one transcript from lr (name is for errors) and passes its
// prompts to add, stopping at the first error add returns. Its stats do not
// count prompts.
type ScanFunc func(lr *LineReader, name string, add func(transcript.Prompt) error) (transcript.Stats, error)

// maxWorkers bounds the files read at the same time; batchFiles files are
// handed to a worker at a time.
const (
	maxWorkers = 4
	batchFiles = 16
)

// ScanPaths reads the files in order and passes their prompts, deduplicated
// by Key, to emit, in file order and on the calling goroutine. sizes, when
// not nil, holds each file's size as a listing found it (see openKnown):
// a file is read up to that size. With more
// than one CPU, the next files are read ahead by other goroutines (each
// file's prompts are held until their turn). It stops at the first error
// (an I/O error of a file, or one emit returns), and adds what it saw to
// st. With res not nil, a file is read from the cursor res.From gives
// (see LineReader.ResetFile), and res.Reached is told where each read
// stopped.
func ScanPaths(paths []string, sizes []int64, res transcript.Resumer, scan ScanFunc, emit func(transcript.Prompt) error, st *transcript.Stats) error {
	sizeOf := func(i int) int64 {
		if sizes == nil {
			return -1
		}
		return sizes[i]
	}
	// scanFile reads the opened file f.
	scanFile := func(lr *LineReader, f *File, size int64, path string, add func(transcript.Prompt) error) (transcript.Stats, transcript.Cursor, error) {
		var from transcript.Cursor
		if res != nil {
			from = res.From(path)
		}
		from = lr.ResetFile(f, size, from)
		fst, err := scan(lr, path, add)
		var c transcript.Cursor
		if res != nil && err == nil {
			c = lr.Stopped(f, from)
		}
		lr.file = nil
		return fst, c, err
	}
	d := NewDedup(emit)
	defer func() { st.Prompts += d.n }()
	workers := min(runtime.GOMAXPROCS(0), maxWorkers, (len(paths)+batchFiles-1)/batchFiles)
	if workers < 2 {
		lr := NewLineReader(nil, readBufSize)
		var op Opener
		defer op.Close()
		for i, path := range paths {
			f, size, skip, err := op.openKnown(path, sizeOf(i))
			if err != nil {
				return err
			}
			if skip {
				st.Skipped++
				continue
			}
			fst, c, err := scanFile(lr, f, size, path, d.Add)
			f.Close()
			st.Add(fst)
			if err != nil {
				return err
			}
			if res != nil {
				res.Reached(path, c)
			}
		}
		return nil
	}

	type result struct {
		path    string
		prompts []transcript.Prompt
		st      transcript.Stats
		cursor  transcript.Cursor
		read    bool // the file was read, to cursor
		err     error
	}
	// A batch of files at a time, to hand work over in bigger pieces.
	type file struct {
		path string
		size int64
	}
	var batches [][]file
	for i := 0; i < len(paths); i += batchFiles {
		batch := make([]file, 0, min(batchFiles, len(paths)-i))
		for j := i; j < i+cap(batch); j++ {
			batch = append(batch, file{paths[j], sizeOf(j)})
		}
		batches = append(batches, batch)
	}
	type state struct {
		lr *LineReader
	}
	var op Opener // shared: each folder is opened once
	defer op.Close()
	read := func(w *state, batch []file) []result {
		rs := make([]result, 0, len(batch))
		for _, file := range batch {
			path := file.path
			r := result{path: path}
			f, size, skip, err := op.openKnown(path, file.size)
			switch {
			case err != nil:
				r.err = err
			case skip:
				r.st.Skipped = 1
			default:
				r.st, r.cursor, r.err = scanFile(w.lr, f, size, path, func(p transcript.Prompt) error {
					r.prompts = append(r.prompts, p)
					return nil
				})
				r.read = r.err == nil
				f.Close()
			}
			rs = append(rs, r)
			if r.err != nil {
				break // the scan stops there
			}
		}
		return rs
	}
	newState := func() *state { return &state{lr: NewLineReader(nil, readBufSize)} }
	return Map(batches, workers, newState, read, func(rs []result) error {
		for _, r := range rs {
			st.Add(r.st)
			for _, p := range r.prompts {
				if err := d.Add(p); err != nil {
					return err
				}
			}
			if r.err != nil {
				return r.err
			}
			if res != nil && r.read {
				res.Reached(r.path, r.cursor)
			}
		}
		return nil
	})
}

// ReadError is a read error that Lines met; errors from its fn are
// returned as they are.
type ReadError struct{ Err error }

func (e *ReadError) Error() string { return e.Err.Error() }
func (e *ReadError) Unwrap() error { return e.Err }

// Lines reads r line by line through a buffer of StreamBufSize and calls
// fn with each line that holds more than white space, and its index among
// all of r's lines, until r ends or fn returns an error. It returns the
// bytes read, and fn's error or a read error as a *ReadError.
func Lines(r io.Reader, fn func(i int, line []byte) error) (int64, error) {
	lr := NewLineReader(r, StreamBufSize)
	for i := 0; ; i++ {
		line, err := lr.Next()
		if err == io.EOF {
			return lr.Bytes(), nil
		}
		if err != nil {
			return lr.Bytes(), &ReadError{err}
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		if err := fn(i, line); err != nil {
			return lr.Bytes(), err
		}
	}
}
