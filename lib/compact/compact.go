// Package compact consolidates a project's store files
// (docs/hist-compact.md): when a project's folder holds more than MaxFiles files or
// more than MaxEntries entries, every file older than the Keep newest is
// merged, oldest first, into one new compact-<ms>-<rand>@<machine>.jsonl;
// only the running machine's own files (docs/store-format.md). It is
// housekeeping, not a retention limit: no visible prompt ever leaves the
// store through it; only prompts hidden by a tombstone (any machine's)
// are left out.
//
// # Never losing a line
//
// Other processes may still append to the files being merged, and the
// compaction itself may be killed at any instant. The order of the steps
// is what makes both safe:
//
//  1. Claim: each file to merge is renamed to
//     "<name>.gc-<ms>-<rand>.jsonl" before it is read, and kept open. A
//     later append by path starts a fresh file under the original name. A
//     claim left by an earlier, killed run is taken as it is.
//  2. Copy: every complete line of every claim (oldest file first), minus
//     hidden prompts and byte-identical repeats, goes to one temp file
//     that is fsynced and renamed to compact-<ms>-<rand>.jsonl, and the
//     folder is fsynced (atomicfile). Until then no claim is removed, and
//     claims are store files that every reader reads.
//  3. For each claim: complete lines written to it after it was read are
//     appended to the compact file (one O_APPEND write, fsynced). If that
//     fails the claim stays on disk with every byte. Else the claim is
//     removed, and read once more through the still-open descriptor for a
//     write that landed in between; those lines are appended too, or, if
//     that fails, written to a carry file beside it.
//
// A kill at any point leaves every line in a claim, the compact file, or
// both (readers drop the duplicates); the next run merges leftover claims
// and earlier compact files like any other file, and removes temp files
// whose process is gone (atomicfile.Stale).
//
// # Lines that are not records
//
// Blank lines are dropped. A complete line that is not a record this
// version reads (bad JSON, another "v") is not a prompt to any reader, but
// it may be a record of a newer format, so it is copied verbatim and
// counted (Report.Malformed); compaction is not a way for bytes to leave
// the store. An unterminated last line of a claim may be a write in
// progress: it is never copied on the first read, only once a later read
// finds it complete. Whatever is still unterminated when the claim has
// been removed and read for the last time was never a complete line (a
// writer died mid-write, or already wrote it again by path, as
// store.Append does); it is dropped and counted (Report.Torn).
package compact

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"hash/maphash"
	"hist/lib/words"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"hist/lib/atomicfile"
	"hist/lib/identity"
	"hist/lib/record"
	"hist/lib/store"
	"hist/lib/tombstone"
)

// The default thresholds (docs/hist-compact.md).
const (
	DefaultMaxFiles   = 50
	DefaultMaxEntries = 5000
	DefaultKeep       = 10
)

// Options says when and how to compact.
type Options struct {
	MaxFiles   int    // compact when the folder holds more files than this
	MaxEntries int    // ... or more entries than this
	Keep       int    // the newest files that stay as they are
	Current    string // base name of the capture file never merged ("" for none)
	// Hidden is the loaded hidden.json; nil hides nothing.
	Hidden *tombstone.Set
	// Now is the clock for new file names (time.Now when nil).
	Now func() time.Time
}

// DefaultOptions returns the default thresholds.
func DefaultOptions() Options {
	return Options{MaxFiles: DefaultMaxFiles, MaxEntries: DefaultMaxEntries, Keep: DefaultKeep}
}

// CurrentName turns what --current names (a path, a base name or an
// instance id) into the base name of a capture file.
func CurrentName(v string) string {
	if v == "" {
		return ""
	}
	base := filepath.Base(v)
	if !strings.HasSuffix(base, ".jsonl") {
		base += ".jsonl"
	}
	return base
}

// FileInfo is one store file of a project's folder, as the plan saw it.
type FileInfo struct {
	Path      string     `json:"-"`
	Name      string     `json:"name"`
	Kind      store.Kind `json:"-"`
	Entries   int        `json:"entries"`
	Newest    int64      `json:"newest"`     // most recent entry ts, or the mtime (ms) when it has none
	FromMtime bool       `json:"from_mtime"` // Newest is the mtime
	Size      int64      `json:"size"`
	// Link is set for a store file that is a symbolic link: it is read
	// but never merged (merging would remove the link and leave the
	// copies in its target, out of reach of later deletes).
	Link bool `json:"link,omitempty"`
}

