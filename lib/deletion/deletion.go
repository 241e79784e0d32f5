// Package deletion removes every copy of a prompt from a scope of the store
// and tombstones it in hidden.json (docs/hist-delete.md); hist-delete and
// the selector both call Delete. A delete holds the rewriters' lock
// (store.Lock) for its whole run; captures never lock and keep appending
// (rewrite.go says how no append is lost). hidden.json is loaded first (an
// untrusted file stops everything), the files are rewritten, the
// tombstones written, and only then is the outcome chosen, so that it
// describes the final state.
package deletion

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
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
	"hist/lib/words"
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

var outcomes = [...]string{"clean", "nothing-removed", "partly-rewritten-hidden", "removed-not-hidden", "partly-rewritten-not-hidden", "untrusted", "not-stored"}

// String names the outcome for scripts (hist-delete --json).
func (o Outcome) String() string { return outcomes[o] }

// Notice is the user notice for o (docs/hist-delete.md) ("" for Clean; Untrusted
// has none: show Result.Err, the recovery message, instead).
func (o Outcome) Notice() string {
	return map[Outcome]string{
		NothingRemoved:   "Store delete failed; nothing was removed.",
		PartlyHidden:     "Some history files could not be rewritten; the prompt is hidden, but copies may remain on disk.",
		RemovedNotHidden: "Deleted from the store, but hiding failed — the prompt may reappear from session transcripts.",
		Both:             "Some history files could not be rewritten and hiding failed — the prompt may reappear from those files or from session transcripts.",
	}[o]
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
	// Dropped counts the older tombstones hidden.json's cap pushed out
	// (none hides a prompt still on disk: those are kept past the cap);
	// DroppedOwn those of this delete itself, when it tombstoned more than
	// the cap (their copies were all removed).
	Dropped, DroppedOwn int

	Scanned int      // store files read
	Carry   []string // carry files written for lines that could not be put back
	DryRun  bool

	// Foreign counts the copies in other machines' files anywhere in the
	// store: their machine removes them (docs/store-format.md).
	Foreign int
	Swept   int // lines removed from this machine's files that other machines' tombstones hide
}

// Elsewhere counts the copies of the deleted prompts a delete leaves
// outside its scope.
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
	verb := map[bool]string{true: "remains", false: "remain"}[n == 1]
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

// lockWait is how long a delete waits for another rewriter to finish.
const lockWait = 30 * time.Second

// Options tune Delete.
type Options struct {
	DryRun bool // report what would be removed; change nothing (no lock is taken)
	Hide   bool // tombstone the prompts with no copy in the scope too
	// Stored refuses the whole delete (NotStored), before anything is
	// changed, when a prompt has no copy anywhere in the store and Hide is
	// not set, so that a garbled or cut record read from a pipe never
	// deletes another prompt.
	Stored bool
}

// Delete removes every copy of each prompt (by identity) in the scope's
// files, then tombstones the prompts it found (docs/hist-delete.md). A
// project's delete also removes the copies in history-global.jsonl whose
// session id the project's own records name. Blank prompts are ignored.
func Delete(st store.Store, sc store.Scope, prompts []string, opt Options) Result {
	d := newRun(st, sc, prompts, opt)
	// An untrusted hidden.json, or a scope that cannot be listed, refuses
	// before anything is created, the lock file included; both are checked
	// again under the lock.
	if !d.load() {
		return d.res
	}
	if !opt.DryRun {
		lk, err := lock.Acquire(st.Lock(), lockWait)
		if err != nil {
			d.res.Outcome, d.res.Err = NothingRemoved, fmt.Errorf("taking the store's rewrite lock: %w", err)
			return d.res
		}
		defer lk.Release()
	}
	// Only this machine's files are rewritten. Claimed before st.Hidden()
	// names the file to write, which may be hidden.json for the machine
	// that owns it.
	d.legacy = st.OwnsLegacy(!opt.DryRun)
	// Loaded again under the lock, so two deletes never lose each other's
	// entry.
	if !d.load() || len(d.targets) == 0 || !d.listOthers() {
		return d.res // nothing asked: Clean, nothing to do
	}
	d.pinCandidates()
	d.readForeign()
	d.readOthers()
	if opt.Stored && !opt.Hide && !d.allStored() {
		d.res.Outcome = NotStored
		return d.res
	}
	d.rewrite()
	keys := d.tombstone()
	if opt.DryRun {
		if len(d.res.Failed) > 0 {
			d.res.Outcome = PartlyHidden // what a real delete would end with
		}
		return d.res
	}
	d.save(keys)
	return d.res
}

