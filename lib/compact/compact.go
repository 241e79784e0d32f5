// Package compact consolidates a project's store files
// (docs/hist-compact.md): when a project's folder holds more than MaxFiles files or
// more than MaxEntries entries, every file older than the Keep newest is
// merged, oldest first, into one new compact-<ms>-<rand>@<machine>.jsonl;
// only the running machine's own files (docs/store-format.md). It is
// housekeeping, not a retention limit: only prompts hidden by a tombstone
// (any machine's) are left out.
//
// # Never losing a line
//
// Other processes may still append to the files being merged, and the
// compaction itself may be killed at any instant. The order of the steps
// (docs/hist-compact.md, "Safe while agents append") makes both safe:
//
//  1. Claim: each file to merge is renamed to a claim before it is read,
//     and kept open; a later append by path starts a fresh file.
//  2. Copy: every complete line of every claim goes to one compact file,
//     committed (atomicfile) before any claim is removed.
//  3. For each claim: lines written to it after it was read are appended
//     to the compact file (if that fails the claim stays); then the claim
//     is removed and read once more through the still-open descriptor,
//     for a write that landed in between (kept in a carry file if the
//     append fails).
//
// A kill at any point leaves every line in a claim, the compact file, or
// both (readers drop the duplicates); the next run merges leftover claims.
//
// Blank lines are dropped. A complete line that is not a record this
// version reads may be a record of a newer format: it is copied verbatim
// (Report.Malformed). An unterminated last line of a claim may be a write
// in progress: it is copied only once a later read finds it complete;
// still unterminated when the claim has been removed and read for the
// last time, it was never a complete line, and is dropped (Report.Torn).
package compact

import (
	"bufio"
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"hash/maphash"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"hist/lib/atomicfile"
	"hist/lib/deletion"
	"hist/lib/identity"
	"hist/lib/record"
	"hist/lib/store"
	"hist/lib/tombstone"
	"hist/lib/words"
)

// The default thresholds (docs/hist-compact.md).
const (
	DefaultMaxFiles   = 50
	DefaultMaxEntries = 5000
	DefaultKeep       = 10
)

// Options says when and how to compact.
type Options struct {
	MaxFiles   int            // compact when the folder holds more files than this
	MaxEntries int            // ... or more entries than this
	Keep       int            // the newest files that stay as they are
	Current    string         // base name of the capture file never merged ("" for none)
	Hidden     *tombstone.Set // the loaded tombstones; nil hides nothing
}

// CurrentName turns what --current names (a path, a base name or an
// instance id) into the base name of a capture file.
func CurrentName(v string) string {
	if v == "" {
		return ""
	}
	return strings.TrimSuffix(filepath.Base(v), ".jsonl") + ".jsonl"
}

// FileInfo is one store file of a project's folder, as the plan saw it.
type FileInfo struct {
	Path      string `json:"-"`
	Name      string `json:"name"`
	Entries   int    `json:"entries"`
	Newest    int64  `json:"newest"`     // most recent entry ts, or the mtime (ms) when it has none
	FromMtime bool   `json:"from_mtime"` // Newest is the mtime
	Size      int64  `json:"size"`
	// Link: a symbolic link is read but never merged, which would leave
	// the copies in its target out of reach of later deletes.
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
	Foreign    int         `json:"foreign,omitempty"` // other machines' store files: never read, merged or counted above
	st         store.Store // the machine's store
}

// Runs reports whether the plan merges anything.
func (p *Plan) Runs() bool { return p.Reason == "" }

