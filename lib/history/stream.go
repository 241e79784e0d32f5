package history

import (
	"bytes"
	"container/heap"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"io/fs"
	"sync"
	"syscall"
	"unsafe"

	"hist/lib/identity"
	"hist/lib/record"
	"hist/lib/store"
	"hist/lib/tombstone"
)

// StreamResult is what Stream saw.
type StreamResult struct {
	Stats  record.Stats
	Failed []FileError // files that could not be read (or not to the end)
	Hidden int         // prompts hidden by a tombstone (each counted once)
	Sent   int         // prompts handed to the callback
	// Unordered counts lines that were newer than the line after them in
	// their file. Stream's order is newest first only across files whose
	// lines are in time order; such a line is sent where its file put it.
	Unordered int
	Stopped   bool // the callback asked to stop
}

// Stream sends the visible prompts of files to fn as it reads them,
// newest first, each prompt once, none that hidden hides (hidden may be
// nil). It does not read everything first: every file is read backwards
// from its end, a block at a time, and the files are merged on the lines'
// timestamps, so the first prompts arrive after a few kilobytes of each
// file, however large the scope.
//
// The order is exact when each file's lines are in time order (capture
// files are: they are appended live). A file whose lines are not (a merge
// of older files, an import) still has each prompt sent once, at the first
// copy met; Read, which reads everything before it sorts, is the exact
// reference. fn returning false stops the stream. Entry strings stay valid
// after fn returns.
//
// A prompt is sent at its first copy met, the newest. When an older copy
// met later is richer (see the package comment: a project, a session),
// fn is called again for it with Entry.Richer set and Entry.N naming the
// prompt: its provenance replaces the one sent, so the list ends with the
// provenance Read gives.
//
// Each file is read up to the size it had when it was opened: lines
// appended later are not read, and a last line with no newline yet (a
// writer still finishing it) is skipped and counted as malformed, as Read
// does.
func Stream(files []store.File, hidden *tombstone.Set, fn func(Entry) bool) *StreamResult {
	s := &streamer{
		res:   &StreamResult{},
		files: files,
		seen:  make(map[key]sent),
		seed1: maphash.MakeSeed(),
		seed2: maphash.MakeSeed(),
		provs: make(map[prov]prov),
		fn:    fn,
	}
	if hidden != nil && !hidden.Empty() {
		s.hidden = hidden
	}
	h := s.heads()
	heap.Init(&h)
	for len(h) > 0 {
		r := h[0]
		if !s.emit(r) {
			s.res.Stopped = true
			break
		}
		if s.advance(r) {
			heap.Fix(&h, 0)
		} else {
			heap.Pop(&h)
		}
	}
	for _, r := range h {
		r.close()
	}
	return s.res
}

// sent is a prompt Stream met: its place among the prompts sent (-1 when
// hidden) and the richness of the provenance sent.
type sent struct {
	n    int32
	rank int8
}

type streamer struct {
	res    *StreamResult
	files  []store.File
	hidden *tombstone.Set
	seen   map[key]sent
	seed1  maphash.Seed
	seed2  maphash.Seed
	norm   []byte
	arena  []byte
	provs  map[prov]prov
	fn     func(Entry) bool
}

// heads opens every file and reads its last record, a few files at a
// time (most of the time to the first prompt goes here).
func (s *streamer) heads() revHeap {
	type head struct {
		r   *rev
		ok  bool
		err error
		st  record.Stats
		un  int
	}
	out := make([]head, len(s.files))
	var wg sync.WaitGroup
	next := make(chan int)
	for range min(len(s.files), 8) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				r, err := openRev(s.files[i].Path, int32(i))
				if err != nil {
					out[i].err = err
					continue
				}
				// A streamer of its own for the counts.
				sub := &streamer{res: &StreamResult{}, files: s.files}
				out[i] = head{r: r, ok: sub.advance(r), st: sub.res.Stats, un: sub.res.Unordered}
				if len(sub.res.Failed) > 0 {
					out[i].err = sub.res.Failed[0].Err
				}
			}
		}()
	}
	for i := range s.files {
		next <- i
	}
	close(next)
	wg.Wait()
	var h revHeap
	for i, o := range out {
		s.res.Stats.Add(o.st)
		s.res.Unordered += o.un
		if o.err != nil {
			s.res.Failed = append(s.res.Failed, FileError{Path: s.files[i].Path, Err: o.err})
			continue
		}
		if o.ok {
			h = append(h, o.r)
		}
	}
	return h
}