// run is one delete, from its prompts to its outcome.
type run struct {
	st      store.Store
	sc      store.Scope
	opt     Options
	prompts []string
	forms   [][]string          // each prompt's normalized forms (none for a repeat or a blank)
	targets map[string]struct{} // every form of every prompt
	res     Result

	legacy  bool // this machine owns the files without a machine id
	hidden  *tombstone.Set
	all     []store.File    // the scope's files
	inScope map[string]bool // by path: all, and what lookAgain found
	files   []store.File    // this machine's files of the scope: rewritten
	foreign []store.File    // other machines' files, anywhere: read only
	others  []store.File    // this machine's files outside the scope: read only

	// Copies by normalized prompt: in the scope's foreign files (found),
	// in every foreign file (foreignAll), in this machine's files outside
	// the scope (elsewhere), and removed from (or found in a failed file
	// of) the scope (removed).
	found, foreignAll, elsewhere, removed map[string]int
	globalSessions                        map[string]struct{} // sessions of the global file's copies

	pins *pins // the tombstones the cap could drop that hide a stored prompt
}

func newRun(st store.Store, sc store.Scope, prompts []string, opt Options) *run {
	d := &run{st: st, sc: sc, opt: opt, prompts: prompts,
		forms: make([][]string, len(prompts)), targets: map[string]struct{}{},
		found: map[string]int{}, foreignAll: map[string]int{}, elsewhere: map[string]int{}, removed: map[string]int{},
		globalSessions: map[string]struct{}{}}
	d.res = Result{Prompts: len(prompts), DryRun: opt.DryRun}
	given := map[string]bool{}
	for i, p := range prompts {
		n := identity.Normalize(p)
		if given[n] {
			continue // a repeat counts once
		}
		given[n] = true
		// A prompt given with its secret was stored redacted (capture and
		// imports redact by default): its redacted form goes too. So does
		// the form new records keep for a prompt holding a NUL.
		r, s := redact.Text(p), record.StoredText(p)
		for _, text := range []string{p, r, record.StoredText(r), s, record.StoredText(s)} {
			if n := identity.Normalize(text); n != "" && !slices.Contains(d.forms[i], n) {
				d.forms[i] = append(d.forms[i], n)
				d.targets[n] = struct{}{}
			}
		}
	}
	return d
}

// load reads the tombstones and lists the scope; false when the delete
// stops there (the outcome is set).
func (d *run) load() bool {
	var err error
	if d.hidden, err = tombstone.Load(d.st.Hidden()); err != nil {
		d.res.Outcome, d.res.Err = Untrusted, err
		return false
	}
	if d.all, err = d.st.Files(d.sc); err != nil {
		d.res.Outcome, d.res.Err = NothingRemoved, listError(err)
		return false
	}
	return true
}

// listError says the store's files could not all be listed (a delete
// must see every copy), with the chmod that fixes a permission error.
func listError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) && words.Chmod(pe.Path, err) != "" {
		return fmt.Errorf("listing the store's files: %w; let hist read it: %s", err, words.Chmod(pe.Path, err))
	}
	return fmt.Errorf("listing the store's files: %w", err)
}

// listOthers splits the store's files into this machine's files of the
// scope, its files outside the scope and the other machines' files.
func (d *run) listOthers() bool {
	d.inScope = make(map[string]bool, len(d.all))
	for _, f := range d.all {
		d.inScope[f.Path] = true
	}
	d.files, d.foreign = d.split(d.all)
	if d.sc.All {
		return true
	}
	whole, err := d.st.Files(store.Scope{All: true})
	if err != nil {
		d.res.Outcome, d.res.Err = NothingRemoved, listError(err)
		return false
	}
	var more []store.File
	d.others, more = d.split(slices.DeleteFunc(whole, func(f store.File) bool { return d.inScope[f.Path] }))
	d.foreign = append(d.foreign, more...)
	return true
}