// PlanProject reads every store file of this machine's in a project's
// folder and decides what to merge (docs/hist-compact.md, "When it runs").
// Files it cannot read are left out (Plan.Unreadable) and never touched.
func PlanProject(st store.Store, hash string, opt Options) (*Plan, error) {
	dir := st.ProjectDir(hash)
	p := &Plan{Project: hash, Dir: dir, st: st}
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
	for _, e := range ents {
		name := e.Name()
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
		info, err := info(path)
		if err != nil {
			p.Unreadable = append(p.Unreadable, FileError{Path: path, Err: words.Describe(err)})
			continue
		}
		info.Name = name
		info.Link = e.Type()&fs.ModeSymlink != 0
		p.Entries += info.Entries
		infos = append(infos, info)
	}
	// A claim left by a killed run is merged by the next run whatever the
	// thresholds, alone if need be: its name already serves a fresh file.
	// Below the thresholds, the leftover claims are all that is merged.
	leftover := slices.DeleteFunc(slices.Clone(infos), func(f FileInfo) bool { return !leftoverClaim(f.Name) })
	below := p.Files <= opt.MaxFiles && p.Entries <= opt.MaxEntries
	if len(leftover) == 0 && below {
		p.Kept = len(infos)
		p.Reason = fmt.Sprintf("%s and %s (compaction runs above %s or %s)",
			words.Plural(p.Files, "file", "files"), words.Plural(p.Entries, "entry", "entries"), words.Plural(opt.MaxFiles, "file", "files"), words.Plural(opt.MaxEntries, "entry", "entries"))
		return p, nil
	}
	// Newest first; the name breaks ties so that a plan is deterministic.
	older := func(a, b FileInfo) int {
		return cmp.Or(cmp.Compare(a.Newest, b.Newest), strings.Compare(a.Name, b.Name))
	}
	slices.SortFunc(infos, func(a, b FileInfo) int { return older(b, a) })
	files := slices.DeleteFunc(slices.Clone(infos), func(f FileInfo) bool { return leftoverClaim(f.Name) })
	keep := min(max(opt.Keep, 0), len(files))
	p.Kept = keep
	p.Merge = leftover
	for _, f := range files[keep:] {
		if below || store.IsSeed(f.Name) || f.Link || (opt.Current != "" && (f.Name == opt.Current || f.Name == current)) {
			p.Kept++
			continue
		}
		p.Merge = append(p.Merge, f)
	}
	slices.SortFunc(p.Merge, older)
	if len(p.Merge) < 2 && len(leftover) == 0 {
		p.Reason = fmt.Sprintf("%s and %s, but only %s can be merged (the %d newest, seed files, linked files and the current capture file stay)",
			words.Plural(p.Files, "file", "files"), words.Plural(p.Entries, "entry", "entries"), words.Plural(len(p.Merge), "file", "files"), opt.Keep)
		p.Kept += len(p.Merge)
		p.Merge = nil
	}
	return p, nil
}

// leftoverClaim reports whether name is a claim a killed run left.
func leftoverClaim(name string) bool {
	return store.Classify(name) == store.Claim && !store.IsSeed(name)
}

// info counts a file's records and finds its newest entry.
func info(path string) (FileInfo, error) {
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
	if _, err := record.Scan(f, func(l *record.Line) error {
		info.Entries++
		info.Newest = max(info.Newest, l.TS)
		return nil
	}); err != nil {
		return FileInfo{}, err
	}
	if info.Entries == 0 {
		info.Newest, info.FromMtime = fi.ModTime().UnixMilli(), true
	}
	return info, nil
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
	r    *deletion.LineReader // its Pos: the complete lines already handled
	bad  error                // why it could not be read whole: it stays
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
	return &merger{hidden: hidden, seen: map[[2]uint64]struct{}{}, s1: maphash.MakeSeed(), s2: maphash.MakeSeed(), rep: rep}
}

