// Package seed imports the prompts of the agents' transcripts into the
// store, each once: the per-project import from the agents' session
// transcripts (a project's first import writes its seed file, seed.jsonl
// for pi, seed-<agent>.jsonl for the others; later ones write import
// files) and the legacy migration of the agents' prompt-recall files into
// history-global.jsonl.
//
// The import ledger (lib/ledger) remembers every prompt event imported, so
// that a run imports only what no earlier run did, and a prompt deleted
// since never comes back (see docs/hist-seed.md). A seed file is never
// regenerated. Each source is read whole before anything is written for
// it; a source that cannot be read whole (an I/O error in any of its
// files) writes nothing, so that a later run retries. Tombstoned prompts
// are never written, and while hidden.json cannot be trusted nothing is.
//
// Writes happen under the rewriters' lock (store.Lock), so a seed never
// races a delete or a compaction. The transcripts themselves are read
// without it: reading takes the time, writing is quick.
package seed

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"hist/lib/atomicfile"
	"hist/lib/deletion"
	"hist/lib/ledger"
	"hist/lib/lock"
	"hist/lib/store"
	"hist/lib/tombstone"
	"hist/lib/transcript"
)

// Source is one agent's session transcripts.
type Source struct {
	Name string // transcript.SrcPi, SrcClaude, ...
	Root string // where its transcripts are (what Scan takes)
	// Scan reads every transcript under root that keep keeps (nil: all)
	// and emits each typed prompt once; an I/O error is a
	// *transcript.ReadError.
	Scan func(root string, keep transcript.Keep, emit func(transcript.Prompt) error) (transcript.Stats, error)
}

// FileName is the seed file a source writes in each project folder from
// machine (store.SeedFile).
func FileName(source, machine string) string { return store.SeedFile(source, machine) }

// Source statuses.
const (
	SourceRead    = "read"    // read whole
	SourceMissing = "missing" // its root does not exist
	SourceRetry   = "retry"   // a transcript could not be read: nothing written, run again later
	SourceLayout  = "layout"  // its layout was not recognised: skipped
)

// Seed file statuses.
const (
	FileWritten = "written" // the seed or import file was created
	FileWould   = "would"   // --dry-run: it would be created
	FileNone    = "none"    // the source has no new prompt for the project
	FileFailed  = "failed"  // it could not be written (Err says why)
)

// SourceResult is what reading one source gave.
type SourceResult struct {
	Name      string
	Root      string
	Status    string
	Stats     transcript.Stats
	Unchanged int    // files passed over: unchanged since a run read them
	Recent    int    // prompts typed less than Settle ago, left to a later run (the files are read again)
	NoCwd     int    // prompts without a usable cwd (not absolute), dropped
	Approx    int    // prompts kept whose time is approximate (a session's start, a file's mtime)
	Err       string // for SourceRetry and SourceLayout
	Elapsed   time.Duration
}

// FileResult is what one project got from one source: its seed file (the
// project's first import) or an import file.
type FileResult struct {
	Project string // hash
	Cwd     string // canonical project folder
	Source  string
	Path    string
	Status  string
	Prompts int    // records written (or that would be)
	Known   int    // prompts an earlier run imported, left out
	Recent  int    // prompts typed less than Settle ago, left to a later run
	Live    int    // prompts the project holds already (captured live), left out
	Hidden  int    // prompts left out because hidden.json hides them
	Dupes   int    // repeats of a prompt at the same time, left out
	Err     string // for FileFailed
}

// Report is what a bootstrap did.
type Report struct {
	Sources []SourceResult
	Files   []FileResult
	// Untrusted is set when hidden.json cannot be trusted: nothing was
	// written (the bootstrap waits until it can be read safely).
	Untrusted error
	// Busy is set when another rewriter held the store's lock for the
	// whole wait: nothing was written.
	Busy error
	// RegistryErr says registry.json could not be updated (it is advisory:
	// the seed files are in place).
	RegistryErr string
	// Swept counts the records removed from this machine's files of the
	// projects imported into because another machine's tombstone hides
	// them; SweepErr names a file that kept them (still hidden).
	Swept    int
	SweepErr string
}