// FileError is a file that could not be read or changed.
type FileError struct {
	Path string `json:"path"`
	Err  string `json:"error"`
}

// Plan is what a compaction of one project would do.
type Plan struct {
	Project    string      `json:"project"`
	Dir        string      `json:"dir"`
	Files      int         `json:"files"`   // store files in the folder (unreadable ones included)
	Entries    int         `json:"entries"` // records in the readable ones
	Unreadable []FileError `json:"unreadable,omitempty"`
	Merge      []FileInfo  `json:"merge,omitempty"` // the files to merge, oldest first
	Kept       int         `json:"kept"`            // readable files that stay
	Reason     string      `json:"reason,omitempty"`
	Stale      []string    `json:"-"` // temp files whose process is gone
	// Foreign counts the store files of other machines in the folder:
	// they are never read, merged or counted above (their machine
	// compacts them).
	Foreign int    `json:"foreign,omitempty"`
	Machine string `json:"-"` // the machine whose compact file is written
}

// Runs reports whether the plan merges anything.
func (p *Plan) Runs() bool { return p.Reason == "" }

// PlanProject reads every store file of a project's folder and decides
// what to merge: nothing unless the folder holds more than MaxFiles files
// or more than MaxEntries entries; never the Keep newest files, seed files
// (and their carries and claims), symbolic links or the current capture
// file; nothing unless at least two files can be merged. Files it cannot
// read are left out (Plan.Unreadable) and never touched. Only this
// machine's files are planned (store.Owns): other machines' are counted
// in Plan.Foreign and left alone, so each file keeps one writer.
func PlanProject(st store.Store, hash string, opt Options) (*Plan, error) {
	dir := st.ProjectDir(hash)
	p := &Plan{Project: hash, Dir: dir, Machine: st.Machine}
	legacy := st.OwnsLegacy(false)
	// --current names the capture file by its instance or its plain name:
	// this machine's file of that name is the one it means.
	current := opt.Current
	if current != "" && store.MachineOf(current) == "" {
		current = store.Named(current, st.Machine)
	}
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		p.Reason = "no files"
		return p, nil
	}
	if err != nil {
		return p, err
	}
	var infos []FileInfo
	var sc scanner
	for _, e := range ents {
		name := e.Name()
		if atomicfile.IsTemp(name) {
			if st.Owns(store.TempOrigin(name), legacy) && atomicfile.Stale(name) {
				p.Stale = append(p.Stale, filepath.Join(dir, name))
			}
			continue
		}
		k := store.Classify(name)
		if k == store.NotStore || k == store.GlobalFile {
			continue
		}
		if !st.Owns(name, legacy) {
			p.Foreign++
			continue
		}
		p.Files++
		path := filepath.Join(dir, name)
		info, err := sc.info(path)
		if err != nil {
			p.Unreadable = append(p.Unreadable, FileError{Path: path, Err: words.Describe(err)})
			continue
		}
		info.Name, info.Kind = name, k
		info.Link = e.Type()&fs.ModeSymlink != 0
		p.Entries += info.Entries
		infos = append(infos, info)
	}
	if p.Files <= opt.MaxFiles && p.Entries <= opt.MaxEntries {
		p.Kept = len(infos)
		p.Reason = fmt.Sprintf("%s and %s (compaction runs above %s or %s)",
			words.Plural(p.Files, "file", "files"), words.Plural(p.Entries, "entry", "entries"), words.Plural(opt.MaxFiles, "file", "files"), words.Plural(opt.MaxEntries, "entry", "entries"))
		return p, nil
	}
	// Newest first; the name breaks ties so that a plan is deterministic.
	sort.Slice(infos, func(i, j int) bool {
		if infos[i].Newest != infos[j].Newest {
			return infos[i].Newest > infos[j].Newest
		}
		return infos[i].Name > infos[j].Name
	})
	// A claim left by a killed run is not a file to keep: its name already
	// serves a fresh file, so it is merged whatever its age.
	var files, leftover []FileInfo
	for _, f := range infos {
		if isClaim(f.Name) && !store.IsSeed(f.Name) {
			leftover = append(leftover, f)
		} else {
			files = append(files, f)
		}
	}
	keep := min(max(opt.Keep, 0), len(files))
	p.Kept = keep
	p.Merge = leftover
	for _, f := range files[keep:] {
		if store.IsSeed(f.Name) || f.Link || (opt.Current != "" && (f.Name == opt.Current || f.Name == current)) {
			p.Kept++
			continue
		}
		p.Merge = append(p.Merge, f)
	}
	// Oldest first.
	sort.SliceStable(p.Merge, func(i, j int) bool {
		if p.Merge[i].Newest != p.Merge[j].Newest {
			return p.Merge[i].Newest < p.Merge[j].Newest
		}
		return p.Merge[i].Name < p.Merge[j].Name
	})
	if len(p.Merge) < 2 {
		p.Reason = fmt.Sprintf("%s and %s, but only %s can be merged (the %d newest, seed files, linked files and the current capture file stay)",
			words.Plural(p.Files, "file", "files"), words.Plural(p.Entries, "entry", "entries"), words.Plural(len(p.Merge), "file", "files"), opt.Keep)
		p.Kept += len(p.Merge)
		p.Merge = nil
	}
	return p, nil
}

