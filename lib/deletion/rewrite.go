package deletion

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sync"
	"time"

	"hist/lib/atomicfile"
	"hist/lib/identity"
	"hist/lib/record"
	"hist/lib/store"
	"hist/lib/tombstone"
	"hist/lib/words"
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
//     file, those it does not hold already, under its lock
//     (store.AppendMissing). If that fails they are kept in a carry file.
//
// A writer whose record lands in the old inode and who sees, after its
// write, that the path names another inode adds the record to the new
// file the same way (store.Append): only if it is not there. So every
// record reaches the new file once: read by step 3, or by step 4, or
// added by its writer, and when step 4 and the writer both have it, the
// file's lock lets only the first add it.

// Test hooks, nil outside tests: called between steps 2 and 3, between
// step 3 and the rename, and between the rename and step 4.
var hookScanned, hookBeforeRename, hookAfterRename func(path string)

func hook(h func(string), path string) {
	if h != nil {
		h(path)
	}
}

// fileResult is what a delete did to one file.
type fileResult struct {
	EditResult
	path     string
	hits     map[string]int      // copies by normalized prompt (nil: none)
	sessions map[string]struct{} // the session ids the copies name
	swept    int                 // of Changed: records the sweep set hid (not in hits)
}

// matcher says whether a line is a copy of one of the deleted prompts.
// Each worker has its own copy.
type matcher struct {
	targets map[string]struct{} // the normalized prompts
	only    map[string]struct{} // when not nil, copies are only records naming one of these sessions
	// sweep, when not nil, also matches the records it hides (other
	// machines' tombstones); swept says the last match was one of those.
	sweep *tombstone.Set
	swept bool
	pins  *pins // when not nil, notes the tombstones that hide a line that stays

	view    record.View
	norm    []byte
	session []byte // the session of the line last matched
}

// match reports whether line (without its newline) is a copy of a deleted
// prompt. A line readers skip as malformed (a record without "ts", say) is
// still a copy when its "text" is the prompt: it is dropped too.
func (m *matcher) match(line []byte) bool {
	m.session, m.swept = nil, false
	text, ok := m.text(line)
	if !ok {
		return false
	}
	m.norm = identity.AppendNormalized(m.norm[:0], text)
	if _, ok := m.targets[string(m.norm)]; ok && m.inSessions() {
		return true
	}
	if m.sweep != nil && m.only == nil && m.sweep.HiddenNormalized(m.norm) {
		m.swept = true
		return true
	}
	m.pins.note(m.norm)
	return false
}

// text returns the text of a record line, or of a line that is not a
// record this version reads but holds a "text" string.
func (m *matcher) text(line []byte) (string, bool) {
	if record.ParseView(line, &m.view) == nil {
		m.session = m.view.Session
		return string(m.view.Text), true
	}
	if t := bytes.TrimLeft(line, " \t\r"); len(t) == 0 || t[0] != '{' {
		return "", false
	}
	var w struct {
		Text *string `json:"text"`
	}
	if json.Unmarshal(line, &w) != nil || w.Text == nil {
		return "", false
	}
	return *w.Text, true
}

// inSessions reports whether the line last read names one of only's
// sessions (true without only).
func (m *matcher) inSessions() bool {
	if m.only == nil {
		return true
	}
	_, ok := m.only[string(m.session)]
	return ok && len(m.session) > 0
}

// pins are the tombstones the cap could drop that hide a line staying on
// disk: a delete keeps them past the cap (tombstone.Trim). Every worker
// notes into the same one.
type pins struct {
	candidates *tombstone.Set
	mu         sync.Mutex
	found      map[string]bool
}

func (p *pins) note(norm []byte) {
	if p == nil {
		return
	}
	if e := p.candidates.Hider(norm); e != "" {
		p.mu.Lock()
		p.found[e] = true
		p.mu.Unlock()
	}
}

func (p *pins) has(entry string) bool { return p != nil && p.found[entry] }

// LineReader reads the complete lines of a file from an offset, so that a
// read can resume where the last one stopped.
type LineReader struct {
	f    io.ReaderAt
	br   *bufio.Reader
	long []byte // a line longer than the buffer
	Pos  int64  // offset just past the last complete line read
	Tail []byte // the bytes after the last newline at the last end of file
}

