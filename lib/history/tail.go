package history

import (
	"bytes"
	"cmp"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"hist/lib/record"
	"hist/lib/store"
)

const (
	// firstBlock is the first read of each file: its last prompts are
	// all that a first screen needs. Later reads grow to the file's
	// limit (see blockLimit).
	firstBlock = 4 << 10
	// maxLine is the longest line a tail keeps; a longer one (a
	// zero-filled region left by a crash, say) is skipped and counted
	// as malformed, without being held in memory whole.
	maxLine = 64 << 20
)

// blockLimit is the largest block read from each of n files at once: the
// blocks of all files hold about 16 MB together, 16 to 256 KB each.
func blockLimit(n int) int { return min(256<<10, max(16<<10, (16<<20)/max(n, 1))) }

// errReplaced is a file that was replaced (a rewrite renamed another file
// over it) or truncated while it was read: what is left of it is not
// read, and the caller reads the store again (it wraps fs.ErrNotExist, as
// a file that vanished does).
var errReplaced = fmt.Errorf("%w: replaced while it was read", fs.ErrNotExist)

// A tail reads the records of one store file newest first: backwards
// from its end a block at a time when its lines are in time order
// (inOrder), else through an index of its lines in time order
// (docs/hist-pick.md, "How it works").
//
// The file is open only while a block is read: a stream over hundreds of
// files would otherwise hold hundreds of descriptors, and a process that
// crosses 64 or 256 open files while it has several threads waits for the
// kernel to grow its file table. Each reopen must find the same file, at
// least as long as it was: only the size it had when first opened is read.
type tail struct {
	path  string
	file  int          // its index in the stream's files (ties go to the later file)
	id    os.FileInfo  // the file as first opened
	size  int64        // its size then
	limit int          // the largest block
	block int          // the next block's size
	pos   int64        // the file offset of buf[0]
	buf   []byte       // file bytes [pos, pos+len(buf))
	end   int          // buf[:end] holds the lines still to read, less the newline that ends the last
	done  bool         // buf[:end] is all that is left
	refs  []lineRef    // an indexed file's records, by time; read from the last
	view  record.View  // the current record
	st    record.Stats // what was read so far
	open  *os.File     // the file while openTail reads it
}

// lineRef is where a record is in its file.
type lineRef struct {
	ts  int64
	off int64
	n   int
}

// inOrder reports whether f's lines are in time order by the way it is
// written: a capture file (or what a rewrite left of one) is appended by
// one process as its prompts come; seed, import and compact files and
// history-global.jsonl are written in transcript or merge order.
func inOrder(f store.File) bool {
	k := f.Kind
	if k == store.Carry || k == store.Claim {
		k = store.Classify(store.Origin(filepath.Base(f.Path)))
	}
	switch k {
	case store.Seed, store.Import, store.Compact, store.GlobalFile:
		return false
	}
	return true
}

