// Package deletion removes every copy of a prompt from a scope of the store
// and tombstones it in hidden.json. hist-delete and the selector both call
// Delete.
//
// A delete holds the rewriters' lock (store.Lock) for its whole run, so it
// never interleaves with a compaction, a seed or another delete; captures
// never lock and keep appending while files are rewritten. See rewrite.go
// for how no concurrent append is lost.
//
// The order is the spec's: hidden.json is loaded first (an untrusted file
// stops everything), the scope's files are rewritten, then the tombstones
// are written, and only then is the outcome chosen, so it describes the
// final state.
package deletion

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"sync"
	"time"

	"hist/lib/atomicfile"
	"hist/lib/identity"
	"hist/lib/lock"
	"hist/lib/redact"
	"hist/lib/store"
	"hist/lib/tombstone"
)

// Outcome is the final state of a delete; it picks the notice shown to users.
type Outcome int

const (
	Clean            Outcome = iota // every copy removed, tombstone written
	NothingRemoved                  // failed before touching any file (no tombstone)
	PartlyHidden                    // some files could not be read or rewritten; tombstone written
	RemovedNotHidden                // copies removed, tombstone write failed
	Both                            // some files not rewritten and tombstone write failed
	Untrusted                       // hidden.json cannot be trusted: refused, nothing changed
)

// String names the outcome for scripts (hist-delete --json).
func (o Outcome) String() string {
	switch o {
	case Clean:
		return "clean"
	case NothingRemoved:
		return "nothing-removed"
	case PartlyHidden:
		return "partly-rewritten-hidden"
	case RemovedNotHidden:
		return "removed-not-hidden"
	case Both:
		return "partly-rewritten-not-hidden"
	case Untrusted:
		return "untrusted"
	}
	return fmt.Sprintf("outcome(%d)", int(o))
}

// Notice is the spec's exact user notice for o ("" for Clean; Untrusted
// has none: show Result.Err, the recovery message, instead).
func (o Outcome) Notice() string {
	switch o {
	case NothingRemoved:
		return "Store delete failed; nothing was removed."
	case PartlyHidden:
		return "Some history files could not be rewritten; the prompt is hidden, but copies may remain on disk."
	case RemovedNotHidden:
		return "Deleted from the store, but hiding failed — the prompt may reappear from session transcripts."
	case Both:
		return "Some history files could not be rewritten and hiding failed — the prompt may reappear from those files or from session transcripts."
	}
	return ""
}

// Result reports what Delete did.
type Result struct {
	Outcome    Outcome
	Prompts    int      // prompts asked for
	Copies     int      // copies removed (or that would be, with DryRun)
	Rewritten  []string // files rewritten (or that would be, with DryRun), sorted
	Failed     []error  // files that could not be read or rewritten (*FileError)
	Tombstones int      // tombstone entries written (or that would be)
	Err        error    // the error behind NothingRemoved/RemovedNotHidden/Both/Untrusted

	Scanned int      // store files read
	Carry   []string // carry files written for lines that could not be put back
	DryRun  bool
}

// FileError is one store file that could not be read or rewritten; the
// file is left as it was unless Err says otherwise.
type FileError struct {
	Path string
	Err  error
}

func (e *FileError) Error() string { return e.Path + ": " + e.Err.Error() }
func (e *FileError) Unwrap() error { return e.Err }

// DefaultWait is how long a delete waits for another rewriter to finish.
const DefaultWait = 30 * time.Second

// Options tune Delete.
type Options struct {
	DryRun bool          // report what would be removed; change nothing (no lock is taken)
	Wait   time.Duration // how long to wait for the rewriters' lock (0: DefaultWait)

	noPrefilter bool // tests: parse every file
}

