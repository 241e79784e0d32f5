package deletion

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"hist/lib/words"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"syscall"
	"time"
	"unsafe"

	"hist/lib/atomicfile"
	"hist/lib/identity"
	"hist/lib/record"
	"hist/lib/store"
	"hist/lib/tombstone"
)

// How a file is rewritten while captures may still append to it (they
// append by path, without a lock, with one O_APPEND write per record):
//
//  1. Open the file and keep that descriptor (the old inode) to the end.
//     Stream it; a file with no copy is left alone (same bytes, same mtime,
//     never opened for writing). At the first copy, a temp file is created
//     in the same folder and the lines before it are copied in.
//  2. Every other line is copied byte for byte: malformed lines, blank
//     lines, records of other prompts. Only complete lines are consumed; a
//     last line without its newline may be a write still landing, so it is
//     left for a later read.
//  3. Before the rename, the old file is read again from where step 2
//     stopped, for lines appended meanwhile. Then fsync, rename over the
//     path, fsync the folder (atomicfile.Pending.Commit).
//  4. After the rename, the old inode (still open) is read once more from
//     where step 3 stopped: lines that landed after step 3 (from a writer
//     that opened the old file before the rename) are appended to the new
//     file with one O_APPEND write (store.Append). If that fails they are
//     kept in a sibling "<name>.carry-<ms>-<rand>.jsonl", a store file of
//     the same scope.
//
// A writer whose record lands in the old inode after step 4 read it sees,
// after its write, that the path names another inode and appends the
// record again by path (store.Append). So every record reaches the new
// file: read by step 3 or 4 if it landed before step 4's read, appended
// again by its writer otherwise (a duplicate at worst, which readers drop).

// Test hooks, nil outside tests: called between steps 2 and 3, between
// step 3 and the rename, and between the rename and step 4.
var hookScanned, hookBeforeRename, hookAfterRename func(path string)

func hook(h func(string), path string) {
	if h != nil {
		h(path)
	}
}

// fileResult is what happened to one file.
type fileResult struct {
	path      string
	copies    int
	rewritten bool   // the file was replaced (or would be, dry run)
	carry     string // carry file written
	err       error

	vanished bool                // the file was gone when it was opened
	hits     map[string]int      // copies by normalized prompt (nil: none)
	sessions map[string]struct{} // the session ids the copies name
	swept    int                 // of copies: records the sweep set hid (not in hits)
}

// matcher says whether a line is a copy of one of the deleted prompts.
// One per worker; pf is shared.
type matcher struct {
	targets map[string]struct{}
	sorted  []string // the normalized prompts, sorted
	pf      *prefilter
	pfBuf   []byte
	view    record.View
	norm    []byte
	// only, when not nil, limits the copies to records naming one of
	// these sessions.
	only    map[string]struct{}
	session []byte // the session of the line last matched
	// sweep, when not nil, also matches the records it hides (other
	// machines' tombstones); swept says the last match was one of those.
	sweep *tombstone.Set
	swept bool
}

func newMatcher(targets map[string]struct{}, sorted []string, pf *prefilter) *matcher {
	return &matcher{targets: targets, sorted: sorted, pf: pf}
}

// match reports whether line (without its newline) is a copy of a deleted
// prompt. A line readers skip as malformed (a record without "ts", say) is
// still a copy when its "text" is the prompt: it is dropped too.
func (m *matcher) match(line []byte) bool {
	m.session, m.swept = nil, false
	if record.ParseView(line, &m.view) == nil {
		m.session = m.view.Session
		if m.only != nil {
			if _, ok := m.only[string(m.session)]; !ok {
				return false
			}
		}
		return m.matchText(m.view.Text)
	}
	if m.only != nil {
		return false // no session to check
	}
	if t := trimLeft(line); len(t) == 0 || t[0] != '{' {
		return false
	}
	var w struct {
		Text *string `json:"text"`
	}
	if json.Unmarshal(line, &w) == nil && w.Text != nil {
		return m.matchText([]byte(*w.Text))
	}
	return false
}

func (m *matcher) matchText(text []byte) bool {
	s := unsafe.String(unsafe.SliceData(text), len(text))
	if m.sweep == nil && !m.maybePrefix(s) {
		return false
	}
	m.norm = identity.AppendNormalized(m.norm[:0], s)
	if _, ok := m.targets[string(m.norm)]; ok {
		return true
	}
	m.swept = m.sweep != nil && m.sweep.HiddenNormalized(m.norm)
	return m.swept
}

func trimLeft(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t' || b[0] == '\r') {
		b = b[1:]
	}
	return b
}

// lineReader reads complete lines of a file from an offset, so a read can
// resume where the last one stopped.
type lineReader struct {
	f    *os.File
	br   *bufio.Reader
	pos  int64  // offset just past the last complete line returned
	long []byte // a line longer than the buffer
	tail []byte // the bytes after the last newline at the last EOF
}

