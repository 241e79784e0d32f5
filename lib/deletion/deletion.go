// Package deletion removes every copy of a prompt from a scope of the store
// and tombstones it in hidden.json. hist-delete and the selector both call
// Delete.
//
// A delete holds the rewriters' lock (store.Lock) for its whole run, so it
// never interleaves with a compaction, a seed or another delete; captures
// never lock and keep appending while files are rewritten. See rewrite.go
// for how no concurrent append is lost.
//
// The order (docs/hist-delete.md): hidden.json is loaded first (an untrusted file
// stops everything), the scope's files are rewritten, then the tombstones
// are written, and only then is the outcome chosen, so it describes the
// final state.
package deletion

import (
	"errors"
	"fmt"
	"hist/lib/words"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"hist/lib/atomicfile"
	"hist/lib/identity"
	"hist/lib/lock"
	"hist/lib/record"
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
	NotStored                       // Options.Stored: a prompt has no copy in the store; refused, nothing changed
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
	case NotStored:
		return "not-stored"
	}
	return fmt.Sprintf("outcome(%d)", int(o))
}

// Notice is the user notice for o (docs/hist-delete.md) ("" for Clean; Untrusted
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
	Tombstones int      // prompts newly tombstoned (or that would be)
	Err        error    // the error behind NothingRemoved/RemovedNotHidden/Both/Untrusted

	AlreadyHidden int      // prompts tombstoned already: their entry moved to the newest end
	NotFound      []string // prompts with no copy in the scope: nothing removed for them
	NotStored     []string // Options.Stored: prompts with no copy anywhere in the store
	Elsewhere     Elsewhere
	// Dropped counts the oldest tombstones hidden.json's cap pushed out
	// (their prompts can be listed again where copies remain); DroppedOwn
	// those of this delete itself, when it tombstoned more than the cap.
	Dropped, DroppedOwn int

	Scanned int      // store files read
	Carry   []string // carry files written for lines that could not be put back
	DryRun  bool

	// Foreign counts the copies of the deleted prompts in other machines'
	// files anywhere in the store (and, on a machine that does not own
	// them, in files without a machine id): a delete never rewrites those,
	// the tombstone hides them, and their machine removes them at its next
	// delete, compaction or import (docs/store-format.md).
	Foreign int
	// Swept counts the lines removed from this machine's files because
	// another machine's tombstone hides them.
	Swept int
}

// Elsewhere counts the copies of the deleted prompts a delete leaves
// outside its scope (a tombstone hides them, until hidden.json's cap drops
// it).
type Elsewhere struct {
	ProjectCopies int // in other projects' files
	Projects      int // how many other projects hold them
	Global        int // in history-global.jsonl and its carry files
}

// String says where copies remain and how to remove them; "" when none.
func (e Elsewhere) String() string {
	var where []string
	if e.ProjectCopies > 0 {
		where = append(where, "in "+words.Plural(e.Projects, "other project", "other projects"))
	}
	if e.Global > 0 {
		where = append(where, "in history-global.jsonl")
	}
	n := e.ProjectCopies + e.Global
	if n == 0 {
		return ""
	}
	verb := "remain"
	if n == 1 {
		verb = "remains"
	}
	return fmt.Sprintf("%s %s %s: hist-delete --all removes them", words.Plural(n, "copy", "copies"), verb, strings.Join(where, " and "))
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
	// Hide tombstones the prompts with no copy in the scope too, so they
	// stay hidden wherever a copy turns up and are not imported again.
	Hide bool
	// Stored refuses the whole delete (NotStored), before anything is
	// changed, when a prompt has no copy anywhere in the store and Hide is
	// not set: prompts read from a pipe must be ones the store holds, so
	// a garbled or cut record never deletes another prompt.
	Stored bool

	noPrefilter bool // tests: parse every file
}