// openTail opens the store file f, the i-th of n, to be read newest
// first, and reads its first block (or indexes it); the tail is of no use
// with an error.
func openTail(f store.File, i, n int) (*tail, error) {
	fh, err := store.Open(f.Path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	fi, err := fh.Stat()
	if err != nil {
		return nil, err
	}
	t := &tail{path: f.Path, file: i, id: fi, size: fi.Size(), limit: blockLimit(n), pos: fi.Size(), open: fh}
	defer func() { t.open = nil }()
	t.block = min(firstBlock, t.limit)
	switch {
	case t.size == 0:
		t.done = true
	case !inOrder(f) || t.size <= int64(t.limit):
		err = t.index(fh)
	default:
		err = t.dropTorn()
	}
	return t, err
}

// index reads the file from its start and keeps where its records are,
// sorted by time (of equal times, in file order).
func (t *tail) index(f *os.File) error {
	st, err := record.Scan(io.NewSectionReader(f, 0, t.size), func(l *record.Line) error {
		t.refs = append(t.refs, lineRef{ts: l.TS, off: l.Offset, n: len(l.Raw)})
		return nil
	})
	if err != nil {
		return err
	}
	slices.SortStableFunc(t.refs, func(a, b lineRef) int { return cmp.Compare(a.ts, b.ts) })
	t.st, t.done = st, t.refs == nil
	return nil
}

// readAt reads len(b) bytes at off from the file, if it is still the one
// first opened, at least as long as it was.
func (t *tail) readAt(b []byte, off int64) error {
	replaced := &fs.PathError{Op: "read", Path: t.path, Err: errReplaced}
	f := t.open
	if f == nil {
		var err error
		if f, err = store.Open(t.path); err != nil {
			return err
		}
		defer f.Close()
		fi, err := f.Stat()
		if err != nil {
			return err
		}
		if !os.SameFile(fi, t.id) || fi.Size() < t.size {
			return replaced
		}
	}
	_, err := f.ReadAt(b, off)
	if err == io.EOF { // truncated since it was opened
		return replaced
	}
	return err
}

// fill reads the block before buf, keeping buf[:end] after it. A line
// longer than a block makes the next read as long as what is kept, so a
// long line is read in linear time.
func (t *tail) fill() error {
	n := min(int64(max(t.block, t.end)), t.pos)
	t.block = min(4*t.block, t.limit)
	nb := make([]byte, int(n)+t.end)
	copy(nb[n:], t.buf[:t.end])
	if err := t.readAt(nb[:n], t.pos-n); err != nil {
		return err
	}
	t.pos -= n
	t.buf, t.end = nb, len(nb)
	return nil
}

// dropTorn drops what follows the file's last newline: a line a writer
// is still finishing, counted as malformed.
func (t *tail) dropTorn() error {
	line, long, _, err := t.cut()
	if long || len(line) > 0 {
		t.st.Malformed++
	}
	return err
}

// cut cuts the last line off buf[:end] and returns it without its
// newline, reading the blocks before it as needed; ok is false at the
// start of the file. A line longer than maxLine is dropped as it is read,
// without being held in memory whole: its start is returned with long
// set. The bytes are valid until the next call.
func (t *tail) cut() (line []byte, long, ok bool, err error) {
	for !t.done {
		if i := bytes.LastIndexByte(t.buf[:t.end], '\n'); i >= 0 {
			line, t.end = t.buf[i+1:t.end], i
			return line, long, true, nil
		}
		if t.pos == 0 {
			line, t.end, t.done = t.buf[:t.end], 0, true
			return line, long, true, nil
		}
		if t.end > maxLine {
			long, t.buf, t.end = true, nil, 0
		}
		if err := t.fill(); err != nil {
			return nil, false, false, err
		}
	}
	return nil, false, false, nil
}

// line returns the bytes of the record at ref, valid until the next call.
// The block read ends at the record's end: in a file a little out of
// order, the records that follow in time order are mostly just before it.
func (t *tail) line(ref lineRef) ([]byte, error) {
	end := ref.off + int64(ref.n)
	if ref.off < t.pos || end > t.pos+int64(len(t.buf)) {
		start := min(ref.off, max(0, end-int64(t.limit)))
		t.buf = make([]byte, end-start)
		if err := t.readAt(t.buf, start); err != nil {
			t.buf = nil
			return nil, err
		}
		t.pos = start
	}
	return t.buf[ref.off-t.pos : end-t.pos], nil
}

// next moves t to its next record, newest first: false when the file is
// done or fails (with the error).
func (t *tail) next() (bool, error) {
	if t.refs != nil {
		for len(t.refs) > 0 {
			ref := t.refs[len(t.refs)-1]
			t.refs = t.refs[:len(t.refs)-1]
			line, err := t.line(ref)
			if err != nil {
				return false, err
			}
			if record.ParseView(line, &t.view) == nil { // it was when indexed
				return true, nil
			}
		}
		t.buf = nil
		return false, nil
	}
	for {
		line, long, ok, err := t.cut()
		if err != nil {
			t.buf = nil
			return false, err
		}
		if !ok {
			t.buf, t.st.Bytes = nil, t.size
			return false, nil
		}
		if long {
			t.st.Malformed++
			continue
		}
		t.st.Lines++
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		if record.ParseView(line, &t.view) != nil {
			t.st.Malformed++
			continue
		}
		t.st.Records++
		return true, nil
	}
}