// scanner reads files for the plan with one reusable buffer.
type scanner struct{ br *bufio.Reader }

// info counts a file's records and finds its newest entry.
func (s *scanner) info(path string) (FileInfo, error) {
	f, err := store.Open(path)
	if err != nil {
		return FileInfo{}, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return FileInfo{}, err
	}
	info := FileInfo{Path: path, Size: fi.Size(), Newest: math.MinInt64}
	if s.br == nil {
		s.br = bufio.NewReaderSize(f, readSize)
	} else {
		s.br.Reset(f)
	}
	var v record.View
	_, err = eachLine(s.br, func(line []byte) error {
		if record.ParseView(line, &v) == nil {
			info.Entries++
			info.Newest = max(info.Newest, v.TS)
		}
		return nil
	})
	if err != nil {
		return FileInfo{}, err
	}
	if info.Entries == 0 {
		info.Newest, info.FromMtime = fi.ModTime().UnixMilli(), true
	}
	return info, nil
}

const readSize = 256 << 10

// errStop wraps an error returned by a line callback, so that eachLine's
// caller can tell it from a read error.
type errStop struct{ err error }

func (e errStop) Error() string { return e.err.Error() }

// eachLine calls fn for every complete line of br (without its newline)
// and returns the number of bytes those lines take. An unterminated last
// line is not passed on and not counted: it may be a write in progress.
func eachLine(br *bufio.Reader, fn func(line []byte) error) (int64, error) {
	var n int64
	var long []byte
	for {
		line, err := br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			long = append(long[:0], line...)
			for err == bufio.ErrBufferFull {
				line, err = br.ReadSlice('\n')
				long = append(long, line...)
			}
			line = long
		}
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
		if ferr := fn(line[:len(line)-1]); ferr != nil {
			return n, errStop{ferr}
		}
		n += int64(len(line))
	}
}

// Report is what a compaction of one project did.
type Report struct {
	*Plan
	Compact    string      `json:"compact,omitempty"` // the compact file written
	Merged     int         `json:"merged"`            // files merged whose claim is gone
	Written    int         `json:"written"`           // entries written to the compact file
	Hidden     int         `json:"hidden"`            // entries dropped because a tombstone hides them
	Duplicates int         `json:"duplicates"`        // byte-identical lines written once
	Malformed  int         `json:"malformed"`         // lines that are not records, kept verbatim
	Torn       int         `json:"torn"`              // unterminated last lines dropped with their claim
	Late       int         `json:"late"`              // lines found in a claim after its first read
	Stale      int         `json:"stale_removed"`     // temp files of dead processes removed
	ClaimsLeft []string    `json:"claims_left,omitempty"`
	Carries    []string    `json:"carries,omitempty"` // carry files holding lines the compact file could not take
	Errors     []FileError `json:"errors,omitempty"`
}

