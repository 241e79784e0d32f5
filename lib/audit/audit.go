// Package audit checks the health of a store without changing it: what it
// holds, what a killed rewriter left behind, what redaction would still
// change, and anything others could read. hist-compact --check prints it.
//
// It takes no lock and writes nothing; it only opens files for reading
// (never a FIFO: non-regular files are reported, not opened).
package audit

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"hist/lib/atomicfile"
	"hist/lib/lock"
	"hist/lib/record"
	"hist/lib/redact"
	"hist/lib/shellquote"
	"hist/lib/store"
	"hist/lib/tombstone"
	"hist/lib/words"
)

// MigrationLockName is the folder the legacy migration holds while it
// runs (lib/seed's MigrationLockName).
const MigrationLockName = store.GlobalName + ".migration-lock"

// Project is one project folder's totals.
type Project struct {
	Hash    string
	Cwd     string // from registry.json; "" when unknown
	Files   int
	Entries int
}

// Leftover is a claim, carry or temp file.
type Leftover struct {
	Path string
	Cwd  string // a claim's project folder, from the registry ("" when unknown)
	Gone bool   // its maker is gone: a temp file's pid, or for a claim the store's rewriter
}

// Report is the store's health.
type Report struct {
	Root    string
	Missing bool // the store does not exist (nothing to check)

	Files     int // store files (projects and global)
	Entries   int // records
	Malformed int // lines that are not records (torn last lines included)
	Projects  []Project
	Global    int // entries in history-global.jsonl and its carries/claims

	Hidden    []tombstone.FileCount // every machine's tombstone files
	HiddenErr error                 // one cannot be trusted or read

	Claims  []Leftover
	Carries []Leftover
	Temps   []Leftover

	RedactOn    bool
	RedactEnv   string // the variable's value, "" when unset
	RedactSet   bool
	Unredacted  int      // stored records redaction would still change
	Unreadable  []string // one line a path that cannot be read, with its fix
	Permissions []string // one line a problem, with its fix
	Links       []string // symbolic links that are allowed and followed
	MigLock     string   // the migration lock folder, when present
	RewriterNow bool     // a rewriter holds the store's lock

	st       store.Store
	legacy   bool // st's machine owns the files without a machine id
	root     string
	reg      store.Registry
	projects map[string]*Project
}

// Check walks the store at st.Root. redactEnv/redactSet are
// GENTLE_PI_HISTORY_REDACT's value and whether it is set.
func Check(st store.Store, redactEnv string, redactSet bool) *Report {
	r := &Report{Root: st.Root, RedactEnv: redactEnv, RedactSet: redactSet, RedactOn: redact.Enabled(redactEnv),
		st: st, legacy: st.OwnsLegacy(false)}
	fi, err := os.Lstat(st.Root)
	if errors.Is(err, fs.ErrNotExist) {
		r.Missing = true
		return r
	}
	if err != nil {
		r.unreadable(st.Root, err)
		return r
	}
	root := filepath.Clean(st.Root)
	if fi.Mode()&fs.ModeSymlink != 0 {
		// Allowed (a store kept on another disk): followed.
		target, _ := os.Readlink(st.Root)
		r.Links = append(r.Links, fmt.Sprintf("the store folder is a symbolic link to %s (followed)", target))
	}
	r.RewriterNow = lock.Held(st.Lock())

	r.root, r.reg, r.projects = root, st.LoadRegistry(), map[string]*Project{}
	if err := filepath.WalkDir(root+string(filepath.Separator), r.visit); err != nil {
		r.unreadable(root, err)
	}
	for _, p := range r.projects {
		r.Projects = append(r.Projects, *p)
	}
	slices.SortFunc(r.Projects, func(a, b Project) int {
		return cmp.Or(cmp.Compare(b.Entries, a.Entries), strings.Compare(a.Hash, b.Hash))
	})

	if set, err := tombstone.Load(st.Hidden()); err != nil {
		r.HiddenErr = err
	} else {
		r.Hidden = set.Files
	}
	return r
}