// advance moves r to its previous record; false when r is done (it is
// then closed, and a read error recorded).
func (s *streamer) advance(r *rev) bool {
	for {
		line, ok, err := r.prev()
		s.res.Stats.Malformed += r.skipped
		r.skipped = 0
		if err != nil {
			s.res.Failed = append(s.res.Failed, FileError{Path: s.files[r.idx].Path, Err: err})
			r.close()
			return false
		}
		if !ok {
			s.res.Stats.Malformed += r.torn
			s.res.Stats.Bytes += r.size
			r.close()
			return false
		}
		s.res.Stats.Lines++
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		if record.ParseView(line, &r.view) != nil {
			s.res.Stats.Malformed++
			continue
		}
		s.res.Stats.Records++
		if r.started && r.view.TS > r.lastTS {
			s.res.Unordered++
		}
		r.started, r.lastTS = true, r.view.TS
		return true
	}
}

// emit sends r's current record unless its prompt was sent or is hidden;
// a record of a sent prompt richer than what was sent is sent as Richer.
func (s *streamer) emit(r *rev) bool {
	v := &r.view
	s.norm = identity.AppendNormalized(s.norm[:0], unsafe.String(unsafe.SliceData(v.Text), len(v.Text)))
	k := key{maphash.Bytes(s.seed1, s.norm), maphash.Bytes(s.seed2, s.norm)}
	f := s.files[r.idx]
	rk := rank(v.Src, v.Session, f.Project)
	if o, ok := s.seen[k]; ok {
		if o.n < 0 || rk <= o.rank {
			return true
		}
		s.seen[k] = sent{o.n, rk}
		p := s.prov(v.Src, v.Session)
		return s.fn(Entry{Src: p.src, Session: p.session, File: f.Path, Project: f.Project, N: int(o.n), Richer: true})
	}
	if s.hidden != nil && s.hidden.HiddenNormalized(s.norm) {
		s.seen[k] = sent{-1, 0}
		s.res.Hidden++
		return true
	}
	n := s.res.Sent
	s.seen[k] = sent{int32(n), rk}
	p := s.prov(v.Src, v.Session)
	s.res.Sent++
	return s.fn(Entry{Text: s.store(v.Text), TS: v.TS, Src: p.src, Session: p.session, File: f.Path, Project: f.Project, N: n})
}

func (s *streamer) prov(src, session []byte) prov {
	if len(src) == 0 && len(session) == 0 {
		return prov{}
	}
	if p, ok := s.provs[prov{string(src), string(session)}]; ok {
		return p
	}
	p := prov{string(src), string(session)}
	s.provs[p] = p
	return p
}

// store copies b into the arena (see reader.store).
func (s *streamer) store(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	if len(b) > chunk/4 {
		return string(b)
	}
	if cap(s.arena)-len(s.arena) < len(b) {
		s.arena = make([]byte, 0, chunk)
	}
	start := len(s.arena)
	s.arena = append(s.arena, b...)
	out := s.arena[start:len(s.arena):len(s.arena)]
	return unsafe.String(&out[0], len(out))
}

// rev reads a file's lines backwards, from its end. Its file is open only
// while a block is read: a stream over hundreds of files would otherwise
// hold hundreds of descriptors, and a process that crosses 64 or 256 open
// files while it has several threads waits for the kernel to grow its
// file table (an RCU grace period: 10-20 ms here, before the first prompt).
type rev struct {
	f        *rawFile // open while a block is read, else nil
	name     string
	dev, ino uint64 // the file opened first: a reopen must find it again
	idx      int32
	size     int64  // the file's size when opened: nothing past it is read
	pos      int64  // file offset of buf[0]
	buf      []byte // file bytes [pos, pos+len(buf)); lines end at or before end
	end      int    // buf[:end] holds what is still to be returned
	block    int    // next read size
	done     bool
	torn     int // 1 when the file ends in a line with no newline
	view     record.View
	started  bool
	lastTS   int64
	skipping bool // dropping an over-long line
	skipped  int  // over-long lines dropped (counted as malformed)
}

const (
	firstBlock = 4 << 10
	maxBlock   = 256 << 10
	// maxLine is the longest line Stream keeps; a longer one is skipped
	// and counted as malformed.
	maxLine = 64 << 20
)

func openRev(path string, idx int32) (*rev, error) {
	// Raw system calls: a store file is read with open, fstat and pread
	// only (an os.File would also register with the poller), which is most
	// of the cost of reaching the first prompt across hundreds of files.
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		syscall.Close(fd)
		return nil, &fs.PathError{Op: "stat", Path: path, Err: err}
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFREG {
		syscall.Close(fd)
		return nil, &fs.PathError{Op: "read", Path: path, Err: errors.New("not a regular file")}
	}
	f := &rawFile{fd: fd, path: path}
	size := st.Size
	r := &rev{f: f, name: path, idx: idx, size: size, pos: size, block: firstBlock, dev: uint64(st.Dev), ino: uint64(st.Ino)}
	defer r.closeFile() // fill reopens it when it needs more
	if r.size == 0 {
		r.done = true
		return r, nil
	}
	// Drop a torn last line: read until the last newline.
	if err := r.fill(); err != nil {
		return nil, err
	}
	for {
		if i := bytes.LastIndexByte(r.buf[:r.end], '\n'); i >= 0 {
			if i+1 < r.end {
				r.torn = 1
			}
			r.end = i // the last complete line ends here (its newline at buf[i])
			r.buf = r.buf[:i+1]
			return r, nil
		}
		if r.pos == 0 {
			r.torn = 1 // one line, no newline: all torn
			r.done = true
			return r, nil
		}
		if err := r.fill(); err != nil {
			return nil, err
		}
	}
}