// split parts files into this machine's (store.Owns) and the others'.
func (d *run) split(files []store.File) (own, foreign []store.File) {
	for _, f := range files {
		if d.st.Owns(filepath.Base(f.Path), d.legacy) {
			own = append(own, f)
		} else {
			foreign = append(foreign, f)
		}
	}
	return own, foreign
}

// pinCandidates prepares, when the cap will drop tombstones once this
// delete's are added, to note those that hide a line staying on disk: the
// reads that follow note them, and they are kept past the cap.
func (d *run) pinCandidates() {
	n := 0
	for _, f := range d.forms {
		n += len(f)
	}
	if len(d.hidden.Entries)+n > tombstone.Cap {
		d.pins = &pins{candidates: tombstone.New(slices.Clone(d.hidden.Entries)), found: map[string]bool{}}
	}
}

// readForeign counts the copies in other machines' files: read only.
func (d *run) readForeign() {
	for i, fr := range d.read(d.foreign) {
		d.countForeign(fr, d.inScope[d.foreign[i].Path])
	}
}

func (d *run) countForeign(fr fileResult, inScope bool) {
	for n, c := range fr.hits {
		d.res.Foreign += c
		d.foreignAll[n] += c
		if inScope {
			d.found[n] += c
		}
	}
}

// readOthers counts the copies in this machine's files outside the scope,
// and the sessions of those in the global file: read only.
func (d *run) readOthers() {
	projects := map[string]bool{}
	for i, fr := range d.read(d.others) {
		project := d.others[i].Project
		for n, c := range fr.hits {
			d.elsewhere[n] += c
			if project == "" {
				d.res.Elsewhere.Global += c
			} else {
				d.res.Elsewhere.ProjectCopies += c
				projects[project] = true
			}
		}
		if project == "" {
			maps.Copy(d.globalSessions, fr.sessions)
		}
	}
	d.res.Elsewhere.Projects = len(projects)
}

// allStored reports whether every prompt has a copy somewhere in the
// store, listing those that have none in Result.NotStored.
func (d *run) allStored() bool {
	mine := map[string]int{}
	for _, fr := range d.rewriteAll(d.files, true, nil, nil) {
		for n, c := range fr.hits {
			mine[n] += c
		}
	}
	stored := func(i int) bool {
		return len(d.forms[i]) == 0 || count(d.elsewhere, d.forms[i])+count(d.foreignAll, d.forms[i])+count(mine, d.forms[i]) > 0
	}
	d.lookAgain(stored)
	for i, p := range d.prompts {
		if !stored(i) {
			d.res.NotStored = append(d.res.NotStored, p)
		}
	}
	return len(d.res.NotStored) == 0
}

// lookAgain reads the other machines' files of the scope that a fresh
// listing shows and no earlier one did, while a prompt is not done yet: a
// file that Syncthing is replacing is missing from a listing for an
// instant, and a copy it holds must not go unseen. It lists again, for up
// to vanishWait, while Syncthing writes in the scope's folders.
func (d *run) lookAgain(done func(i int) bool) {
	pending := func() bool {
		for i := range d.prompts {
			if !done(i) {
				return true
			}
		}
		return false
	}
	deadline := time.Now().Add(vanishWait)
	for pending() {
		if again, err := d.st.Files(d.sc); err == nil {
			var fresh []store.File
			for _, f := range again {
				if !d.inScope[f.Path] && !d.st.Owns(filepath.Base(f.Path), d.legacy) {
					d.inScope[f.Path] = true
					fresh = append(fresh, f)
				}
			}
			for _, fr := range d.read(fresh) {
				d.countForeign(fr, true)
			}
		}
		if !pending() || time.Now().After(deadline) || !d.st.Pulling(d.sc) {
			return
		}
		time.Sleep(vanishWait / 20)
	}
}