const bufSize = 256 << 10

// NewLineReader reads f from its start.
func NewLineReader(f io.ReaderAt) *LineReader {
	return &LineReader{f: f, br: bufio.NewReaderSize(nil, bufSize)}
}

// Each calls fn for every complete line from Pos on, its newline
// included (valid during the call), and moves Pos past it; a last line
// without its newline may be a write still landing: it is left in Tail,
// for a later read. An error from fn stops it and is returned.
func (r *LineReader) Each(fn func(line []byte) error) error {
	r.br.Reset(io.NewSectionReader(r.f, r.Pos, math.MaxInt64-r.Pos))
	for {
		line, err := r.br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			r.long = append(r.long[:0], line...)
			for err == bufio.ErrBufferFull {
				line, err = r.br.ReadSlice('\n')
				r.long = append(r.long, line...)
			}
			line = r.long
		}
		if err == io.EOF {
			r.Tail = append(r.Tail[:0], line...)
			return nil
		}
		if err != nil {
			return err
		}
		r.Pos += int64(len(line))
		if err := fn(line); err != nil {
			return err
		}
	}
}

// tornRetries and tornDelay bound how long step 4 waits for a write in
// flight to complete a last line; after that it is a torn line from a
// writer that died, and is kept as it is.
const (
	tornRetries = 100
	tornDelay   = time.Millisecond
)

// rewriteFile removes the copies of m's prompts from the file at path.
func rewriteFile(path string, m *matcher, dry bool) fileResult {
	fr := fileResult{path: path}
	fr.EditResult = EditFile(path, func(line []byte) ([]byte, bool) {
		if !m.match(line) {
			return nil, false
		}
		if m.swept {
			fr.swept++
			return nil, true
		}
		if fr.hits == nil {
			fr.hits, fr.sessions = map[string]int{}, map[string]struct{}{}
		}
		fr.hits[string(m.norm)]++
		if len(m.session) > 0 {
			fr.sessions[string(m.session)] = struct{}{}
		}
		return nil, true
	}, dry)
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
	vanished  bool // the file was gone when it was opened
}

// EditFile rewrites the store file at path with edit applied to every
// complete line, under the same rules as a delete's rewrites (steps 1 to
// 4 above): a file where edit changes nothing is left alone (same bytes,
// same mtime). The caller holds the rewriters' lock (store.Lock). A
// missing file is not an error.
func EditFile(path string, edit EditFunc, dry bool) EditResult {
	f, err := store.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return EditResult{vanished: true} // gone since the listing: nothing to edit
	}
	if err != nil {
		return EditResult{Err: err}
	}
	defer f.Close()
	e := &editor{path: path, f: f, edit: edit, dry: dry, r: NewLineReader(f)}
	defer func() {
		if e.p != nil {
			e.p.Cleanup() // a no-op after a commit
		}
	}()
	if e.old, err = f.Stat(); err != nil {
		return EditResult{Err: err}
	}
	if err := e.copyAll(); err != nil || e.res.Changed == 0 {
		e.res.Err = err
		return e.res
	}
	if dry {
		e.res.Rewritten = true
		return e.res
	}
	if err := e.commit(); err != nil {
		e.res.Err = err
		return e.res
	}
	e.res.Rewritten = true
	hook(hookAfterRename, path)
	e.putBackLate()
	return e.res
}

// editor is one file's rewrite.
type editor struct {
	res  EditResult
	path string
	f    *os.File    // the old file, open to the end
	old  os.FileInfo // f's identity
	edit EditFunc
	dry  bool
	r    *LineReader
	p    *atomicfile.Pending // the new file, from the first changed line on
	w    *bufio.Writer       // p's writer
}