// fill reads the block before buf, keeping buf[:end] after it.
func (r *rev) fill() error {
	n := int64(max(r.block, r.end)) // a long line doubles the buffer: linear, not quadratic
	if n > r.pos {
		n = r.pos
	}
	if r.block < maxBlock {
		r.block *= 4
	}
	if r.f == nil {
		if err := r.reopen(); err != nil {
			return err
		}
	}
	nb := make([]byte, int(n)+r.end)
	_, err := r.f.ReadAt(nb[:n], r.pos-n)
	r.closeFile()
	if err != nil && err != io.EOF {
		return err
	}
	copy(nb[n:], r.buf[:r.end])
	r.pos -= n
	r.buf = nb
	r.end = len(nb)
	return nil
}

// prev returns the line before the last one returned (without its
// newline), ok=false at the start of the file. The bytes stay valid until
// the next call.
func (r *rev) prev() (line []byte, ok bool, err error) {
	for !r.done {
		// buf[r.end] is the newline that ends the line to return (or
		// r.end == len(buf) after a fill, with that newline kept).
		if i := bytes.LastIndexByte(r.buf[:r.end], '\n'); i >= 0 {
			line = r.buf[i+1 : r.end]
			r.end = i
			if r.skipping { // the start of an over-long line
				r.skipping = false
				r.skipped++
				continue
			}
			return line, true, nil
		}
		if r.pos == 0 {
			line = r.buf[:r.end]
			r.done = true
			if r.skipping {
				r.skipping = false
				r.skipped++
				return nil, false, nil
			}
			return line, true, nil
		}
		if r.end > maxLine {
			// No record is this long (a zero-filled region left by a
			// crash, say): drop it and look for the line before it,
			// without holding it in memory.
			r.skipping = true
			r.end = 0
		}
		if err := r.fill(); err != nil {
			r.done = true
			return nil, false, err
		}
	}
	return nil, false, nil
}

// rawFile is an open store file.
type rawFile struct {
	fd   int
	path string
}

func (f *rawFile) ReadAt(b []byte, off int64) (int, error) {
	n := 0
	for n < len(b) {
		m, err := syscall.Pread(f.fd, b[n:], off+int64(n))
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return n, &fs.PathError{Op: "read", Path: f.path, Err: err}
		}
		if m == 0 {
			return n, io.EOF
		}
		n += m
	}
	return n, nil
}

func (f *rawFile) Close() error { return syscall.Close(f.fd) }

// errReplaced is a file that was replaced (a rewrite renamed another file
// over it) or truncated while it was streamed: what is left of it is not
// read, and the caller reads the store again (it wraps fs.ErrNotExist, as a
// file that vanished does).
var errReplaced = fmt.Errorf("%w: replaced while it was read", fs.ErrNotExist)

// reopen opens r's file again for the next block, if it is still the same
// file with at least the bytes it had.
func (r *rev) reopen() error {
	path := r.name
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		return &fs.PathError{Op: "open", Path: path, Err: err}
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		syscall.Close(fd)
		return &fs.PathError{Op: "stat", Path: path, Err: err}
	}
	if uint64(st.Dev) != r.dev || uint64(st.Ino) != r.ino || st.Size < r.pos {
		syscall.Close(fd)
		return &fs.PathError{Op: "read", Path: path, Err: errReplaced}
	}
	r.f = &rawFile{fd: fd, path: path}
	return nil
}

func (r *rev) closeFile() {
	if r.f != nil {
		r.f.Close()
		r.f = nil
	}
}

func (r *rev) close() {
	if r.f != nil {
		r.f.Close()
		r.f = nil
	}
}

type revHeap []*rev

func (h revHeap) Len() int { return len(h) }
func (h revHeap) Less(i, j int) bool {
	if h[i].view.TS != h[j].view.TS {
		return h[i].view.TS > h[j].view.TS
	}
	return h[i].idx > h[j].idx
}
func (h revHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *revHeap) Push(x any)   { *h = append(*h, x.(*rev)) }
func (h *revHeap) Pop() any {
	old := *h
	r := old[len(old)-1]
	*h = old[:len(old)-1]
	return r
}