// visit checks one entry of the walk. A linked project folder is walked
// under the link, as readers see it.
func (r *Report) visit(path string, d fs.DirEntry, err error) error {
	path = filepath.Clean(path)
	rel, _ := filepath.Rel(r.root, path)
	if err != nil {
		r.unreadable(path, err)
		if d != nil && d.IsDir() {
			return fs.SkipDir
		}
		return nil
	}
	if store.IsSyncthing(d.Name()) {
		// Syncthing's own: not store content.
		if d.IsDir() {
			return fs.SkipDir
		}
		return nil
	}
	info, err := d.Info()
	if err != nil {
		r.unreadable(path, err)
		return nil
	}
	mode := info.Mode()
	name := d.Name()
	switch {
	case mode&fs.ModeSymlink != 0:
		target, _ := os.Readlink(path)
		if filepath.Dir(rel) == store.ProjectsDir {
			if ti, err := os.Stat(path); err == nil && ti.IsDir() {
				// Allowed: a project folder kept elsewhere, followed.
				r.Links = append(r.Links, fmt.Sprintf("project folder %s is a symbolic link to %s (followed)", path, target))
				if err := filepath.WalkDir(path+string(filepath.Separator), r.visit); err != nil {
					r.unreadable(path, err)
				}
				return nil
			}
		}
		r.Permissions = append(r.Permissions, fmt.Sprintf("%s is a symbolic link (to %s): replace it with a copy of what it points to: rm %s && cp %s %s", path, target, q(path), q(target), q(path)))
		return nil
	case mode.IsDir():
		if mode.Perm() != atomicfile.DirPerm {
			r.Permissions = append(r.Permissions, fmt.Sprintf("folder %s is %04o, not 0700: chmod 700 %s", path, mode.Perm(), q(path)))
		}
		if rel == MigrationLockName {
			r.MigLock = path
		}
		return nil
	case !mode.IsRegular():
		r.Permissions = append(r.Permissions, fmt.Sprintf("%s is not a regular file (%s): hist never reads it; remove it: rm %s", path, kindOf(mode), q(path)))
		return nil
	}
	if mode.Perm() != atomicfile.FilePerm {
		r.Permissions = append(r.Permissions, fmt.Sprintf("file %s is %04o, not 0600: chmod 600 %s", path, mode.Perm(), q(path)))
	}
	if atomicfile.IsTemp(name) {
		// Another machine's temp file (synced mid-write) is its business:
		// its pid means nothing here.
		r.Temps = append(r.Temps, Leftover{Path: path, Gone: r.st.Owns(store.TempOrigin(name), r.legacy) && atomicfile.Stale(name)})
		return nil
	}
	dir := filepath.Dir(rel)
	inProject := filepath.Dir(dir) == store.ProjectsDir
	global := dir == "." && store.IsGlobal(store.Origin(name))
	k := store.Classify(name)
	if k == store.NotStore || (!inProject && !global) || (inProject && k == store.GlobalFile) {
		return nil
	}
	switch k {
	case store.Claim:
		cwd := ""
		if inProject {
			cwd = r.reg[filepath.Base(dir)]
		}
		r.Claims = append(r.Claims, Leftover{Path: path, Cwd: cwd, Gone: !r.RewriterNow && r.st.Owns(name, r.legacy)})
	case store.Carry:
		r.Carries = append(r.Carries, Leftover{Path: path})
	}
	n, err := r.scan(path)
	if err != nil {
		r.unreadable(path, err)
	}
	r.Files++
	if global {
		r.Global += n
		return nil
	}
	h := filepath.Base(dir)
	p := r.projects[h]
	if p == nil {
		p = &Project{Hash: h, Cwd: r.reg[h]}
		r.projects[h] = p
	}
	p.Files++
	p.Entries += n
	return nil
}

// scan counts a store file's records, malformed lines and records that
// redaction would change.
func (r *Report) scan(path string) (int, error) {
	f, err := store.Open(path) // refuses a file swapped for a FIFO
	if err != nil {
		return 0, err
	}
	defer f.Close()
	n := 0
	st, err := record.Scan(f, func(l *record.Line) error {
		n++
		if redact.Changed(string(l.Text)) {
			r.Unredacted++
		}
		return nil
	})
	r.Entries += n
	r.Malformed += st.Malformed
	return n, err
}

func kindOf(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return m.Type().String()
}

// unreadable notes a path that cannot be read, with its fix.
func (r *Report) unreadable(path string, err error) {
	fix := "it stays as it is; check the disk, or restore it from a backup"
	if c := words.Chmod(path, err); c != "" {
		fix = "let hist read it: " + c
	}
	r.Unreadable = append(r.Unreadable, fmt.Sprintf("%s: %v: %s", path, words.Describe(err), fix))
}

// q quotes a path for the shell the user types a fix into.
func q(path string) string { return shellquote.Quote(path, shellquote.Any) }