// keep says whether line (with its newline) goes to the compact file.
func (m *merger) keep(line []byte, late bool) bool {
	body := line[:len(line)-1]
	if len(bytes.TrimSpace(body)) == 0 {
		return false
	}
	isRec := record.ParseView(body, &m.view) == nil
	if isRec && m.hidden != nil {
		m.norm = identity.AppendNormalized(m.norm[:0], string(m.view.Text))
		if m.hidden.HiddenNormalized(m.norm) {
			m.rep.Hidden++
			return false
		}
	}
	k := [2]uint64{maphash.Bytes(m.s1, body), maphash.Bytes(m.s2, body)}
	if _, dup := m.seen[k]; dup {
		m.rep.Duplicates++
		return false
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
	return true
}

// DryRun reports what Run would write, changing nothing.
func DryRun(p *Plan, opt Options) *Report {
	rep := &Report{Plan: p}
	if !p.Runs() {
		return rep
	}
	m := newMerger(opt.Hidden, rep)
	for _, fi := range p.Merge {
		f, err := store.Open(fi.Path)
		if err == nil {
			err = deletion.NewLineReader(f).Each(func(line []byte) error {
				m.keep(line, false)
				return nil
			})
			f.Close()
		}
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
	rep.Stale = deletion.SweepTemps(p.st, store.Scope{Project: p.Project})
	if !p.Runs() {
		return rep
	}
	r := &runner{rep: rep, m: newMerger(opt.Hidden, rep)}
	defer r.close()
	r.claim()
	if len(r.claims) > 0 && r.copy() {
		r.finish()
	}
	return rep
}

// runner is one compaction, step by step (see the package comment).
type runner struct {
	rep    *Report
	claims []*claim
	m      *merger
	broken error // the compact file could not be cut back after a failed append
}

func (r *runner) close() {
	for _, c := range r.claims {
		c.f.Close()
	}
}

// claim is step 1: each file to merge is renamed to a claim and opened.
func (r *runner) claim() {
	p := r.rep.Plan
	for _, fi := range p.Merge {
		c := &claim{path: fi.Path, orig: fi.Name}
		if store.Classify(fi.Name) != store.Claim {
			c.path = filepath.Join(p.Dir, store.ClaimFile(fi.Name, time.Now().UnixMilli()))
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
		c.f, c.r = f, deletion.NewLineReader(f)
		r.claims = append(r.claims, c)
	}
}

// copy is step 2: the claims' lines go to the compact file, committed.
func (r *runner) copy() bool {
	rep := r.rep
	compact := filepath.Join(rep.Plan.Dir, store.CompactFile(rep.Plan.st.Machine, time.Now().UnixMilli()))
	if err := r.writeCompact(compact); err != nil {
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

// writeCompact copies every claim's complete lines into a new compact file
// and commits it. A claim that cannot be read whole is marked bad (it will
// stay); what was read of it is in the compact file too, which is harmless.
func (r *runner) writeCompact(path string) error {
	pf, err := atomicfile.Create(path)
	if err != nil {
		return err
	}
	defer pf.Cleanup()
	w := bufio.NewWriterSize(pf.File, 1<<20)
	for _, c := range r.claims {
		c.bad = c.r.Each(func(line []byte) error {
			if r.m.keep(line, false) {
				w.Write(line) // a write error sticks and surfaces at Flush
			}
			return nil
		})
	}
	if err := w.Flush(); err != nil {
		return err
	}
	return pf.Commit()
}

// finish is step 3, for each claim: its late lines, its removal, its last
// read.
func (r *runner) finish() {
	for _, c := range r.claims {
		if c.bad != nil {
			r.rep.fail(c.path, "reading the claim: %s: it stays on disk and is still read", words.Describe(c.bad))
			r.rep.ClaimsLeft = append(r.rep.ClaimsLeft, c.path)
			continue
		}
		r.finishClaim(c)
	}
	if err := atomicfile.SyncDir(r.rep.Plan.Dir); err != nil {
		r.rep.fail(r.rep.Plan.Dir, "syncing the folder: %s", words.Describe(err))
	}
}

func (r *runner) finishClaim(c *claim) {
	rep := r.rep
	late, err := r.readLate(c)
	if err == nil && len(late) > 0 {
		err = r.append(late)
	}
	if err != nil {
		rep.fail(c.path, "adding the lines written to it after it was read: %s: the claim stays on disk with every byte", words.Describe(err))
		rep.ClaimsLeft = append(rep.ClaimsLeft, c.path)
		return
	}
	if err := os.Remove(c.path); err != nil {
		rep.fail(c.path, "removing the claim: %s: it stays on disk; its prompts are listed once", words.Describe(err))
		rep.ClaimsLeft = append(rep.ClaimsLeft, c.path)
		return
	}
	rep.Merged++
	if hookAfterRemove != nil {
		hookAfterRemove(c.path)
	}
	if late, err = r.readLate(c); err != nil {
		rep.fail(c.path, "reading the removed claim once more: %s", words.Describe(err))
		return
	}
	if len(late) > 0 {
		if err := r.append(late); err != nil {
			carry, cerr := deletion.WriteCarry(filepath.Join(rep.Plan.Dir, c.orig), late)
			if cerr != nil {
				rep.fail(c.path, "%s written to the claim while it was removed could not be kept (%s; carry file: %s)", words.Plural(len(late), "byte", "bytes"), words.Describe(err), words.Describe(cerr))
				return
			}
			rep.Carries = append(rep.Carries, carry)
		}
	}
	if fi, err := c.f.Stat(); err == nil && fi.Size() > c.r.Pos {
		rep.Torn++
	}
}

// readLate returns the complete lines written to c after its last read
// that go to the compact file.
func (r *runner) readLate(c *claim) ([]byte, error) {
	var late []byte
	err := c.r.Each(func(line []byte) error {
		if r.m.keep(line, true) {
			late = append(late, line...)
		}
		return nil
	})
	return late, err
}

// append appends b to the committed compact file in one O_APPEND write,
// fsynced. A failed write is cut back off so that the file still ends
// with a complete line; if even that fails, no more is appended to it
// (every later claim stays).
func (r *runner) append(b []byte) error {
	if r.broken != nil {
		return r.broken
	}
	f, err := os.OpenFile(r.rep.Compact, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if hookAppend != nil {
		err = hookAppend(r.rep.Compact, b)
	}
	if err == nil {
		_, err = f.Write(b)
	}
	if err == nil {
		err = f.Sync()
	}
	if err != nil {
		if terr := f.Truncate(fi.Size()); terr != nil {
			r.broken = fmt.Errorf("%w (and the compact file could not be cut back: %v)", err, terr)
		}
	}
	return err
}