// Options says what a Runner does.
type Options struct {
	Store store.Store
	// Project is the canonical folder of the one project to bootstrap;
	// empty means every project a source names.
	Project string
	DryRun  bool
	// LockWait is how long to wait for the rewriters' lock (default 10s).
	LockWait time.Duration
	// Progress, when set, is kept up to date while sources are read.
	Progress *Progress
	// Now is the clock (default time.Now).
	Now func() time.Time
	// NoRedact stores prompts verbatim; by default every prompt is
	// redacted (lib/redact) before the tombstone check and the write.
	NoRedact bool
}

// Progress counts what has been read so far; a display reads it from
// another goroutine.
type Progress struct {
	Prompts atomic.Int64 // prompts found
	Files   atomic.Int64 // files read whole by the sources done so far
	Bytes   atomic.Int64 // bytes read by the sources done so far
	source  atomic.Value // string: the source being read
}

// Source is the name of the source being read ("" between sources).
func (p *Progress) Source() string {
	s, _ := p.source.Load().(string)
	return s
}

func (p *Progress) setSource(s string) {
	if p != nil {
		p.source.Store(s)
	}
}

func (p *Progress) done(st transcript.Stats) {
	if p != nil {
		p.Files.Add(int64(st.Files))
		p.Bytes.Add(st.Bytes)
	}
}

// Runner runs a bootstrap and a migration, and can undo what a run holds
// when the process is interrupted (see Interrupt).
type Runner struct {
	Opts Options

	mu      sync.Mutex
	temps   map[string]struct{} // temp files being written
	lockDir string              // the migration lock folder, while held
	stopped bool

	// Records beyond spillAt bytes go to the buckets' temp files.
	collectors []*collector
	held       int64 // bytes of chunks holding records, since the last spill
	spills     int   // spills done (for tests)
	chunkMu    sync.Mutex
	free       [][]byte // written chunks, to reuse

	settled int64 // prompts after this time (ms) are left to a later run (Settle)

	led    *ledger.Ledger     // read when the first prompt comes
	st     *ledger.State      // read when first needed
	stLoad chan *ledger.State // the state being read (loadState)
}

// New returns a Runner for opts.
func New(opts Options) *Runner {
	if opts.LockWait == 0 {
		opts.LockWait = 10 * time.Second
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Runner{Opts: opts, temps: map[string]struct{}{}}
}

// Interrupt removes what the run holds (the migration lock folder, temp
// files) so that a process that is about to exit on a signal leaves the
// store as it found it. The run must not continue afterwards.
func (r *Runner) Interrupt() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.stopped = true
	for p := range r.temps {
		os.Remove(p)
	}
	r.temps = map[string]struct{}{}
	if r.lockDir != "" {
		os.Remove(r.lockDir)
		r.lockDir = ""
	}
}

// errStopped ends a run after Interrupt.
var errStopped = errors.New("interrupted")

func (r *Runner) track(path string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stopped {
		return errStopped
	}
	r.temps[path] = struct{}{}
	return nil
}

func (r *Runner) untrack(path string) {
	r.mu.Lock()
	delete(r.temps, path)
	r.mu.Unlock()
}