// Failed reports whether something could not be done (nothing is lost:
// Errors says what stays on disk).
func (r *Report) Failed() bool { return len(r.Errors) > 0 || len(r.Plan.Unreadable) > 0 }

func (r *Report) fail(path string, format string, args ...any) {
	r.Errors = append(r.Errors, FileError{Path: path, Err: fmt.Sprintf(format, args...)})
}

// Test hooks, nil outside tests.
var (
	hookAfterCommit func(claims []string)             // the compact file is committed; no claim removed yet
	hookAfterRemove func(claim string)                // a claim was removed, before its last read
	hookAppend      func(path string, b []byte) error // an error makes an append to the compact file fail
)

// claim is a file being merged, held open.
type claim struct {
	path string
	orig string // the file's name before the claim
	f    *os.File
	done int64 // bytes of complete lines already handled
	bad  error // why it could not be read whole: it stays
}

// merger writes lines to the compact file: hidden prompts out, repeated
// lines once.
type merger struct {
	hidden *tombstone.Set
	seen   map[[2]uint64]struct{}
	s1, s2 maphash.Seed
	view   record.View
	norm   []byte
	rep    *Report
}

func newMerger(hidden *tombstone.Set, rep *Report) *merger {
	if hidden != nil && hidden.Empty() {
		hidden = nil
	}
	n := 0
	for _, f := range rep.Plan.Merge {
		n += f.Entries
	}
	// Sized once for the lines the plan counted: growing it would leave
	// garbage, and every collection costs the most on a busy machine.
	seen := make(map[[2]uint64]struct{}, n+n/8)
	return &merger{hidden: hidden, seen: seen, s1: maphash.MakeSeed(), s2: maphash.MakeSeed(), rep: rep}
}

// add decides whether line goes to the compact file, and appends it (with
// its newline) to out when it does.
func (m *merger) add(out []byte, line []byte, late bool) []byte {
	if len(bytes.TrimSpace(line)) == 0 {
		return out
	}
	isRec := record.ParseView(line, &m.view) == nil
	if isRec && m.hidden != nil {
		m.norm = identity.AppendNormalized(m.norm[:0], string(m.view.Text))
		if m.hidden.HiddenNormalized(m.norm) {
			m.rep.Hidden++
			return out
		}
	}
	k := [2]uint64{maphash.Bytes(m.s1, line), maphash.Bytes(m.s2, line)}
	if _, dup := m.seen[k]; dup {
		m.rep.Duplicates++
		return out
	}
	m.seen[k] = struct{}{}
	if isRec {
		m.rep.Written++
	} else {
		m.rep.Malformed++
	}
	if late {
		m.rep.Late++
	}
	out = append(out, line...)
	return append(out, '\n')
}

// DryRun reports what Run would write, changing nothing.
func DryRun(p *Plan, opt Options) *Report {
	rep := &Report{Plan: p}
	if !p.Runs() {
		return rep
	}
	m := newMerger(opt.Hidden, rep)
	br := bufio.NewReaderSize(nil, readSize)
	var buf []byte
	for _, fi := range p.Merge {
		f, err := store.Open(fi.Path)
		if err != nil {
			rep.fail(fi.Path, "%s: it would stay as it is", words.Describe(err))
			continue
		}
		br.Reset(f)
		_, err = eachLine(br, func(line []byte) error {
			buf = m.add(buf[:0], line, false)
			return nil
		})
		f.Close()
		if err != nil {
			rep.fail(fi.Path, "%s: it would stay as it is", words.Describe(err))
			continue
		}
		rep.Merged++
	}
	return rep
}

// Run carries out a plan: it removes the stale temp files the plan found
// and, when the plan runs, merges its files. Every failure leaves every
// line on disk; Report.Errors says what stays.
func Run(p *Plan, opt Options) *Report {
	rep := &Report{Plan: p}
	for _, t := range p.Stale {
		if atomicfile.Stale(filepath.Base(t)) && os.Remove(t) == nil {
			rep.Stale++
		}
	}
	if !p.Runs() {
		return rep
	}
	r := &runner{rep: rep, now: time.Now}
	if opt.Now != nil {
		r.now = opt.Now
	}
	defer r.close()
	r.claim()
	if len(r.claims) == 0 || !r.copy(opt.Hidden) {
		return rep
	}
	r.finish()
	return rep
}