const bufSize = 256 << 10

func newLineReader(f *os.File) *lineReader {
	r := &lineReader{f: f, br: bufio.NewReaderSize(nil, bufSize)}
	r.reset()
	return r
}

// reset makes the next read start at pos, seeing what was appended since.
func (r *lineReader) reset() {
	r.br.Reset(io.NewSectionReader(r.f, r.pos, math.MaxInt64-r.pos))
	r.tail = r.tail[:0]
}

// next returns the next complete line, its newline included, valid until
// the next call; nil at the end of the file, where tail holds a last line
// that has no newline (yet).
func (r *lineReader) next() ([]byte, error) {
	line, err := r.br.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		r.long = append(r.long[:0], line...)
		for err == bufio.ErrBufferFull {
			line, err = r.br.ReadSlice('\n')
			r.long = append(r.long, line...)
		}
		line = r.long
	}
	switch err {
	case nil:
		r.pos += int64(len(line))
		return line, nil
	case io.EOF:
		r.tail = append(r.tail[:0], line...)
		return nil, nil
	}
	return nil, err
}

// tornRetries and tornDelay bound how long step 4 waits for a last line
// without a newline to be completed by a write in flight; after that it is
// a torn line from a writer that died, and it is kept as it is.
const (
	tornRetries = 100
	tornDelay   = time.Millisecond
)

// rewriteFile removes the copies of m's prompts from the file at path.
func rewriteFile(path string, m *matcher, dry bool) (fr fileResult) {
	fr.path = path
	f, err := store.Open(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			fr.vanished = true
			return fr // gone since the listing: nothing to remove
		}
		fr.err = err
		return fr
	}
	defer f.Close()

	if m.pf != nil {
		var may bool
		may, m.pfBuf, err = m.pf.mayHold(f, m.pfBuf)
		if err != nil {
			fr.err = fmt.Errorf("reading: %w", err)
			return fr
		}
		if !may {
			return fr // no copy: not even parsed
		}
	}
	var hits map[string]int
	var sessions map[string]struct{}
	swept := 0
	drop := func(line []byte) ([]byte, bool) {
		if !m.match(line) {
			return nil, false
		}
		if m.swept {
			swept++
			return nil, true
		}
		if hits == nil {
			hits, sessions = map[string]int{}, map[string]struct{}{}
		}
		hits[string(m.norm)]++
		if len(m.session) > 0 {
			sessions[string(m.session)] = struct{}{}
		}
		return nil, true
	}
	fr = editOpen(path, f, drop, dry)
	fr.hits, fr.sessions, fr.swept = hits, sessions, swept
	return fr
}

// EditFunc decides the fate of one complete line of a store file (given
// without its newline): changed false keeps it byte for byte; changed true
// replaces it with out (which must end with its own newline), or drops it
// when out is empty. It is called again for lines appended during the
// rewrite, so it must be deterministic.
type EditFunc func(line []byte) (out []byte, changed bool)

// EditResult is what EditFile did to one file.
type EditResult struct {
	Changed   int    // lines replaced or dropped (or that would be, dry run)
	Rewritten bool   // the file was replaced (or would be, dry run)
	Carry     string // carry file written for late lines that could not be put back
	Err       error
}

// EditFile rewrites the store file at path with edit applied to every
// complete line, under the same rules as a delete's rewrites (see the top
// of this file): a file where edit changes nothing is left alone (same
// bytes, same mtime); otherwise a temp file in the same folder is
// fsynced and renamed over it, the folder fsynced, and lines appended by
// captures meanwhile are carried over (edited too). The caller holds the
// rewriters' lock (store.Lock). A missing file is not an error.
func EditFile(path string, edit EditFunc, dry bool) EditResult {
	f, err := store.Open(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return EditResult{}
		}
		return EditResult{Err: err}
	}
	defer f.Close()
	fr := editOpen(path, f, edit, dry)
	return EditResult{Changed: fr.copies, Rewritten: fr.rewritten, Carry: fr.carry, Err: fr.err}
}

