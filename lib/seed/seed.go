// Package seed imports the prompts of the agents' transcripts into the
// store, each once (docs/hist-seed.md): each project's prompts from the
// agents' session transcripts (its seed file of an agent first, then the
// machine's import file of the agent), and the agents' prompt-recall files
// into the machine's global file (the legacy migration).
//
// The import ledger (lib/ledger) remembers every prompt event imported. A
// source is read whole, without the store's lock, before anything is
// written for it (one that cannot be read whole writes nothing); writes
// happen under the rewriters' lock (store.Lock).
package seed

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
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
	"hist/lib/words"
)

// Source is one agent's session transcripts.
type Source struct {
	Name string // transcript.SrcPi, SrcClaude, ...
	Root string // where its transcripts are (what Scan takes)
	Live bool   // hist captures its prompts live (hook, extension or plugin): see Settle
	// Scan reads every transcript under root that keep keeps (nil: all)
	// and emits each typed prompt; an I/O error is a *transcript.ReadError.
	Scan func(root string, keep transcript.Keep, emit func(transcript.Prompt) error) (transcript.Stats, error)
}

// Source statuses.
const (
	SourceRead    = "read"    // read whole
	SourceMissing = "missing" // its root does not exist
	SourceRetry   = "retry"   // a transcript could not be read: nothing written, run again later
	SourceLayout  = "layout"  // its layout was not recognised: skipped
)

// Seed file statuses.
const (
	FileWritten = "written" // the seed or import file was written
	FileWould   = "would"   // --dry-run: it would be
	FileNone    = "none"    // the source has no new prompt for the project
	FileFailed  = "failed"  // it could not be written (Err says why)
)

// SourceResult is what reading one source gave (an entry of the
// "sources" of hist-seed --json); the counts are transcript.Stats'.
type SourceResult struct {
	Name        string        `json:"source"`
	Root        string        `json:"root"`
	Status      string        `json:"status"`
	Files       int           `json:"files"`
	Bytes       int64         `json:"bytes"`
	Prompts     int           `json:"prompts"`
	Malformed   int           `json:"malformed"`
	Skipped     int           `json:"skipped"`
	Unchanged   int           `json:"unchanged"`       // files passed over: unchanged since a run read them
	NoCwd       int           `json:"no_cwd"`          // prompts without a usable cwd (not absolute), dropped
	Approx      int           `json:"approx_times"`    // prompts kept whose time is approximate (a session's start, a file's mtime)
	Seconds     float64       `json:"seconds"`         // Elapsed
	Err         string        `json:"error,omitempty"` // for SourceRetry and SourceLayout
	Undecodable []Undecodable `json:"undecodable,omitempty"`
	Subagent    int           `json:"-"`
	Elapsed     time.Duration `json:"-"`
}

// Undecodable is a file passed over: its content cannot be decoded.
type Undecodable struct {
	Path string `json:"path"`
	Err  string `json:"error"`
}

// FileResult is what one project got from one source: its seed file (the
// project's first import) or its import file. It is an entry of the
// "seeds" of hist-seed --json.
type FileResult struct {
	Project string `json:"project"` // hash
	Cwd     string `json:"cwd"`     // canonical project folder
	Source  string `json:"source"`
	Path    string `json:"file,omitempty"`
	Status  string `json:"status"`
	Prompts int    `json:"prompts"`         // records written (or that would be)
	Known   int    `json:"imported_before"` // prompts an earlier run imported, left out
	Live    int    `json:"captured_live"`   // prompts the project holds already, left out
	Recent  int    `json:"recent"`          // prompts typed less than Settle ago, left to a later run
	Hidden  int    `json:"hidden"`          // prompts hidden.json hides, left out
	Dupes   int    `json:"repeated"`        // repeats of a prompt at the same time, left out
	Err     string `json:"error,omitempty"` // for FileFailed
}

// Report is what a bootstrap did.
type Report struct {
	Sources []SourceResult
	Files   []FileResult
	// Untrusted (hidden.json cannot be trusted) or Busy (another rewriter
	// held the store's lock): nothing was written.
	Untrusted, Busy error
	RegistryErr     string // registry.json (advisory) could not be updated
	// Swept counts the records removed from this machine's files of the
	// projects imported into because another machine's tombstone hides
	// them; SweepErr names a file that kept them (still hidden).
	Swept    int
	SweepErr string
}

