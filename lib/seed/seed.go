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
	// Live is set when hist captures the agent's prompts live (its hook,
	// extension or plugin is installed): a prompt typed a moment ago is
	// then left to a later run (Settle).
	Live bool
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

	collectors []*collector // the sources' records, spilled together
	held       int64        // bytes of records in memory, since the last spill

	now int64 // the run's time (ms), for Settle

	led *ledger.Ledger // read when the first prompt comes
	st  *ledger.State  // read when first needed
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

// track records a temp file being written, unless the run was stopped.
func (r *Runner) track(path string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stopped {
		return errStopped
	}
	r.temps[path] = struct{}{}
	return nil
}

// running returns errStopped once the run was stopped (Interrupt).
func (r *Runner) running() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stopped {
		return errStopped
	}
	return nil
}

func (r *Runner) untrack(path string) {
	r.mu.Lock()
	delete(r.temps, path)
	r.mu.Unlock()
}

// bootstrap is one run of Bootstrap, phase by phase: each source read
// (read), what to write planned (plan), then written (write).
type bootstrap struct {
	r      *Runner
	rep    *Report
	hidden *tombstone.Set
	order  map[string]int // source name -> its place
	all    []*collector   // every source's, for the temp files to remove
	reads  []sourceRead   // the sources read whole
	jobs   []job
	// Under the lock: hidden.json changed since the sources were read
	// (refilter), another run imported meanwhile (ledgerGrew).
	refilter, ledgerGrew bool
}

// sourceRead is a source read whole: its buckets, and the listing of its
// files to record once they are imported.
type sourceRead struct {
	src     Source
	buckets map[string]*bucket
	listing *ledger.Listing
}

// job is one bucket to write.
type job struct {
	src string
	b   *bucket
}

// Bootstrap reads each source and writes, for every project it names (or
// for Opts.Project only), what no earlier run imported: the source's seed
// file when the project has none, an import file when it has. It returns
// an error only when the store could not be written; what each source and
// file came to is in the report.
func (r *Runner) Bootstrap(sources []Source) (*Report, error) {
	o := &r.Opts
	r.now = o.Now().UnixMilli()
	b := &bootstrap{r: r, rep: &Report{}, order: map[string]int{}}
	hidden, err := tombstone.Load(o.Store.Hidden())
	if err != nil {
		b.rep.Untrusted = err
		return b.rep, nil
	}
	b.hidden = hidden
	defer b.cleanup()
	for i, src := range sources {
		b.order[src.Name] = i
		if err := b.read(src); err != nil {
			return b.rep, err
		}
	}
	b.plan()
	if len(b.jobs) == 0 {
		if !o.DryRun {
			b.sweepIdle()
		}
		return b.rep, b.advance(nil)
	}
	return b.rep, b.write()
}

// cleanup removes whatever was not made a seed file: temp files, and the
// folders made for them when they stay empty.
func (b *bootstrap) cleanup() {
	var made []string
	for _, c := range b.all {
		for _, bk := range c.buckets {
			made = append(made, b.r.discard(bk)...)
		}
	}
	removeEmpty(made)
	b.r.collectors = nil
}

// read reads one source into its buckets. An error is a store failure.
func (b *bootstrap) read(src Source) error {
	r, o := b.r, &b.r.Opts
	res := SourceResult{Name: src.Name, Root: src.Root}
	if _, err := os.Stat(src.Root); errors.Is(err, fs.ErrNotExist) {
		res.Status = SourceMissing
		b.rep.Sources = append(b.rep.Sources, res)
		return nil
	}
	keep, listing := r.keeper(src, &res.Unchanged)
	c := newCollector(r, src, b.hidden, listing)
	r.collectors = append(r.collectors, c)
	b.all = append(b.all, c)
	o.Progress.setSource(src.Name)
	start := time.Now()
	st, err, storeErr := scanInto(src, keep, c)
	res.Elapsed, res.Stats = time.Since(start), st
	res.NoCwd, res.Recent, res.Approx = c.noCwd, c.recent, c.approx
	o.Progress.done(st)
	o.Progress.setSource("")
	if storeErr != nil {
		return storeErr
	}
	res.Status, res.Err = sourceStatus(src, st, err)
	if res.Status == SourceRead {
		b.reads = append(b.reads, sourceRead{src, c.buckets, listing})
	} else {
		// Nothing of it is written: its records go (its temp files at
		// the end).
		r.collectors = r.collectors[:len(r.collectors)-1]
		for _, bk := range c.buckets {
			bk.recs = nil
		}
	}
	b.rep.Sources = append(b.rep.Sources, res)
	return nil
}

// scanInto runs src's scan on a goroutine of its own and adds the
// prompts it finds to c on this one, in batches: reading and preparing
// the records share the work of a first import between two CPUs. It
// returns the scan's stats and error, and the first error c.add returned
// (a store failure, which stops the scan).
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
		files := "files"
		if st.Skipped == 1 {
			files = "file"
		}
		return SourceLayout, fmt.Sprintf("no transcript it knows under %s (%d %s passed over)", src.Root, st.Skipped, files)
	}
	return SourceRead, ""
}