// rewrite removes the copies from this machine's files of the scope and,
// for a project, from the global file's records of the project's sessions.
func (d *run) rewrite() {
	d.res.Scanned = len(d.files)
	d.collect(d.rewriteAll(d.files, d.opt.DryRun, d.hidden.HidesOthers(), nil))
	if !d.sc.All && len(d.globalSessions) > 0 {
		// The global copies from this project: their session is one the
		// project's records name.
		if mine := projectSessions(d.files, d.globalSessions); len(mine) > 0 {
			var global []store.File
			for _, f := range d.others {
				if f.Project == "" {
					global = append(global, f)
				}
			}
			frs := d.rewriteAll(global, d.opt.DryRun, nil, mine)
			d.res.Scanned += len(global)
			for _, fr := range frs {
				for n, c := range fr.hits {
					d.elsewhere[n] -= c
					d.res.Elsewhere.Global -= c
				}
			}
			d.collect(frs)
		}
	}
	sort.Strings(d.res.Rewritten)
	sort.Strings(d.res.Carry)
	if !d.opt.DryRun {
		SweepTemps(d.st, d.sc)
	}
}

// collect adds the results of rewrites to Result.
func (d *run) collect(frs []fileResult) {
	for _, fr := range frs {
		if fr.Err != nil {
			d.res.Failed = append(d.res.Failed, &FileError{Path: fr.path, Err: fr.Err})
		}
		if fr.Rewritten {
			d.res.Copies += fr.Changed - fr.swept
			d.res.Swept += fr.swept
			d.res.Rewritten = append(d.res.Rewritten, fr.path)
		}
		if fr.Carry != "" {
			d.res.Carry = append(d.res.Carry, fr.Carry)
		}
		for n, c := range fr.hits {
			d.removed[n] += c
		}
	}
}

// tombstone adds the keys of the prompts to tombstone to the set, in
// memory: those found, or all with Hide. Past the cap, the oldest entries
// go, but never one that hides a prompt still on disk: an older entry the
// reads noted (pins), or this delete's own for a prompt with copies left
// elsewhere.
func (d *run) tombstone() []string {
	found := func(i int) bool {
		return len(d.forms[i]) == 0 || count(d.removed, d.forms[i])+count(d.found, d.forms[i]) > 0
	}
	d.lookAgain(found)
	var keys []string
	var starts []int // where each prompt's keys start
	left := map[string]bool{}
	for i, p := range d.prompts {
		if len(d.forms[i]) == 0 {
			continue
		}
		if !found(i) {
			d.res.NotFound = append(d.res.NotFound, p)
			if !d.opt.Hide {
				continue
			}
		}
		stays := count(d.elsewhere, d.forms[i])+count(d.foreignAll, d.forms[i]) > 0
		starts = append(starts, len(keys))
		for _, n := range d.forms[i] {
			k := identity.KeyOfNormalized([]byte(n))
			keys = append(keys, k)
			left[k] = left[k] || stays
		}
	}
	isNew := d.hidden.AddKeys(keys)
	for _, e := range d.hidden.Trim(func(e string) bool { return left[e] || d.pins.has(e) }) {
		if _, own := left[e]; own {
			d.res.DroppedOwn++
		} else {
			d.res.Dropped++
		}
	}
	// A prompt counts once: newly tombstoned when one of its keys is new.
	starts = append(starts, len(keys))
	for j := range len(starts) - 1 {
		if slices.Contains(isNew[starts[j]:starts[j+1]], true) {
			d.res.Tombstones++
		} else {
			d.res.AlreadyHidden++
		}
	}
	return keys
}