// Bootstrap reads each source and writes, for every project it names (or
// for Opts.Project only), the source's seed file when it does not exist.
// It returns an error only when the store could not be written; what each
// source and file came to is in the report.
func (r *Runner) Bootstrap(sources []Source) (*Report, error) {
	o := &r.Opts
	rep := &Report{}
	r.settled = o.Now().Add(-Settle).UnixMilli()
	r.loadState()
	hidden, err := tombstone.Load(o.Store.Hidden())
	if err != nil {
		rep.Untrusted = err
		return rep, nil
	}
	// Whatever was not made a seed file goes: temp files, and the folders
	// made for them when they stay empty.
	var all []*collector
	defer func() {
		var made []string
		for _, c := range all {
			for _, b := range c.buckets {
				made = append(made, r.discard(b)...)
			}
		}
		removeEmpty(made)
		r.collectors = nil
	}()
	type read struct {
		src     Source
		buckets map[string]*bucket
		seen    *ledger.Listing // the files listed
		recent  int             // prompts left to a later run
	}
	var reads []read
	for _, src := range sources {
		res := SourceResult{Name: src.Name, Root: src.Root}
		if _, err := os.Stat(src.Root); errors.Is(err, fs.ErrNotExist) {
			res.Status = SourceMissing
			rep.Sources = append(rep.Sources, res)
			continue
		}
		c := newCollector(r, src.Name, hidden)
		r.collectors = append(r.collectors, c)
		all = append(all, c)
		o.Progress.setSource(src.Name)
		start := time.Now()
		keep := r.keeper(src, &res.Unchanged)
		st, err := src.Scan(src.Root, keep, func(p transcript.Prompt) error {
			if o.Progress != nil {
				o.Progress.Prompts.Add(1)
			}
			if err := c.add(p); err != nil {
				c.err = err
				return err
			}
			return nil
		})
		if ferr := c.flush(); ferr != nil && c.err == nil {
			c.err = ferr
		}
		res.Elapsed = time.Since(start)
		res.Stats = st
		res.NoCwd = c.noCwd
		res.Recent = c.recent
		res.Approx = c.approx
		o.Progress.done(st)
		o.Progress.setSource("")
		if c.err != nil {
			// A temp file could not be written: a store failure.
			return rep, c.err
		}
		var re *transcript.ReadError
		switch {
		case errors.As(err, &re):
			res.Status, res.Err = SourceRetry, re.Error()
		case err != nil:
			res.Status, res.Err = SourceLayout, err.Error()
		case st.Files == 0 && st.Skipped > 0:
			res.Status = SourceLayout
			files := "files"
			if st.Skipped == 1 {
				files = "file"
			}
			res.Err = fmt.Sprintf("no transcript it knows under %s (%d %s passed over)", src.Root, st.Skipped, files)
		default:
			res.Status = SourceRead
		}
		if res.Status == SourceRead {
			reads = append(reads, read{src, c.buckets, keep.listing(), c.recent})
		} else {
			// Nothing of it is written: forget its records (its temp files
			// go at the end).
			r.collectors = r.collectors[:len(r.collectors)-1]
			for _, b := range c.buckets {
				r.drop(b)
			}
		}
		rep.Sources = append(rep.Sources, res)
	}

	// What there is to write, in a stable order: by project folder, then
	// source order.
	type job struct {
		src string
		b   *bucket
	}
	var jobs []job
	for _, rd := range reads {
		for _, b := range rd.buckets {
			jobs = append(jobs, job{rd.src.Name, b})
		}
	}
	order := map[string]int{}
	for i, s := range sources {
		order[s.Name] = i
	}
	sort.SliceStable(jobs, func(i, j int) bool {
		if jobs[i].b.cwd != jobs[j].b.cwd {
			return jobs[i].b.cwd < jobs[j].b.cwd
		}
		return order[jobs[i].src] < order[jobs[j].src]
	})
	// With one project asked for, say so for each source read that had
	// nothing for it.
	if o.Project != "" {
		have := map[string]bool{}
		for _, j := range jobs {
			have[j.src] = true
		}
		hash, _ := store.ProjectOf(o.Project)
		for _, rd := range reads {
			if !have[rd.src.Name] {
				rep.Files = append(rep.Files, FileResult{Project: hash, Cwd: o.Project, Source: rd.src.Name, Status: FileNone})
			}
		}
	}
	// advance records, once what each source yielded is in place, the
	// files it read (see keeper).
	advance := func(results []FileResult) error {
		if o.DryRun {
			return nil
		}
		failed := map[string]bool{}
		for _, fr := range results {
			if fr.Status == FileFailed {
				failed[fr.Source] = true
			}
		}
		for _, rd := range reads {
			// A run for one project passes over the others' prompts:
			// its stamps are not recorded.
			if o.Project == "" && !failed[rd.src.Name] && rd.recent == 0 {
				r.state().SetFiles(rd.seen)
			}
		}
		if err := r.state().Save(); err != nil {
			return fmt.Errorf("writing %s: %w", r.state().Path, err)
		}
		return nil
	}
	if len(jobs) == 0 {
		if !o.DryRun {
			// Nothing to write (every source missing, empty or already
			// seeded): the temp files a killed run left still go.
			dirs := []string{o.Store.Root}
			if o.Project != "" {
				hash, _ := store.ProjectOf(o.Project)
				dirs = append(dirs, o.Store.ProjectDir(hash))
			}
			r.sweepStale(dirs)
		}
		return rep, advance(nil)
	}

	var lk *lock.Lock
	refilter, ledgerGrew := false, false
	if !o.DryRun {
		lk, err = lock.Acquire(o.Store.Lock(), o.LockWait)
		if errors.Is(err, lock.ErrTimeout) {
			rep.Busy = err
			return rep, nil
		}
		if err != nil {
			return rep, fmt.Errorf("taking the store's lock: %w", err)
		}
		defer lk.Release()
		// Deletes that finished while the sources were read have added
		// their tombstones: filter again with what is there now.
		now, err := tombstone.Load(o.Store.Hidden())
		if err != nil {
			rep.Untrusted = err
			return rep, nil
		}
		refilter = !sameEntries(hidden, now)
		hidden = now
		// Another run may have imported meanwhile.
		if r.led != nil {
			if ledgerGrew, err = r.led.Refresh(); err != nil {
				return rep, fmt.Errorf("reading %s: %w", r.led.Path, err)
			}
		}
		swept := map[string]bool{o.Store.Root: true}
		sweepTemps(o.Store.Root) // registry.json's, history-global.jsonl's
		for _, j := range jobs {
			if dir := filepath.Dir(j.b.path); !swept[dir] {
				swept[dir] = true
				sweepTemps(dir)
			}
		}
	}
	// Each file is fsynced, then its folder: many in flight at once, so
	// that they share the file system's journal commits (on ext4, each
	// commit costs a cache flush of the disk).
	results := make([]FileResult, len(jobs))
	eachParallel(len(jobs), writers, func(i int) {
		results[i] = r.writeSeed(jobs[i].src, jobs[i].b, hidden, refilter, ledgerGrew)
	})
	syncFolders(results, writers)
	if !o.DryRun {
		buckets := make([]*bucket, len(jobs))
		for i, j := range jobs {
			buckets[i] = j.b
		}
		if err := r.commitKeys(buckets, results); err != nil {
			// The files are in place: the next run finds their records
			// in the store and does not import them again.
			rep.Files = append(rep.Files, results...)
			return rep, err
		}
		if err := advance(results); err != nil {
			rep.Files = append(rep.Files, results...)
			return rep, err
		}
		// The projects imported into lose, from this machine's files,
		// what other machines' tombstones hide (docs/sync.md).
		swept := map[string]bool{}
		for _, j := range jobs {
			if swept[j.b.hash] {
				continue
			}
			swept[j.b.hash] = true
			n, err := deletion.Sweep(o.Store, store.Scope{Project: j.b.hash, Also: j.b.also}, hidden)
			rep.Swept += n
			if err != nil && rep.SweepErr == "" {
				rep.SweepErr = err.Error()
			}
		}
	}
	var firstErr error
	reg := map[string]string{}
	for _, fr := range results {
		if fr.Status == FileFailed && firstErr == nil {
			firstErr = errors.New(fr.Err)
		}
		if fr.Status == FileWritten {
			reg[fr.Project] = fr.Cwd
		}
		rep.Files = append(rep.Files, fr)
	}
	if len(reg) > 0 {
		// registry.json is advisory: a failure leaves the seeds in place.
		if err := o.Store.RegisterAll(reg); err != nil {
			rep.RegistryErr = err.Error()
		}
	}
	return rep, firstErr
}