// runner is one compaction, step by step (see the package comment).
type runner struct {
	rep    *Report
	now    func() time.Time
	claims []*claim
	m      *merger
	out    *appender // the committed compact file
	br     *bufio.Reader
	buf    []byte
}

func (r *runner) close() {
	for _, c := range r.claims {
		c.f.Close()
	}
	if r.out != nil {
		r.out.close()
	}
}

// claim is step 1: each file to merge is renamed to a claim and opened.
func (r *runner) claim() {
	p := r.rep.Plan
	for _, fi := range p.Merge {
		c := &claim{path: fi.Path, orig: fi.Name}
		if !isClaim(fi.Name) {
			c.path = filepath.Join(p.Dir, store.ClaimFile(fi.Name, r.now().UnixMilli()))
			if err := os.Rename(fi.Path, c.path); err != nil {
				if !errors.Is(err, fs.ErrNotExist) { // removed by hand since the plan: nothing to merge
					r.rep.fail(fi.Path, "claiming it: %s: it stays as it is", words.Describe(err))
				}
				continue
			}
		}
		f, err := store.Open(c.path)
		if err != nil {
			r.rep.fail(c.path, "opening the claim: %s: it stays on disk and is still read", words.Describe(err))
			r.rep.ClaimsLeft = append(r.rep.ClaimsLeft, c.path)
			continue
		}
		c.f = f
		r.claims = append(r.claims, c)
	}
}

// copy is step 2: the claims' lines go to the compact file, committed.
func (r *runner) copy(hidden *tombstone.Set) bool {
	rep := r.rep
	r.m = newMerger(hidden, rep)
	compact := filepath.Join(rep.Plan.Dir, store.CompactFile(rep.Plan.Machine, r.now().UnixMilli()))
	if err := writeCompact(compact, r.claims, r.m); err != nil {
		rep.Written, rep.Hidden, rep.Duplicates, rep.Malformed = 0, 0, 0, 0
		rep.fail(compact, "writing the compact file: %s: the claimed files stay on disk and are still read", words.Describe(err))
		for _, c := range r.claims {
			rep.ClaimsLeft = append(rep.ClaimsLeft, c.path)
		}
		return false
	}
	rep.Compact = compact
	if hookAfterCommit != nil {
		paths := make([]string, len(r.claims))
		for i, c := range r.claims {
			paths[i] = c.path
		}
		hookAfterCommit(paths)
	}
	return true
}

// finish is step 3, for each claim: its late lines, its removal, its last
// read.
func (r *runner) finish() {
	r.out = &appender{path: r.rep.Compact}
	r.br = bufio.NewReaderSize(nil, readSize)
	for _, c := range r.claims {
		if c.bad != nil {
			r.rep.fail(c.path, "reading the claim: %s: it stays on disk and is still read", words.Describe(c.bad))
			r.rep.ClaimsLeft = append(r.rep.ClaimsLeft, c.path)
			continue
		}
		r.finishClaim(c)
	}
	if err := r.out.close(); err != nil {
		r.rep.fail(r.rep.Compact, "closing the compact file: %s", words.Describe(err))
	}
	if err := atomicfile.SyncDir(r.rep.Plan.Dir); err != nil {
		r.rep.fail(r.rep.Plan.Dir, "syncing the folder: %s", words.Describe(err))
	}
}