// Problems lists what needs the user's attention, one line each, with
// what fixes it; none means the store is healthy.
func (r *Report) Problems() []string {
	var out []string
	for _, u := range r.Unreadable {
		out = append(out, "cannot read "+u)
	}
	out = append(out, r.Permissions...)
	if r.HiddenErr != nil {
		out = append(out, "hidden.json cannot be trusted: "+firstLine(r.HiddenErr.Error()))
	}
	for _, t := range r.Temps {
		if t.Gone {
			out = append(out, fmt.Sprintf("stale temp file %s (its process is gone): the next rewrite of that folder removes it, or remove it now: rm %s", t.Path, q(t.Path)))
		}
	}
	for _, c := range r.Claims {
		if c.Gone {
			run := "hist-compact --all"
			if c.Cwd != "" {
				run = "hist-compact --project " + q(c.Cwd)
			}
			out = append(out, fmt.Sprintf("leftover claim %s (no rewriter is running): its prompts are listed; the next compaction of that project merges it: %s", c.Path, run))
		}
	}
	if r.RedactOn && r.Unredacted > 0 {
		out = append(out, words.Plural(r.Unredacted, "stored prompt holds", "stored prompts hold")+" text that redaction replaces: run hist-compact --redact --all")
	}
	if r.MigLock != "" {
		out = append(out, fmt.Sprintf("the migration lock %s is present: if no hist-seed is running, a migration was interrupted; remove the folder and run hist-seed again: rm -r %s && hist-seed", r.MigLock, q(r.MigLock)))
	}
	return out
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// shownProjects bounds the project lines, to keep the report one screen.
const shownProjects = 8

// Print writes the report.
func (r *Report) Print(w io.Writer) {
	fmt.Fprintf(w, "store:        %s\n", r.Root)
	if r.Missing {
		fmt.Fprintf(w, "nothing stored yet: the folder does not exist\n")
	}
	fmt.Fprintf(w, "files:        %s, %s, %s\n", words.Plural(r.Files, "store file", "store files"), words.Plural(r.Entries, "entry", "entries"), words.Plural(r.Malformed, "malformed line", "malformed lines"))
	fmt.Fprintf(w, "projects:     %d\n", len(r.Projects))
	for i, p := range r.Projects {
		if i == shownProjects {
			fmt.Fprintf(w, "  ... and %d more\n", len(r.Projects)-shownProjects)
			break
		}
		label := p.Cwd
		if label == "" {
			label = "(not in registry.json)"
		}
		fmt.Fprintf(w, "  %s  %s: %s, %s\n", p.Hash, label, words.Plural(p.Files, "file", "files"), words.Plural(p.Entries, "entry", "entries"))
	}
	fmt.Fprintf(w, "global:       %s\n", words.Plural(r.Global, "entry", "entries"))
	switch {
	case r.HiddenErr != nil:
		fmt.Fprintf(w, "hidden.json:  NOT trusted (%s)\n", firstLine(r.HiddenErr.Error()))
	case len(r.Hidden) == 0:
		fmt.Fprintf(w, "hidden.json:  none (nothing hidden)\n")
	default:
		fmt.Fprintf(w, "hidden.json:  %s, trusted\n", hiddenFiles(r.Hidden))
	}
	fmt.Fprintf(w, "claims:       %s\n", leftovers(r.Claims, "no rewriter running", "a rewriter is running"))
	fmt.Fprintf(w, "carries:      %d (merged by the next compaction)\n", len(r.Carries))
	fmt.Fprintf(w, "temp files:   %s\n", leftovers(r.Temps, "process gone", "process running"))
	state, env := map[bool]string{true: "on", false: "off"}[r.RedactOn], "unset"
	if r.RedactSet {
		env = fmt.Sprintf("%q", r.RedactEnv)
	}
	fmt.Fprintf(w, "redaction:    %s (%s=%s); %s it would still change\n", state, redact.EnvVar, env, words.Plural(r.Unredacted, "stored prompt", "stored prompts"))
	mig := "no lock"
	if r.MigLock != "" {
		mig = "lock folder present (" + r.MigLock + ")"
	}
	fmt.Fprintf(w, "migration:    %s\n", mig)
	fmt.Fprintf(w, "permissions:  %s\n", words.Plural(len(r.Permissions), "problem", "problems"))
	for _, l := range r.Links {
		fmt.Fprintf(w, "note: %s\n", l)
	}
	probs := r.Problems()
	if len(probs) == 0 {
		fmt.Fprintf(w, "healthy: no problem found\n")
		return
	}
	fmt.Fprintf(w, "problems:     %d, each below with its fix\n", len(probs))
	for _, p := range probs {
		fmt.Fprintf(w, "problem: %s\n", p)
	}
}

// hiddenFiles is the tombstone files' entries: "3 entries (1 in
// hidden@m1.json, 2 in hidden@alpha.json)".
func hiddenFiles(files []tombstone.FileCount) string {
	total, each := 0, make([]string, len(files))
	for i, f := range files {
		total += f.Entries
		each[i] = fmt.Sprintf("%d in %s", f.Entries, filepath.Base(f.Path))
	}
	if len(files) == 1 {
		each[0] = filepath.Base(files[0].Path) // "2 entries (hidden@alpha.json)"
	}
	return fmt.Sprintf("%s (%s)", words.Plural(total, "entry", "entries"), strings.Join(each, ", "))
}

func leftovers(ls []Leftover, gone, live string) string {
	if len(ls) == 0 {
		return "none"
	}
	g := 0
	for _, l := range ls {
		if l.Gone {
			g++
		}
	}
	return fmt.Sprintf("%d (%d %s, %d %s)", len(ls), g, gone, len(ls)-g, live)
}