// editOpen rewrites the file at path, open as f, with edit applied to
// every complete line (steps 1 to 4 above). fr.copies counts the lines
// edit changed.
func editOpen(path string, f *os.File, edit EditFunc, dry bool) (fr fileResult) {
	fr.path = path
	var old syscall.Stat_t
	if err := syscall.Fstat(int(f.Fd()), &old); err != nil {
		fr.err = err
		return fr
	}

	// Steps 1 and 2.
	r := newLineReader(f)
	var p *atomicfile.Pending
	var w *bufio.Writer
	defer func() {
		if p != nil {
			p.Cleanup() // a no-op after a commit
		}
	}()
	for {
		line, err := r.next()
		if err != nil {
			fr.err = fmt.Errorf("reading: %w", err)
			return fr
		}
		if line == nil {
			break
		}
		out, changed := edit(line[:len(line)-1])
		if !changed {
			if w != nil {
				w.Write(line) // a write error sticks and surfaces at Flush
			}
			continue
		}
		fr.copies++
		if p != nil || fr.err != nil {
			if w != nil {
				w.Write(out)
			}
			continue
		}
		if fi, err := os.Lstat(path); err == nil && fi.Mode()&os.ModeSymlink != 0 {
			// Renaming over the link would leave the old lines in its target.
			fr.err = errors.New("a symbolic link: not rewritten (its target keeps the copies); replace it with the file it points to")
			continue
		}
		if dry {
			continue
		}
		var err2 error
		if p, err2 = atomicfile.Create(path); err2 != nil {
			p = nil
			fr.err = fmt.Errorf("creating a temp file: %w", err2)
			return fr
		}
		w = bufio.NewWriterSize(p.File, bufSize)
		start := r.pos - int64(len(line))
		if _, err := io.Copy(w, io.NewSectionReader(f, 0, start)); err != nil {
			fr.err = fmt.Errorf("copying: %w", err)
			return fr
		}
		w.Write(out)
	}
	if fr.copies == 0 || fr.err != nil {
		return fr
	}
	if dry {
		fr.rewritten = true
		return fr
	}

	// Step 3.
	hook(hookScanned, path)
	r.reset()
	if err := r.copyEdited(edit, w, &fr.copies); err != nil {
		fr.err = fmt.Errorf("reading: %w", err)
		return fr
	}
	if err := w.Flush(); err != nil {
		fr.err = fmt.Errorf("writing the new file: %w", err)
		return fr
	}
	hook(hookBeforeRename, path)
	var now syscall.Stat_t
	if err := syscall.Stat(path, &now); err != nil || now.Dev != old.Dev || now.Ino != old.Ino {
		fr.err = errors.New("replaced by another program while being rewritten: left as it is")
		return fr
	}
	if err := p.Commit(); err != nil {
		if syscall.Stat(path, &now) != nil || now.Ino == old.Ino && now.Dev == old.Dev {
			fr.err = fmt.Errorf("replacing it: %w", err)
			return fr
		}
		// Renamed; only the folder fsync failed. The new file is in place.
	}
	fr.rewritten = true
	hook(hookAfterRename, path)

	// Step 4.
	var late []byte
	lw := &sliceWriter{&late}
	for attempt := 0; ; attempt++ {
		r.reset()
		if err := r.copyEdited(edit, lw, &fr.copies); err != nil {
			// The old inode is unreadable now: lines appended after step 3
			// are still put back by their writers (they see the rename).
			fr.err = fmt.Errorf("reading lines appended during the rewrite: %w", err)
			break
		}
		if len(r.tail) == 0 || attempt == tornRetries {
			late = append(late, r.tail...) // a torn line stays as it was
			break
		}
		time.Sleep(tornDelay)
	}
	if len(late) > 0 {
		fr.carry, fr.err = putBack(path, late, fr.err)
	}
	return fr
}

// copyEdited copies the complete lines from pos on to w, edited (changed
// lines counted in n).
func (r *lineReader) copyEdited(edit EditFunc, w io.Writer, n *int) error {
	for {
		line, err := r.next()
		if err != nil || line == nil {
			return err
		}
		out, changed := edit(line[:len(line)-1])
		if changed {
			*n++
			w.Write(out)
			continue
		}
		w.Write(line)
	}
}

type sliceWriter struct{ b *[]byte }

func (s *sliceWriter) Write(p []byte) (int, error) {
	*s.b = append(*s.b, p...)
	return len(p), nil
}

// putBack appends lines that reached the old file after the rename to the
// new file, or else keeps them in a carry file beside it.
func putBack(path string, late []byte, prev error) (carry string, err error) {
	appendErr := store.Append(path, late)
	if appendErr == nil {
		return "", prev
	}
	dir, base := filepath.Split(path)
	for range 10 {
		name := filepath.Join(dir, store.CarryFile(base, time.Now().UnixMilli()))
		err := writeNew(name, late)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err == nil {
			return name, prev
		}
		return "", errors.Join(prev, fmt.Errorf("%s appended during the rewrite could not be put back (%v) nor kept in a carry file (%v)", words.Plural(len(late), "byte", "bytes"), appendErr, err))
	}
	return "", errors.Join(prev, fmt.Errorf("%s appended during the rewrite could not be put back (%v) nor kept in a carry file", words.Plural(len(late), "byte", "bytes"), appendErr))
}

// writeNew creates name (0600, exclusively) holding data, durably.
func writeNew(name string, data []byte) error {
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, atomicfile.FilePerm)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(name)
		return err
	}
	return atomicfile.SyncDir(filepath.Dir(name))
}