// save writes the tombstones and chooses the outcome, which so describes
// the final state.
func (d *run) save(keys []string) {
	var err error
	if len(keys) > 0 {
		err = d.hidden.Save()
	}
	if err != nil {
		d.res.Tombstones, d.res.AlreadyHidden, d.res.Dropped, d.res.DroppedOwn = 0, 0, 0, 0
	}
	switch {
	case len(d.res.Failed) == 0 && err == nil:
		d.res.Outcome = Clean
	case err == nil:
		d.res.Outcome = PartlyHidden
		d.res.Err = errors.Join(d.res.Failed...)
	case len(d.res.Failed) == 0:
		d.res.Outcome, d.res.Err = RemovedNotHidden, fmt.Errorf("writing %s: %w", d.st.Hidden(), err)
	default:
		d.res.Outcome, d.res.Err = Both, fmt.Errorf("writing %s: %w", d.st.Hidden(), err)
	}
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

// read counts the copies in files, read only. A file that was gone when
// it was read is read again once it is back, for up to vanishWait (a
// file being replaced, as lookAgain says).
func (d *run) read(files []store.File) []fileResult {
	frs := d.rewriteAll(files, true, nil, nil)
	for i := range frs {
		if !frs[i].vanished {
			continue
		}
		for deadline := time.Now().Add(vanishWait); time.Now().Before(deadline); time.Sleep(vanishWait / 20) {
			if _, err := os.Lstat(files[i].Path); err == nil {
				frs[i] = d.rewriteAll(files[i:i+1], true, nil, nil)[0]
				break
			}
		}
	}
	return frs
}

// vanishWait is how long a delete waits for a file to be back.
const vanishWait = 500 * time.Millisecond

// rewriteAll removes the delete's prompts from files (or, dry, only
// counts them). With sweep set, the records it hides go too (counted
// apart: swept); with only set, a copy counts only in a record naming one
// of its sessions. Files are rewritten a few at a time (at least 4 even on
// fewer cores, so that one file's fsync overlaps another's scan).
func (d *run) rewriteAll(files []store.File, dry bool, sweep *tombstone.Set, only map[string]struct{}) []fileResult {
	out := make([]fileResult, len(files))
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(max(runtime.GOMAXPROCS(0), 4), 8, len(files)) {
		wg.Go(func() {
			m := matcher{targets: d.targets, sweep: sweep, only: only, pins: d.pins}
			for i := range next {
				out[i] = rewriteFile(files[i].Path, &m, dry)
			}
		})
	}
	for i := range files {
		next <- i
	}
	close(next)
	wg.Wait()
	return out
}

// SweepTemps removes the temp files of the scope's folders whose process
// is gone (left by a killed rewrite: they may hold copies of deleted
// prompts), only this machine's (store.TempOrigin: another machine's pid
// says nothing here), and returns how many. The caller holds the
// rewriters' lock.
func SweepTemps(st store.Store, sc store.Scope) int {
	dirs := []string{st.Root}
	hashes, _ := st.ProjectHashes()
	if !sc.All {
		dirs, hashes = nil, append([]string{sc.Project}, sc.Also...)
	}
	for _, h := range hashes {
		dirs = append(dirs, st.ProjectDir(h))
	}
	legacy, n := st.OwnsLegacy(false), 0
	for _, d := range dirs {
		ents, _ := os.ReadDir(d)
		for _, e := range ents {
			name := e.Name()
			if e.Type().IsRegular() && atomicfile.IsTemp(name) && st.Owns(store.TempOrigin(name), legacy) && atomicfile.Stale(name) && os.Remove(filepath.Join(d, name)) == nil {
				n++
			}
		}
	}
	return n
}

// Sweep removes from this machine's files of the scope the records that
// only other machines' tombstones hide (docs/sync.md), as a delete sweeps
// its scope; hist-seed sweeps the projects it imports into. The caller
// holds the rewriters' lock. It returns the records removed; a file it
// could not rewrite keeps them (still hidden) and is named in the error.
func Sweep(st store.Store, sc store.Scope, hidden *tombstone.Set) (int, error) {
	sweep := hidden.HidesOthers()
	if sweep == nil {
		return 0, nil
	}
	all, err := st.Files(sc)
	if err != nil {
		return 0, err
	}
	d := &run{st: st, legacy: st.OwnsLegacy(false)}
	files, _ := d.split(all)
	n := 0
	var errs []error
	for _, fr := range d.rewriteAll(files, false, sweep, nil) {
		n += fr.swept
		if fr.Err != nil {
			errs = append(errs, &FileError{Path: fr.path, Err: fr.Err})
		}
	}
	return n, errors.Join(errs...)
}