func (r *runner) finishClaim(c *claim) {
	rep := r.rep
	var n int64
	var err error
	r.buf, n, err = readLate(r.br, c, r.m, r.buf[:0])
	if err == nil && len(r.buf) > 0 {
		err = r.out.append(r.buf)
	}
	if err != nil {
		rep.fail(c.path, "adding the lines written to it after it was read: %s: the claim stays on disk with every byte", words.Describe(err))
		rep.ClaimsLeft = append(rep.ClaimsLeft, c.path)
		return
	}
	c.done += n
	if err := os.Remove(c.path); err != nil {
		rep.fail(c.path, "removing the claim: %s: it stays on disk; its prompts are listed once", words.Describe(err))
		rep.ClaimsLeft = append(rep.ClaimsLeft, c.path)
		return
	}
	rep.Merged++
	if hookAfterRemove != nil {
		hookAfterRemove(c.path)
	}
	r.buf, n, err = readLate(r.br, c, r.m, r.buf[:0])
	if err != nil {
		rep.fail(c.path, "reading the removed claim once more: %s", words.Describe(err))
		return
	}
	c.done += n
	if len(r.buf) > 0 {
		if err := r.out.append(r.buf); err != nil {
			carry, cerr := writeCarry(rep.Plan.Dir, c.orig, r.buf, r.now)
			if cerr != nil {
				rep.fail(c.path, "%s written to the claim while it was removed could not be kept (%s; carry file: %s)", words.Plural(len(r.buf), "byte", "bytes"), words.Describe(err), words.Describe(cerr))
				return
			}
			rep.Carries = append(rep.Carries, carry)
		}
	}
	if fi, err := c.f.Stat(); err == nil && fi.Size() > c.done {
		rep.Torn++
	}
}

// isClaim reports whether a base name is a claim (of any file, a carry
// file included).
func isClaim(name string) bool { return store.Classify(name) == store.Claim }

// writeCompact copies every claim's complete lines into a new compact file
// and commits it. A claim that cannot be read whole is marked bad (it will
// stay); what was read of it is in the compact file too, which is harmless.
func writeCompact(path string, claims []*claim, m *merger) error {
	pf, err := atomicfile.Create(path)
	if err != nil {
		return err
	}
	defer pf.Cleanup()
	w := bufio.NewWriterSize(pf.File, 1<<20)
	br := bufio.NewReaderSize(nil, readSize)
	var buf []byte
	for _, c := range claims {
		br.Reset(io.NewSectionReader(c.f, 0, math.MaxInt64))
		n, err := eachLine(br, func(line []byte) error {
			buf = m.add(buf[:0], line, false)
			_, err := w.Write(buf)
			return err
		})
		var stop errStop
		if errors.As(err, &stop) {
			return stop.err
		}
		c.bad = err
		c.done = n
	}
	if err := w.Flush(); err != nil {
		return err
	}
	return pf.Commit()
}

// readLate reads the complete lines written to c after c.done and returns
// what goes to the compact file, and how many bytes were read.
func readLate(br *bufio.Reader, c *claim, m *merger, buf []byte) ([]byte, int64, error) {
	br.Reset(io.NewSectionReader(c.f, c.done, math.MaxInt64-c.done))
	n, err := eachLine(br, func(line []byte) error {
		buf = m.add(buf, line, true)
		return nil
	})
	return buf, n, err
}

// appender appends to the committed compact file: each call is one
// O_APPEND write, fsynced. A failed write is cut back off so that the file
// still ends with a complete line; if even that fails, no more is written
// to it (every later claim stays).
type appender struct {
	path   string
	f      *os.File
	size   int64
	broken error
}

func (a *appender) append(b []byte) error {
	if a.broken != nil {
		return a.broken
	}
	if a.f == nil {
		f, err := os.OpenFile(a.path, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			return err
		}
		fi, err := f.Stat()
		if err != nil {
			f.Close()
			return err
		}
		a.f, a.size = f, fi.Size()
	}
	var err error
	if hookAppend != nil {
		err = hookAppend(a.path, b)
	}
	if err == nil {
		_, err = a.f.Write(b)
	}
	if err == nil {
		err = a.f.Sync()
	}
	if err != nil {
		if terr := a.f.Truncate(a.size); terr != nil {
			a.broken = fmt.Errorf("%w (and the compact file could not be cut back: %v)", err, terr)
		}
		return err
	}
	a.size += int64(len(b))
	return nil
}

func (a *appender) close() error {
	if a.f == nil {
		return nil
	}
	err := a.f.Close()
	a.f = nil
	return err
}

// writeCarry keeps lines the compact file could not take in a carry file
// beside the file they came from.
func writeCarry(dir, orig string, b []byte, now func() time.Time) (string, error) {
	path := filepath.Join(dir, store.CarryFile(orig, now().UnixMilli()))
	return path, atomicfile.WriteBytes(path, b)
}