// Options says what a Runner does.
type Options struct {
	Store    store.Store
	Project  string // the canonical folder of the one project to import ("": all)
	DryRun   bool
	LockWait time.Duration    // for the rewriters' lock (default 10s)
	Progress *Progress        // kept up to date while sources are read, when set
	Now      func() time.Time // the clock (default time.Now)
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

// reading says that source is being read, or, with "", that the source
// before ended with st.
func (p *Progress) reading(source string, st transcript.Stats) {
	if p != nil {
		p.source.Store(source)
		p.Files.Add(int64(st.Files))
		p.Bytes.Add(st.Bytes)
	}
}

// Runner runs a bootstrap and a migration, once.
type Runner struct {
	Opts Options

	mu      sync.Mutex
	temps   map[string]struct{} // temp files being written
	lockDir string              // the migration lock folder, while held
	stopped bool

	collectors []*collector // the sources', whose records are spilled together
	held       int64        // bytes of records in memory, since the last spill
	made       []string     // folders made for temp files

	now int64 // the run's time (ms), for Settle

	led *ledger.Ledger // read when the first prompt comes
	st  *ledger.State  // read when first needed

	// A bootstrap's: read, planned, then written.
	rep    *Report
	hidden *tombstone.Set
	reads  []*collector // the sources read whole
	jobs   []*bucket
	// Under the lock: hidden.json changed since the sources were read
	// (refilter), another run imported meanwhile (ledgerGrew).
	refilter, ledgerGrew bool
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
// files), for a process about to exit on a signal; the run stops.
func (r *Runner) Interrupt() {
	r.mu.Lock()
	r.stopped = true
	for p := range r.temps {
		os.Remove(p)
	}
	r.temps = map[string]struct{}{}
	r.mu.Unlock()
	r.dropMigrationLock() // no run takes it again: it is stopped
}

var errStopped = errors.New("interrupted") // ends a run after Interrupt

// track records a temp file being written (none with ""), or returns
// errStopped once the run was stopped.
func (r *Runner) track(path string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stopped {
		return errStopped
	}
	if path != "" {
		r.temps[path] = struct{}{}
	}
	return nil
}

// Bootstrap reads each source and writes, for every project it names (or
// for Opts.Project only), what no earlier run imported. It returns an
// error only when the store could not be written; the rest is in the
// report.
func (r *Runner) Bootstrap(sources []Source) (*Report, error) {
	o := &r.Opts
	r.now = o.Now().UnixMilli()
	r.rep, r.reads, r.jobs = &Report{}, nil, nil
	var err error
	if r.hidden, err = tombstone.Load(o.Store.Hidden()); err != nil {
		r.rep.Untrusted = err
		return r.rep, nil
	}
	defer r.cleanup()
	for _, src := range sources {
		if err := r.read(src); err != nil {
			return r.rep, err
		}
	}
	r.plan()
	if len(r.jobs) == 0 {
		if !o.DryRun {
			r.sweepIdle()
		}
		return r.rep, r.advance(nil)
	}
	return r.rep, r.write()
}

// cleanup removes the temp files that did not become seed files, and the
// folders made for them that stay empty (deepest first).
func (r *Runner) cleanup() {
	for _, c := range r.collectors {
		for _, bk := range c.buckets {
			r.removeTemp(bk)
		}
	}
	sort.Slice(r.made, func(i, j int) bool { return len(r.made[i]) > len(r.made[j]) })
	for _, d := range r.made {
		os.Remove(d) // fails, as it should, when the folder holds anything
	}
	r.collectors, r.made = nil, nil
}

// read reads one source into its buckets. An error is a store failure.
func (r *Runner) read(src Source) error {
	o := &r.Opts
	res := SourceResult{Name: src.Name, Root: src.Root}
	if _, err := os.Stat(src.Root); errors.Is(err, fs.ErrNotExist) {
		res.Status = SourceMissing
		r.rep.Sources = append(r.rep.Sources, res)
		return nil
	}
	keep, listing := r.keeper(src, &res.Unchanged)
	c := &collector{r: r, src: src, listing: listing, buckets: map[string]*bucket{}, canon: map[string]canonical{}}
	r.collectors = append(r.collectors, c)
	o.Progress.reading(src.Name, transcript.Stats{})
	start := time.Now()
	st, err, storeErr := scanInto(src, keep, c)
	res.Elapsed = time.Since(start)
	res.Seconds, res.NoCwd, res.Approx = res.Elapsed.Seconds(), c.noCwd, c.approx
	res.Files, res.Bytes, res.Prompts, res.Malformed, res.Skipped, res.Subagent = st.Files, st.Bytes, st.Prompts, st.Malformed, st.Skipped, st.Subagent
	for _, u := range st.Undecodable {
		res.Undecodable = append(res.Undecodable, Undecodable{u.Path, u.Err.Error()})
	}
	o.Progress.reading("", st)
	if storeErr != nil {
		return storeErr
	}
	res.Status, res.Err = sourceStatus(src, st, err)
	if res.Status == SourceRead {
		r.reads = append(r.reads, c)
	} else {
		// Nothing of it is written: its records go (its temp files at
		// the end).
		for _, bk := range c.buckets {
			bk.recs = nil
		}
	}
	r.rep.Sources = append(r.rep.Sources, res)
	return nil
}

// scanInto runs src's scan on a goroutine of its own and adds the
// prompts it finds to c on this one, in batches: a first import's reading
// and preparing share two CPUs. storeErr is c.add's first error, which
// stops the scan.
func scanInto(src Source, keep transcript.Keep, c *collector) (st transcript.Stats, err, storeErr error) {
	const batchSize = 64
	batches := make(chan []transcript.Prompt, 4)
	quit := make(chan struct{})
	go func() {
		defer close(batches)
		var batch []transcript.Prompt
		send := func() bool {
			select {
			case batches <- batch:
				batch = make([]transcript.Prompt, 0, batchSize)
				return true
			case <-quit:
				return false
			}
		}
		st, err = src.Scan(src.Root, keep, func(p transcript.Prompt) error {
			if batch = append(batch, p); len(batch) == batchSize && !send() {
				return errStopped
			}
			return nil
		})
		if len(batch) > 0 {
			send()
		}
	}()
	progress := c.r.Opts.Progress
	for batch := range batches {
		for _, p := range batch {
			if storeErr != nil {
				break
			}
			if progress != nil {
				progress.Prompts.Add(1)
			}
			if storeErr = c.add(p); storeErr != nil {
				close(quit)
			}
		}
	}
	// The files with prompts left to a later run are read again then
	// (the listing is the scan's until it ends).
	for _, f := range c.unsettled {
		c.listing.Forget(f)
	}
	return st, err, storeErr
}

// sourceStatus is what a source's scan came to.
func sourceStatus(src Source, st transcript.Stats, err error) (status, msg string) {
	var re *transcript.ReadError
	switch {
	case errors.As(err, &re):
		return SourceRetry, re.Error()
	case err != nil:
		return SourceLayout, err.Error()
	case st.Files == 0 && st.Skipped > 0:
		return SourceLayout, fmt.Sprintf("no transcript it knows under %s (%s passed over)", src.Root, words.Plural(st.Skipped, "file", "files"))
	}
	return SourceRead, ""
}

// plan lists what there is to write, in a stable order: by project
// folder, then source order (the order of reads; a source has one bucket
// per folder). With one project asked for, each source read that had
// nothing for it says so.
func (r *Runner) plan() {
	for _, c := range r.reads {
		for _, bk := range c.buckets {
			r.jobs = append(r.jobs, bk)
		}
		if p := r.Opts.Project; p != "" && len(c.buckets) == 0 {
			hash, _ := store.ProjectOf(p)
			r.rep.Files = append(r.rep.Files, FileResult{Project: hash, Cwd: p, Source: c.src.Name, Status: FileNone})
		}
	}
	sort.SliceStable(r.jobs, func(i, j int) bool { return r.jobs[i].cwd < r.jobs[j].cwd })
}

// sweepIdle removes, when there is nothing to write, the temp files a
// killed run left, under the rewriters' lock, which it takes only when
// there are some (best effort: a busy lock leaves them to the next run).
func (r *Runner) sweepIdle() {
	o := &r.Opts
	dirs := []string{o.Store.Root}
	if o.Project != "" {
		hash, _ := store.ProjectOf(o.Project)
		dirs = append(dirs, o.Store.ProjectDir(hash))
	}
	if len(staleTemps(o.Store, dirs...)) == 0 {
		return
	}
	if lk, err := lock.Acquire(o.Store.Lock(), o.LockWait); err == nil {
		defer lk.Release()
		sweepTemps(o.Store, dirs...)
	}
}

// advance records, once what each source yielded is in place, the stamps
// of the files it read (see keeper).
func (r *Runner) advance(results []FileResult) error {
	if r.Opts.DryRun {
		return nil
	}
	for _, c := range r.reads {
		// A run for one project passes over the others' prompts: its
		// stamps are not recorded; nor are a source's with a file failed.
		if r.Opts.Project == "" && !slices.ContainsFunc(results, func(fr FileResult) bool {
			return fr.Status == FileFailed && fr.Source == c.src.Name
		}) {
			r.state().SetFiles(c.listing)
		}
	}
	if err := store.EnsureDir(r.Opts.Store.Root); err != nil {
		return fmt.Errorf("creating the store %s: %w", r.Opts.Store.Root, err)
	}
	if err := r.state().Save(); err != nil {
		return fmt.Errorf("writing %s: %w", r.state().Path, err)
	}
	return nil
}

// write writes the jobs under the rewriters' lock, then records what was
// imported.
func (r *Runner) write() error {
	o := &r.Opts
	if !o.DryRun {
		lk, err := lock.Acquire(o.Store.Lock(), o.LockWait)
		if errors.Is(err, lock.ErrTimeout) {
			r.rep.Busy = err
			return nil
		}
		if err != nil {
			return fmt.Errorf("taking the store's lock: %w", err)
		}
		defer lk.Release()
		if ok, err := r.refresh(); !ok || err != nil {
			return err
		}
	}
	results := make([]FileResult, len(r.jobs))
	for i, bk := range r.jobs {
		results[i] = r.writeBucket(bk)
	}
	syncFolders(results)
	r.rep.Files = append(r.rep.Files, results...)
	if !o.DryRun {
		if err := r.commit(results); err != nil {
			return err
		}
	}
	return r.register(results)
}

// refresh, under the lock, takes in what changed while the sources were
// read (tombstones, keys another run imported), and removes the temp files
// killed runs left. ok is false when hidden.json cannot be trusted now.
func (r *Runner) refresh() (ok bool, err error) {
	o := &r.Opts
	now, err := tombstone.Load(o.Store.Hidden())
	if err != nil {
		r.rep.Untrusted = err
		return false, nil
	}
	r.refilter = !slices.Equal(r.hidden.Entries, now.Entries)
	r.hidden = now
	if r.led != nil {
		if r.ledgerGrew, err = r.led.Refresh(); err != nil {
			return false, fmt.Errorf("reading %s: %w", r.led.Path, err)
		}
	}
	dirs := []string{o.Store.Root} // registry.json's, the global file's
	for _, bk := range r.jobs {
		dirs = append(dirs, filepath.Dir(bk.path))
	}
	sweepTemps(o.Store, slices.Compact(dirs)...) // the jobs are sorted by folder
	return true, nil
}

// commit records what was written: the ledger keys, the stamps; and
// removes, from this machine's files of the projects imported into, what
// other machines' tombstones hide (docs/sync.md).
func (r *Runner) commit(results []FileResult) error {
	// On a failure the files are in place: the next run finds their
	// records in the store and does not import them again.
	if err := r.commitKeys(results); err != nil {
		return err
	}
	if err := r.advance(results); err != nil {
		return err
	}
	swept := map[string]bool{}
	for _, bk := range r.jobs {
		if swept[bk.hash] {
			continue
		}
		swept[bk.hash] = true
		n, err := deletion.Sweep(r.Opts.Store, store.Scope{Project: bk.hash, Also: bk.also}, r.hidden)
		r.rep.Swept += n
		if err != nil && r.rep.SweepErr == "" {
			r.rep.SweepErr = err.Error()
		}
	}
	return nil
}

// register names the projects written to in registry.json, and returns
// the first file's failure.
func (r *Runner) register(results []FileResult) error {
	var firstErr error
	reg := map[string]string{}
	for _, fr := range results {
		if fr.Status == FileFailed && firstErr == nil {
			firstErr = errors.New(fr.Err)
		}
		if fr.Status == FileWritten {
			reg[fr.Project] = fr.Cwd
		}
	}
	if len(reg) > 0 {
		// registry.json is advisory: a failure leaves the seeds in place.
		if err := r.Opts.Store.RegisterAll(reg); err != nil {
			r.rep.RegistryErr = err.Error()
		}
	}
	return firstErr
}

// sweepTemps removes the temp files that killed runs left in dirs (copies
// of prompts, maybe deleted since). The caller holds the store's lock.
func sweepTemps(st store.Store, dirs ...string) {
	for _, p := range staleTemps(st, dirs...) {
		os.Remove(p)
	}
}

// staleTemps lists this machine's temp files in dirs whose process is
// gone (another machine's pid says nothing here: store.TempOrigin).
func staleTemps(st store.Store, dirs ...string) []string {
	legacy := st.OwnsLegacy(false)
	var out []string
	for _, dir := range dirs {
		ents, _ := os.ReadDir(dir)
		for _, e := range ents {
			if e.Type().IsRegular() && atomicfile.IsTemp(e.Name()) && st.Owns(store.TempOrigin(e.Name()), legacy) && atomicfile.Stale(e.Name()) {
				out = append(out, filepath.Join(dir, e.Name()))
			}
		}
	}
	return out
}