// plan lists what there is to write, in a stable order: by project
// folder, then source order. With one project asked for, each source
// read that had nothing for it says so.
func (b *bootstrap) plan() {
	for _, rd := range b.reads {
		for _, bk := range rd.buckets {
			b.jobs = append(b.jobs, job{rd.src.Name, bk})
		}
	}
	sort.SliceStable(b.jobs, func(i, j int) bool {
		if b.jobs[i].b.cwd != b.jobs[j].b.cwd {
			return b.jobs[i].b.cwd < b.jobs[j].b.cwd
		}
		return b.order[b.jobs[i].src] < b.order[b.jobs[j].src]
	})
	project := b.r.Opts.Project
	if project == "" {
		return
	}
	have := map[string]bool{}
	for _, j := range b.jobs {
		have[j.src] = true
	}
	hash, _ := store.ProjectOf(project)
	for _, rd := range b.reads {
		if !have[rd.src.Name] {
			b.rep.Files = append(b.rep.Files, FileResult{Project: hash, Cwd: project, Source: rd.src.Name, Status: FileNone})
		}
	}
}

// sweepIdle removes, when there is nothing to write, the temp files a
// killed run left (see sweepStale).
func (b *bootstrap) sweepIdle() {
	o := &b.r.Opts
	dirs := []string{o.Store.Root}
	if o.Project != "" {
		hash, _ := store.ProjectOf(o.Project)
		dirs = append(dirs, o.Store.ProjectDir(hash))
	}
	b.r.sweepStale(dirs)
}

// advance records, once what each source yielded is in place, the stamps
// of the files it read (see keeper).
func (b *bootstrap) advance(results []FileResult) error {
	r := b.r
	if r.Opts.DryRun {
		return nil
	}
	failed := map[string]bool{}
	for _, fr := range results {
		if fr.Status == FileFailed {
			failed[fr.Source] = true
		}
	}
	for _, rd := range b.reads {
		// A run for one project passes over the others' prompts: its
		// stamps are not recorded.
		if r.Opts.Project == "" && !failed[rd.src.Name] {
			r.state().SetFiles(rd.listing)
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
func (b *bootstrap) write() error {
	r, o := b.r, &b.r.Opts
	if !o.DryRun {
		lk, err := lock.Acquire(o.Store.Lock(), o.LockWait)
		if errors.Is(err, lock.ErrTimeout) {
			b.rep.Busy = err
			return nil
		}
		if err != nil {
			return fmt.Errorf("taking the store's lock: %w", err)
		}
		defer lk.Release()
		if ok, err := b.refresh(); !ok || err != nil {
			return err
		}
	}
	results := make([]FileResult, len(b.jobs))
	for i, j := range b.jobs {
		results[i] = r.writeBucket(j.src, j.b, b.hidden, b.refilter, b.ledgerGrew)
	}
	syncFolders(results)
	b.rep.Files = append(b.rep.Files, results...)
	if !o.DryRun {
		if err := b.commit(results); err != nil {
			return err
		}
	}
	return b.register(results)
}

// refresh, under the lock, takes in what changed while the sources were
// read: tombstones that deletes added meanwhile (the run filters again
// with them), keys another run imported; and removes the temp files
// killed runs left. ok is false when hidden.json cannot be trusted now.
func (b *bootstrap) refresh() (ok bool, err error) {
	r, o := b.r, &b.r.Opts
	now, err := tombstone.Load(o.Store.Hidden())
	if err != nil {
		b.rep.Untrusted = err
		return false, nil
	}
	b.refilter = !sameEntries(b.hidden, now)
	b.hidden = now
	if r.led != nil {
		if b.ledgerGrew, err = r.led.Refresh(); err != nil {
			return false, fmt.Errorf("reading %s: %w", r.led.Path, err)
		}
	}
	swept := map[string]bool{o.Store.Root: true}
	sweepTemps(o.Store.Root) // registry.json's, history-global.jsonl's
	for _, j := range b.jobs {
		if dir := filepath.Dir(j.b.path); !swept[dir] {
			swept[dir] = true
			sweepTemps(dir)
		}
	}
	return true, nil
}

// commit records what was written: the ledger keys, the stamps; and
// removes, from this machine's files of the projects imported into, what
// other machines' tombstones hide (docs/sync.md).
func (b *bootstrap) commit(results []FileResult) error {
	r, o := b.r, &b.r.Opts
	buckets := make([]*bucket, len(b.jobs))
	for i, j := range b.jobs {
		buckets[i] = j.b
	}
	// On a failure the files are in place: the next run finds their
	// records in the store and does not import them again.
	if err := r.commitKeys(buckets, results); err != nil {
		return err
	}
	if err := b.advance(results); err != nil {
		return err
	}
	swept := map[string]bool{}
	for _, j := range b.jobs {
		if swept[j.b.hash] {
			continue
		}
		swept[j.b.hash] = true
		n, err := deletion.Sweep(o.Store, store.Scope{Project: j.b.hash, Also: j.b.also}, b.hidden)
		b.rep.Swept += n
		if err != nil && b.rep.SweepErr == "" {
			b.rep.SweepErr = err.Error()
		}
	}
	return nil
}

// register names the projects written to in registry.json, and returns
// the first file's failure.
func (b *bootstrap) register(results []FileResult) error {
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
		if err := b.r.Opts.Store.RegisterAll(reg); err != nil {
			b.rep.RegistryErr = err.Error()
		}
	}
	return firstErr
}

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
