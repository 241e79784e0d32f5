// Package filescan lists and reads transcript files: a line reader that
// holds at most one line in memory whatever the input, opens that never
// block on a FIFO, and ScanPaths, which reads files one after the other
// and hands their prompts over deduplicated. What a line holds is package
// jsonscan's business.
package filescan

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"hist/lib/transcript"
)

// Read buffers: lines that fit are handled in place, without a copy.
// ScanPaths reads many files, Lines one stream.
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
	skip func(prefix []byte) bool
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
	lr.n = 0
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
		case nil, io.EOF:
			return nil
		default:
			return err
		}
	}
}

// Bytes returns the number of bytes consumed since the reader was made or
// reset, line endings included.
func (lr *LineReader) Bytes() int64 { return lr.n }

func trimEOL(b []byte) []byte {
	if b, ok := bytes.CutSuffix(b, []byte("\n")); ok {
		return bytes.TrimSuffix(b, []byte("\r"))
	}
	return b
}

// Open opens path for reading without blocking on a FIFO that replaced it
// after a listing. f is nil when there is nothing to read: path is missing
// (fi is nil too), or is neither a regular file nor a folder (whose read
// fails, which reports it). An error is a *transcript.ReadError.
func Open(path string) (f *os.File, fi fs.FileInfo, err error) {
	f, err = os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	if err == nil {
		fi, err = f.Stat()
	}
	if err != nil {
		if f != nil {
			f.Close()
		}
		return nil, nil, &transcript.ReadError{Path: path, Err: err}
	}
	if !fi.Mode().IsRegular() && !fi.IsDir() {
		f.Close()
		return nil, fi, nil
	}
	return f, fi, nil
}

// OpenRecall is Open for a prompt-recall file, which is read whole: what
// is not a regular file is passed over and counted in st.Skipped.
func OpenRecall(path string, st *transcript.Stats) (*os.File, fs.FileInfo, error) {
	f, fi, err := Open(path)
	if f != nil && fi.IsDir() {
		f.Close()
		f = nil
	}
	if f == nil && fi != nil {
		st.Skipped++
	}
	return f, fi, err
}

// Upto reads f's first size bytes: what the file held when it was opened
// (an agent may be appending to it). A folder or an empty file is read
// for one byte, so that a folder's read fails.
func Upto(f *os.File, size int64) io.Reader {
	return io.LimitReader(f, max(size, 1))
}

// Dedup passes each prompt to Emit once per Key (prompts without a key
// always pass), and counts in N the prompts passed.
type Dedup struct {
	Emit func(transcript.Prompt) error
	N    int
	seen map[string]bool
}

// Add passes p to Emit unless a prompt with its Key was passed before, and
// returns Emit's error.
func (d *Dedup) Add(p transcript.Prompt) error {
	if p.Key != "" {
		if d.seen[p.Key] {
			return nil
		}
		if d.seen == nil {
			d.seen = map[string]bool{}
		}
		d.seen[p.Key] = true
	}
	if err := d.Emit(p); err != nil {
		return err
	}
	d.N++
	return nil
}

// Kept reports whether keep (nil keeps all) keeps path; a file that
// cannot be stat'ed is kept (reading it reports why).
func Kept(path string, keep transcript.Keep) bool {
	if keep == nil {
		return true
	}
	fi, err := os.Stat(path)
	return err != nil || keep(path, fi)
}

// ScanFunc reads one transcript from lr (name is for errors) and passes its
// prompts to add, stopping at the first error add returns. Its stats do not
// count prompts.
type ScanFunc func(lr *LineReader, name string, add func(transcript.Prompt) error) (transcript.Stats, error)

// File is a transcript file to read, and its modification time (Unix
// nanoseconds).
type File struct {
	Path  string
	MTime int64
}