// Delete removes every copy of each prompt (by identity) in the scope's
// files, then tombstones the prompts it found. Blank prompts are ignored.
// A project's delete also removes the copies in history-global.jsonl that
// came from the project: those whose session id the project's own records
// name (the legacy migration copied its recall files there). Copies left
// elsewhere in the store are counted in Result.Elsewhere.
//
// A prompt with no copy in the scope is listed in Result.NotFound and is
// tombstoned only with Options.Hide.
func Delete(st store.Store, sc store.Scope, prompts []string, opt Options) Result {
	res := Result{Prompts: len(prompts), DryRun: opt.DryRun}
	targets := make(map[string]struct{}, len(prompts))
	forms := make([][]string, len(prompts)) // each prompt's normalized forms
	given := make(map[string]bool, len(prompts))
	for i, p := range prompts {
		n := identity.Normalize(p)
		if given[n] {
			continue // a repeat counts once
		}
		given[n] = true
		// Each distinct text is normalized once: most prompts hold no
		// secret and no NUL, so their other forms are the prompt itself
		// (the same string, compared at once).
		texts := []string{p}
		add := func(text string) {
			if slices.Contains(texts, text) {
				return
			}
			texts = append(texts, text)
			n := identity.Normalize(text)
			if n == "" || slices.Contains(forms[i], n) {
				return
			}
			targets[n] = struct{}{}
			forms[i] = append(forms[i], n)
		}
		if n != "" {
			targets[n] = struct{}{}
			forms[i] = append(forms[i], n)
		}
		// A prompt given with its secret was stored redacted (capture and
		// imports redact by default): its redacted form goes too. So does
		// the form new records keep for a prompt holding a NUL.
		for _, f := range []string{redact.Text(p), record.StoredText(p)} {
			add(f)
			add(record.StoredText(f))
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
	// Only this machine's files are rewritten; other machines' are read
	// for the report (their machine removes the copies, and the tombstone
	// hides them meanwhile). Claimed before st.Hidden() names the file to
	// write, which may be hidden.json for the machine that owns it.
	legacy := st.OwnsLegacy(!opt.DryRun)
	// Loaded again under the lock, so two deletes never lose each other's
	// entry.
	hidden, err := tombstone.Load(st.Hidden())
	if err != nil {
		res.Outcome, res.Err = Untrusted, err
		return res
	}
	all, err := st.Files(sc)
	if err != nil {
		res.Outcome, res.Err = NothingRemoved, fmt.Errorf("listing the store's files: %w", err)
		return res
	}
	if len(targets) == 0 {
		return res // nothing asked: Clean, nothing to do
	}
	// This machine's files lose too what other machines' tombstones hide
	// (sweep).
	files, foreign := split(st, all, legacy)
	sweep := hidden.HidesOthers()
	var others []store.File // this machine's files outside the scope
	if !sc.All {
		whole, err := st.Files(store.Scope{All: true})
		if err != nil {
			res.Outcome, res.Err = NothingRemoved, fmt.Errorf("listing the store's files: %w", err)
			return res
		}
		in := make(map[string]bool, len(all))
		for _, f := range all {
			in[f.Path] = true
		}
		for _, f := range whole {
			if !in[f.Path] {
				others = append(others, f)
			}
		}
		var more []store.File
		others, more = split(st, others, legacy)
		foreign = append(foreign, more...)
	}
	// Copies in other machines' files, anywhere in the store: read only.
	inScope := make(map[string]bool, len(all))
	for _, f := range all {
		inScope[f.Path] = true
	}
	found := map[string]int{}      // copies in the scope's foreign files, by normalized prompt
	foreignAll := map[string]int{} // copies in every foreign file, by normalized prompt
	for i, fr := range readAgain(foreign, rewriteAll(foreign, targets, true, opt.noPrefilter, nil, nil), targets, opt.noPrefilter) {
		for n, c := range fr.hits {
			res.Foreign += c
			foreignAll[n] += c
			if inScope[foreign[i].Path] {
				found[n] += c
			}
		}
	}

	// lookAgain reads, read only, the other machines' files of the scope
	// that a fresh listing shows and no earlier one did, while unfound
	// reports a prompt with no copy yet: a file that Syncthing is
	// replacing is missing from a listing for an instant (the old file is
	// removed before the new one is renamed into place), and a copy it
	// holds must not go unseen. It lists again, for up to vanishWait,
	// while Syncthing writes in the scope's folders.
	lookAgain := func(unfound func() bool) {
		deadline := time.Now().Add(vanishWait)
		for unfound() {
			if again, err := st.Files(sc); err == nil {
				var fresh []store.File
				for _, f := range again {
					if !inScope[f.Path] && !st.Owns(filepath.Base(f.Path), legacy) {
						inScope[f.Path] = true
						fresh = append(fresh, f)
					}
				}
				for _, fr := range readAgain(fresh, rewriteAll(fresh, targets, true, opt.noPrefilter, nil, nil), targets, opt.noPrefilter) {
					for n, c := range fr.hits {
						res.Foreign += c
						foreignAll[n] += c
						found[n] += c
					}
				}
			}
			if !unfound() || time.Now().After(deadline) || !st.Pulling(sc) {
				return
			}
			time.Sleep(vanishWait / 20)
		}
	}

	// Where the prompts have copies outside the scope, and, for prompts
	// read from a pipe, whether each has a copy at all: read only.
	elsewhere := map[string]int{} // copies by normalized prompt
	var globalSessions map[string]struct{}
	projects := map[string]bool{}
	for i, fr := range readAgain(others, rewriteAll(others, targets, true, opt.noPrefilter, nil, nil), targets, opt.noPrefilter) {
		for _, c := range fr.hits {
			if others[i].Project == "" {
				res.Elsewhere.Global += c
			} else {
				res.Elsewhere.ProjectCopies += c
				projects[others[i].Project] = true
			}
		}
		res.Elsewhere.Projects = len(projects)
		for n, c := range fr.hits {
			elsewhere[n] += c
		}
		if others[i].Project == "" {
			for s := range fr.sessions {
				if globalSessions == nil {
					globalSessions = map[string]struct{}{}
				}
				globalSessions[s] = struct{}{}
			}
		}
	}
	if opt.Stored && !opt.Hide {
		mine := map[string]int{}
		for _, fr := range rewriteAll(files, targets, true, opt.noPrefilter, nil, nil) {
			for n, c := range fr.hits {
				mine[n] += c
			}
		}
		stored := func(i int) bool {
			return count(elsewhere, forms[i])+count(foreignAll, forms[i])+count(mine, forms[i]) > 0
		}
		lookAgain(func() bool {
			for i := range prompts {
				if len(forms[i]) > 0 && !stored(i) {
					return true
				}
			}
			return false
		})
		for i, p := range prompts {
			if len(forms[i]) > 0 && !stored(i) {
				res.NotStored = append(res.NotStored, p)
			}
		}
		if len(res.NotStored) > 0 {
			res.Outcome = NotStored
			return res
		}
	}

	res.Scanned = len(files)
	removed := map[string]int{} // copies removed (or found, in a failed file) by normalized prompt
	collect := func(frs []fileResult) {
		for _, fr := range frs {
			if fr.err != nil {
				res.Failed = append(res.Failed, &FileError{Path: fr.path, Err: fr.err})
			}
			if fr.rewritten {
				res.Copies += fr.copies - fr.swept
				res.Swept += fr.swept
				res.Rewritten = append(res.Rewritten, fr.path)
			}
			if fr.carry != "" {
				res.Carry = append(res.Carry, fr.carry)
			}
			for n, c := range fr.hits {
				removed[n] += c
			}
		}
	}
	collect(rewriteAll(files, targets, opt.DryRun, opt.noPrefilter, nil, sweep))
	if !sc.All && len(globalSessions) > 0 {
		// The global copies from this project: their session is one the
		// project's records name.
		mine := projectSessions(files, globalSessions)
		var global []store.File
		for _, f := range others {
			if f.Project == "" {
				global = append(global, f)
			}
		}
		if len(mine) > 0 {
			frs := rewriteAll(global, targets, opt.DryRun, opt.noPrefilter, mine, nil)
			res.Scanned += len(global)
			for _, fr := range frs {
				for n, c := range fr.hits {
					elsewhere[n] -= c
					res.Elsewhere.Global -= c
				}
			}
			collect(frs)
		}
	}
	sort.Strings(res.Rewritten)
	sort.Strings(res.Carry)
	if !opt.DryRun {
		sweepTemps(st, sc, legacy)
	}

	// The prompts to tombstone: those found, or all with Hide. Prompts
	// with copies left elsewhere go last, so that when hidden.json is
	// full their tombstones are the last to be dropped.
	lookAgain(func() bool {
		for i := range prompts {
			if len(forms[i]) > 0 && count(removed, forms[i])+count(found, forms[i]) == 0 {
				return true
			}
		}
		return false
	})
	var keep, later []int
	for i, p := range prompts {
		if len(forms[i]) == 0 {
			continue
		}
		left := count(elsewhere, forms[i])
		if count(removed, forms[i])+count(found, forms[i]) == 0 {
			res.NotFound = append(res.NotFound, p)
			if !opt.Hide {
				continue
			}
		}
		if left > 0 {
			later = append(later, i)
		} else {
			keep = append(keep, i)
		}
	}
	var keys []string
	var owner []int // the prompt of each key
	for _, i := range append(keep, later...) {
		for _, n := range forms[i] {
			keys = append(keys, identity.KeyOfNormalized([]byte(n)))
			owner = append(owner, i)
		}
	}
	isNew, dropped := hidden.AddKeys(keys)
	res.DroppedOwn = max(len(keys)-tombstone.Cap, 0)
	res.Dropped = dropped - res.DroppedOwn
	// A prompt counts once: newly tombstoned when one of its keys is new.
	anyNew := false
	for j := range keys {
		anyNew = anyNew || isNew[j]
		if j == len(keys)-1 || owner[j+1] != owner[j] {
			if anyNew {
				res.Tombstones++
			} else {
				res.AlreadyHidden++
			}
			anyNew = false
		}
	}

	if opt.DryRun {
		if len(res.Failed) > 0 {
			res.Outcome = PartlyHidden // what a real delete would end with
		}
		return res
	}
	var saveErr error
	if len(keys) > 0 {
		saveErr = hidden.Save()
	}
	if saveErr != nil {
		res.Tombstones, res.AlreadyHidden, res.Dropped, res.DroppedOwn = 0, 0, 0, 0
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

// count sums the copies of a prompt's forms.
func count(by map[string]int, forms []string) int {
	n := 0
	for _, f := range forms {
		n += by[f]
	}
	return n
}

// projectSessions returns the sessions of want that a record in files
// names. An unreadable file names none.
func projectSessions(files []store.File, want map[string]struct{}) map[string]struct{} {
	out := map[string]struct{}{}
	for _, f := range files {
		fh, err := store.Open(f.Path)
		if err != nil {
			continue
		}
		record.Scan(fh, func(l *record.Line) error {
			if _, ok := want[string(l.Session)]; ok && len(l.Session) > 0 {
				out[string(l.Session)] = struct{}{}
			}
			return nil
		})
		fh.Close()
	}
	return out
}

// rewriteAll runs rewriteFile over files, a few at a time (at least 4 even
// on fewer cores, so one file's fsync overlaps another's scan).
// With only set, a copy counts only in a record naming one of its sessions.
// With sweep set, the records it hides go too (counted apart: swept).
func rewriteAll(files []store.File, targets map[string]struct{}, dry, noPrefilter bool, only map[string]struct{}, sweep *tombstone.Set) []fileResult {
	out := make([]fileResult, len(files))
	sorted := make([]string, 0, len(targets))
	for t := range targets {
		sorted = append(sorted, t)
	}
	sort.Strings(sorted)
	var pf *prefilter
	if !noPrefilter && sweep == nil { // a swept record may be any prompt
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
			m.only, m.sweep = only, sweep
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
func SweepTemps(st store.Store, sc store.Scope) { sweepTemps(st, sc, st.OwnsLegacy(false)) }

// sweepTemps touches only this machine's temp files (store.TempOrigin):
// another machine's pid says nothing here.
func sweepTemps(st store.Store, sc store.Scope, legacy bool) {
	var dirs []string
	if sc.All {
		dirs = append(dirs, st.Root)
		hashes, _ := st.ProjectHashes()
		for _, h := range hashes {
			dirs = append(dirs, st.ProjectDir(h))
		}
	} else {
		dirs = append(dirs, st.ProjectDir(sc.Project))
		for _, h := range sc.Also {
			dirs = append(dirs, st.ProjectDir(h))
		}
	}
	for _, d := range dirs {
		ents, err := os.ReadDir(d)
		if err != nil {
			continue
		}
		for _, e := range ents {
			if e.Type().IsRegular() && atomicfile.IsTemp(e.Name()) && st.Owns(store.TempOrigin(e.Name()), legacy) && atomicfile.Stale(e.Name()) {
				os.Remove(filepath.Join(d, e.Name()))
			}
		}
	}
}

// split parts files into this machine's (store.Owns) and the others'.
func split(st store.Store, files []store.File, legacy bool) (own, foreign []store.File) {
	for _, f := range files {
		if st.Owns(filepath.Base(f.Path), legacy) {
			own = append(own, f)
		} else {
			foreign = append(foreign, f)
		}
	}
	return own, foreign
}

// Sweep removes from this machine's files of the scope the records that
// only other machines' tombstones hide (a prompt deleted on another
// machine: see docs/sync.md); hidden is the union hist read. hist-seed
// sweeps the projects it imports into, as a delete sweeps its scope. The
// caller holds the store's rewriters' lock. It returns the records
// removed; a file it could not rewrite keeps them (the tombstones still
// hide them) and is named in the error.
func Sweep(st store.Store, sc store.Scope, hidden *tombstone.Set) (int, error) {
	sweep := hidden.HidesOthers()
	if sweep == nil {
		return 0, nil
	}
	all, err := st.Files(sc)
	if err != nil {
		return 0, err
	}
	files, _ := split(st, all, st.OwnsLegacy(false))
	n := 0
	var errs []error
	for _, fr := range rewriteAll(files, map[string]struct{}{}, false, true, nil, sweep) {
		n += fr.swept
		if fr.err != nil {
			errs = append(errs, &FileError{Path: fr.path, Err: fr.err})
		}
	}
	return n, errors.Join(errs...)
}

// readAgain reads again, read only, the files of frs that were gone when
// they were read: another machine's file that its sync engine is
// replacing is missing for an instant (the old one removed, the new one
// not yet in place), and a copy it holds must not go unseen. Each is
// waited for up to vanishWait.
func readAgain(files []store.File, frs []fileResult, targets map[string]struct{}, noPrefilter bool) []fileResult {
	for i := range frs {
		if !frs[i].vanished {
			continue
		}
		for deadline := time.Now().Add(vanishWait); time.Now().Before(deadline); time.Sleep(vanishWait / 20) {
			if _, err := os.Lstat(files[i].Path); err == nil {
				frs[i] = rewriteAll(files[i:i+1], targets, true, noPrefilter, nil, nil)[0]
				break
			}
		}
	}
	return frs
}

// vanishWait is how long readAgain waits for a file to be back.
const vanishWait = 500 * time.Millisecond