// Delete removes every copy of each prompt (by identity) in the scope's
// files, then tombstones them. Blank prompts are ignored. A prompt with no
// copy in the scope is still tombstoned, so it cannot come back from a
// transcript import.
func Delete(st store.Store, sc store.Scope, prompts []string, opt Options) Result {
	res := Result{Prompts: len(prompts), DryRun: opt.DryRun}
	targets := make(map[string]struct{}, len(prompts))
	var keys []string
	add := func(p string) {
		n := identity.AppendNormalized(nil, p)
		if len(n) == 0 {
			return
		}
		if _, dup := targets[string(n)]; dup {
			return
		}
		targets[string(n)] = struct{}{}
		keys = append(keys, identity.KeyOfNormalized(n))
	}
	for _, p := range prompts {
		add(p)
		// A prompt given with its secret was stored redacted (capture and
		// imports redact by default): its redacted form goes too.
		if r := redact.Text(p); r != p {
			add(r)
		}
	}

	// An untrusted hidden.json, or a scope that cannot be listed, refuses
	// before anything is created, the lock file included; both are checked
	// again under the lock.
	if _, err := tombstone.Load(st.Hidden()); err != nil {
		res.Outcome, res.Err = Untrusted, err
		return res
	}
	if _, err := st.Files(sc); err != nil {
		res.Outcome, res.Err = NothingRemoved, fmt.Errorf("listing the store's files: %w", err)
		return res
	}
	if !opt.DryRun {
		wait := opt.Wait
		if wait <= 0 {
			wait = DefaultWait
		}
		lk, err := lock.Acquire(st.Lock(), wait)
		if err != nil {
			res.Outcome, res.Err = NothingRemoved, fmt.Errorf("taking the store's rewrite lock: %w", err)
			return res
		}
		defer lk.Release()
	}
	// Loaded again under the lock, so two deletes never lose each other's
	// entry.
	hidden, err := tombstone.Load(st.Hidden())
	if err != nil {
		res.Outcome, res.Err = Untrusted, err
		return res
	}
	files, err := st.Files(sc)
	if err != nil {
		res.Outcome, res.Err = NothingRemoved, fmt.Errorf("listing the store's files: %w", err)
		return res
	}
	if len(targets) == 0 {
		return res // nothing asked: Clean, nothing to do
	}

	res.Scanned = len(files)
	for _, fr := range rewriteAll(files, targets, opt.DryRun, opt.noPrefilter) {
		if fr.err != nil {
			res.Failed = append(res.Failed, &FileError{Path: fr.path, Err: fr.err})
		}
		if fr.rewritten {
			res.Copies += fr.copies
			res.Rewritten = append(res.Rewritten, fr.path)
		}
		if fr.carry != "" {
			res.Carry = append(res.Carry, fr.carry)
		}
	}
	sort.Strings(res.Rewritten)
	sort.Strings(res.Carry)

	if opt.DryRun {
		res.Tombstones = len(keys)
		if len(res.Failed) > 0 {
			res.Outcome = PartlyHidden // what a real delete would end with
		}
		return res
	}
	sweepTemps(st, sc)

	for _, k := range keys {
		hidden.AddKey(k)
	}
	saveErr := hidden.Save()
	if saveErr == nil {
		res.Tombstones = len(keys)
	}
	// The outcome is chosen now, after the tombstone write.
	switch {
	case len(res.Failed) == 0 && saveErr == nil:
		res.Outcome = Clean
	case saveErr == nil:
		res.Outcome = PartlyHidden
		res.Err = errors.Join(res.Failed...)
	case len(res.Failed) == 0:
		res.Outcome, res.Err = RemovedNotHidden, fmt.Errorf("writing %s: %w", st.Hidden(), saveErr)
	default:
		res.Outcome, res.Err = Both, fmt.Errorf("writing %s: %w", st.Hidden(), saveErr)
	}
	return res
}

// rewriteAll runs rewriteFile over files, a few at a time (at least 4 even
// on fewer cores, so one file's fsync overlaps another's scan).
func rewriteAll(files []store.File, targets map[string]struct{}, dry, noPrefilter bool) []fileResult {
	out := make([]fileResult, len(files))
	sorted := make([]string, 0, len(targets))
	for t := range targets {
		sorted = append(sorted, t)
	}
	sort.Strings(sorted)
	var pf *prefilter
	if !noPrefilter {
		pf = newPrefilter(sorted)
	}
	workers := min(max(runtime.GOMAXPROCS(0), 4), 8, len(files)) // more than the cores: fsyncs overlap
	var next int
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			m := newMatcher(targets, sorted, pf)
			for {
				mu.Lock()
				i := next
				next++
				mu.Unlock()
				if i >= len(files) {
					return
				}
				out[i] = rewriteFile(files[i].Path, m, dry)
			}
		}()
	}
	wg.Wait()
	return out
}

// sweepTemps removes the temp files that crashed rewrites left in the
// scope's folders: they may hold copies of deleted prompts. Only temp
// files whose process is gone are touched, and only under the lock.
// SweepTemps removes the temp files of the scope's folders whose process
// is gone (left by a killed rewrite). The caller holds the rewriters' lock.
func SweepTemps(st store.Store, sc store.Scope) { sweepTemps(st, sc) }

func sweepTemps(st store.Store, sc store.Scope) {
	var dirs []string
	if sc.All {
		dirs = append(dirs, st.Root)
		hashes, _ := st.ProjectHashes()
		for _, h := range hashes {
			dirs = append(dirs, st.ProjectDir(h))
		}
	} else {
		dirs = append(dirs, st.ProjectDir(sc.Project))
	}
	for _, d := range dirs {
		ents, err := os.ReadDir(d)
		if err != nil {
			continue
		}
		for _, e := range ents {
			if e.Type().IsRegular() && atomicfile.IsTemp(e.Name()) && atomicfile.Stale(e.Name()) {
				os.Remove(filepath.Join(d, e.Name()))
			}
		}
	}
}