// copyAll is steps 1 and 2: every complete line of the old file, edited,
// goes to the new file, which is created at the first line edit changes.
func (e *editor) copyAll() error {
	var failed error // the first line edit changed cannot be written: the rest is still counted
	err := e.r.Each(func(line []byte) error {
		out, changed := e.edit(line[:len(line)-1])
		if !changed {
			out = line
		} else {
			e.res.Changed++
			if e.w == nil && failed == nil {
				if failed = e.start(int64(len(line))); failed != nil && !errors.Is(failed, errSymlink) {
					return failed
				}
			}
		}
		if e.w != nil {
			e.w.Write(out) // a write error sticks and surfaces at Flush
		}
		return nil
	})
	if err != nil && err != failed {
		return fmt.Errorf("reading: %w", err)
	}
	return failed
}

// errSymlink refuses to rewrite a store file that is a symbolic link.
var errSymlink = errors.New("a symbolic link: not rewritten (its target keeps the copies); replace it with the file it points to")

// start creates the new file and copies into it the lines before the one
// just read (n bytes long).
func (e *editor) start(n int64) error {
	if fi, err := os.Lstat(e.path); err == nil && fi.Mode()&os.ModeSymlink != 0 {
		// Renaming over the link would leave the old lines in its target.
		return errSymlink
	}
	if e.dry {
		return nil
	}
	p, err := atomicfile.Create(e.path)
	if err != nil {
		return fmt.Errorf("creating a temp file: %w", err)
	}
	e.p, e.w = p, bufio.NewWriterSize(p.File, bufSize)
	if _, err := io.Copy(e.w, io.NewSectionReader(e.f, 0, e.r.Pos-n)); err != nil {
		return fmt.Errorf("copying: %w", err)
	}
	return nil
}

// commit is step 3: the lines appended meanwhile, then the rename, unless
// another program replaced the file.
func (e *editor) commit() error {
	hook(hookScanned, e.path)
	if err := e.copyEdited(e.w); err != nil {
		return fmt.Errorf("reading: %w", err)
	}
	if err := e.w.Flush(); err != nil {
		return fmt.Errorf("writing the new file: %w", err)
	}
	hook(hookBeforeRename, e.path)
	if now, err := os.Stat(e.path); err != nil || !os.SameFile(now, e.old) {
		return errors.New("replaced by another program while being rewritten: left as it is")
	}
	if err := e.p.Commit(); err != nil {
		// When only the folder fsync failed, the new file is in place.
		if now, serr := os.Stat(e.path); serr != nil || os.SameFile(now, e.old) {
			return fmt.Errorf("replacing it: %w", err)
		}
	}
	return nil
}

// putBackLate is step 4: the lines that reached the old file after step 3
// read it are appended to the new one.
func (e *editor) putBackLate() {
	var late bytes.Buffer
	for attempt := 0; ; attempt++ {
		if err := e.copyEdited(&late); err != nil {
			// The old inode is unreadable now: lines appended after step 3
			// are still put back by their writers (they see the rename).
			e.res.Err = fmt.Errorf("reading lines appended during the rewrite: %w", err)
			break
		}
		if len(e.r.Tail) == 0 || attempt == tornRetries {
			late.Write(e.r.Tail) // a torn line stays as it was
			break
		}
		time.Sleep(tornDelay)
	}
	if late.Len() == 0 {
		return
	}
	appendErr := store.AppendMissing(e.path, late.Bytes())
	if appendErr == nil {
		return
	}
	carry, err := WriteCarry(e.path, late.Bytes())
	if err != nil {
		e.res.Err = errors.Join(e.res.Err, fmt.Errorf("%s appended during the rewrite could not be put back (%v) nor kept in a carry file (%v)", words.Plural(late.Len(), "byte", "bytes"), appendErr, err))
		return
	}
	e.res.Carry = carry
}

// copyEdited copies the complete lines from the reader's offset on to w,
// edited.
func (e *editor) copyEdited(w io.Writer) error {
	return e.r.Each(func(line []byte) error {
		if out, changed := e.edit(line[:len(line)-1]); changed {
			e.res.Changed++
			line = out
		}
		w.Write(line)
		return nil
	})
}

// WriteCarry keeps lines that could not be put back into the store file
// at path in a new carry file beside it (atomicfile), and returns its
// path.
func WriteCarry(path string, data []byte) (string, error) {
	dir, base := filepath.Split(path)
	name := filepath.Join(dir, store.CarryFile(base, time.Now().UnixMilli()))
	return name, atomicfile.WriteBytes(name, data)
}