// List returns the *.jsonl files under root (or root itself when it is
// not a folder) that keep keeps (nil keeps all), and counts what it
// passes over in st: files that are not regular (FIFOs, sockets, symlinks
// to anything but a regular file) in Skipped. pass, when not nil, is
// asked first about every entry below root: the ones it says yes to are
// passed over (a folder with all it holds), and counted by pass. A missing
// root yields nothing. Folders named like a transcript are listed too, so
// that reading them reports the error.
func List(root string, keep transcript.Keep, st *transcript.Stats, pass func(path string, d fs.DirEntry) bool) ([]File, error) {
	info, err := os.Stat(root)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, &transcript.ReadError{Path: root, Err: err}
	}
	if !info.IsDir() {
		if keep != nil && !keep(root, info) {
			return nil, nil
		}
		return []File{{root, info.ModTime().UnixNano()}}, nil
	}
	walkRoot := root
	if li, err := os.Lstat(root); err == nil && li.Mode()&fs.ModeSymlink != 0 {
		if walkRoot, err = filepath.EvalSymlinks(root); err != nil {
			return nil, &transcript.ReadError{Path: root, Err: err}
		}
	}
	var files []File
	err = filepath.WalkDir(walkRoot, func(path string, d fs.DirEntry, err error) error {
		switch {
		case err != nil && errors.Is(err, fs.ErrNotExist) && path != walkRoot:
			return nil // removed while we walked
		case err != nil:
			return &transcript.ReadError{Path: path, Err: err}
		case path == walkRoot:
			return nil
		case pass != nil && pass(path, d):
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		case !strings.HasSuffix(d.Name(), ".jsonl"):
			return nil
		}
		var fi fs.FileInfo
		switch t := d.Type(); {
		case t.IsDir(), t.IsRegular():
			fi, err = d.Info()
		case t&fs.ModeSymlink != 0:
			if fi, err = os.Stat(path); err != nil || !fi.Mode().IsRegular() {
				st.Skipped++ // dangling, or not to a regular file
				return nil
			}
		default:
			st.Skipped++ // a FIFO, socket or device: reading could block
			return nil
		}
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return nil // removed while we walked
		case err != nil:
			return &transcript.ReadError{Path: path, Err: err}
		case keep == nil || keep(path, fi):
			files = append(files, File{path, fi.ModTime().UnixNano()})
		}
		if d.IsDir() {
			return fs.SkipDir
		}
		return nil
	})
	return files, err
}

// ScanPaths reads the files in order, each up to the size it had when it
// was opened, and passes their prompts, deduplicated by Key and with
// their File set, to emit. It
// stops at the first error (an I/O error of a file, or one emit returns),
// and adds what it saw to st.
func ScanPaths(files []File, scan ScanFunc, emit func(transcript.Prompt) error, st *transcript.Stats) error {
	d := &Dedup{Emit: emit}
	defer func() { st.Prompts += d.N }()
	lr := NewLineReader(nil, readBufSize)
	for _, file := range files {
		path := file.Path
		f, fi, err := Open(path)
		if err != nil {
			return err
		}
		if f == nil {
			st.Skipped++ // gone since the listing, or no longer a file
			continue
		}
		lr.Reset(Upto(f, fi.Size()))
		fst, err := scan(lr, path, func(p transcript.Prompt) error {
			p.File = path
			return d.Add(p)
		})
		f.Close()
		st.Add(fst)
		if err != nil {
			return err
		}
	}
	return nil
}

// Lines reads r line by line and calls fn with each line that holds more
// than white space, and its index among all of r's lines, until r ends or
// fn returns an error, which it returns. It adds the bytes read to st, and
// returns a read error as a *transcript.ReadError for name.
func Lines(r io.Reader, name string, st *transcript.Stats, fn func(i int, line []byte) error) error {
	lr := NewLineReader(r, StreamBufSize)
	defer func() { st.Bytes += lr.Bytes() }()
	for i := 0; ; i++ {
		line, err := lr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return &transcript.ReadError{Path: name, Err: err}
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		if err := fn(i, line); err != nil {
			return err
		}
	}
}