// writers is how many seed files are written (and fsynced) at once.
const writers = 64

// sweepStale removes the temp files that killed runs left in dirs, under
// the rewriters' lock, which it takes only when there is one (best
// effort: a busy lock leaves them to the next run).
func (r *Runner) sweepStale(dirs []string) {
	var stale []string
	for _, dir := range dirs {
		if len(staleTemps(dir)) > 0 {
			stale = append(stale, dir)
		}
	}
	if len(stale) == 0 {
		return
	}
	lk, err := lock.Acquire(r.Opts.Store.Lock(), r.Opts.LockWait)
	if err != nil {
		return
	}
	defer lk.Release()
	for _, dir := range stale {
		sweepTemps(dir)
	}
}

// sweepTemps removes the temp files that killed runs left in dir: they
// hold copies of prompts (some may have been deleted since). Only temp
// files whose process is gone are touched, and only under the store's
// lock.
func sweepTemps(dir string) {
	for _, p := range staleTemps(dir) {
		os.Remove(p)
	}
}

// staleTemps lists the temp files in dir whose process is gone.
func staleTemps(dir string) []string {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range ents {
		if e.Type().IsRegular() && atomicfile.IsTemp(e.Name()) && atomicfile.Stale(e.Name()) {
			out = append(out, filepath.Join(dir, e.Name()))
		}
	}
	return out
}
