// Package install wires hist into the coding agents found on the machine,
// and unwires it (hist-capture --install and --uninstall, as
// docs/integrations.md does by hand): it copies pi's extension, opencode's
// plugin and Cursor's hook script (from scripts/, the folder of the hist
// binaries written in), and adds to the agents' settings files the prompt
// hook, which runs hist-capture by its absolute path.
//
// The user's files lose no byte: a settings file is edited in place
// (settings.go), kept first as NAME.hist-backup-<time> (never over
// another file), and --uninstall after an --install that nothing else
// touched gives back the very bytes of before. A file that is read-only,
// a link to nothing, not JSON, or not laid out as the agent reads it is
// left alone (Refused). Every write is atomic; a new file is 0600 (Cursor's
// hook script 0700), a new folder 0700; a rewritten file keeps its mode.
package install

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
	"syscall"
	"time"

	"hist/lib/agent"
	"hist/lib/atomicfile"
	"hist/lib/termsafe"
	"hist/lib/words"
)

// Options is one run of --install (or --uninstall, with Remove).
type Options struct {
	Getenv         func(string) string
	Home           string
	Exe            string // the hist-capture the hooks run (Executable); its folder holds the other hist binaries
	Remove, DryRun bool
	Out            io.Writer                        // one line per file changed
	Errorf         func(format string, args ...any) // one line per problem
}

// What a run came to, worst last.
const (
	Done    = iota // every agent found was done (or already was)
	Refused        // a file was left alone: it is read-only, a link to nothing, or not JSON as the agent reads it
	Failed         // a file could not be read or written
)

// ParseList reads LIST: "all", or agent names separated by commas.
func ParseList(list string) ([]string, error) {
	var names []string
	for _, n := range strings.Split(list, ",") {
		if n == "all" {
			return agent.Names(), nil
		}
		if _, ok := agent.Lookup(n); !ok {
			all := agent.Names()
			return nil, fmt.Errorf("unknown agent %q: use %s, %s or all", n, strings.Join(all[:len(all)-1], ", "), all[len(all)-1])
		}
		if !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	return names, nil
}

// Run installs (or removes) hist's integration for each agent of names,
// says what it did on o.Out, one line per file, and returns the worst of
// Done, Refused and Failed.
func Run(o Options, names []string) int {
	o.Out = termsafe.Writer(o.Out)
	worst := Done
	for _, n := range names {
		worst = max(worst, o.agent(n))
	}
	if o.DryRun {
		fmt.Fprintln(o.Out, "dry run: nothing was written")
	}
	return worst
}

// plan is an agent's files to change, and notes on what it leaves alone.
type plan struct {
	changes []*change
	notes   []string
}

// agent installs one agent: it plans every file, then writes only when
// none was refused.
func (o *Options) agent(name string) int {
	flag := map[bool]string{false: "--install", true: "--uninstall"}[o.Remove]
	t, ok := targets[name]
	if !ok {
		fmt.Fprintf(o.Out, "%s: nothing to install (hist-seed imports its sessions): skipped\n", name)
		return Done
	}
	a, _ := agent.Lookup(name)
	dir := a.Config(o.Getenv, o.Home)
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		fmt.Fprintf(o.Out, "%s: not found (no %s): skipped\n", name, dir)
		return Done
	}
	var p plan
	var r *refused
	switch path, err := o.plan(&p, dir, t); {
	case errors.As(err, &r):
		o.Errorf("%s: %s %s", flag, path, r.msg)
		return Refused
	case err != nil:
		o.Errorf("%s: %v: nothing was changed for %s", flag, err, name)
		return Failed
	}
	for _, n := range p.notes {
		fmt.Fprintf(o.Out, "%s: %s\n", name, n)
	}
	if len(p.changes) == 0 && len(p.notes) == 0 {
		fmt.Fprintf(o.Out, "%s: %s\n", name, map[bool]string{false: "already installed", true: "not installed"}[o.Remove])
	}
	for _, ch := range p.changes {
		if o.DryRun {
			past, rest, _ := strings.Cut(ch.did, " ")
			fmt.Fprintf(o.Out, "%s: would %s %s\n", name, pastTense[past], rest)
			continue
		}
		kept, err := ch.apply(time.Now())
		if err != nil {
			o.Errorf("%s: writing %s: %s: the file is as it was", flag, ch.f.real, words.Describe(err))
			return Failed
		}
		if kept != "" {
			ch.did += fmt.Sprintf(" (the file as it was: %s)", filepath.Base(kept))
		}
		fmt.Fprintf(o.Out, "%s: %s\n", name, ch.did)
	}
	return Done
}

// plan plans every file of t in dir; on a problem it returns the file's path.
func (o *Options) plan(p *plan, dir string, t target) (string, error) {
	for _, c := range t.copies {
		path := filepath.Join(dir, filepath.FromSlash(c.rel))
		if err := o.planCopy(p, path, c); err != nil {
			return path, err
		}
	}
	for _, h := range t.hooks {
		path := filepath.Join(dir, h.rel)
		if err := o.planHook(p, path, h, t.note); err != nil {
			return path, err
		}
	}
	return "", nil
}

// planCopy plans the copy c at path: a new file, one replaced (a file of
// the user's is backed up first; hist's own just updated), or, to
// uninstall, hist's own removed, with its folder when left empty.
func (o *Options) planCopy(p *plan, path string, c copied) error {
	f, err := readFile(path)
	if err != nil {
		return err
	}
	_, own := c.binDir(f.data)
	ch := &change{f: f, data: c.fill(filepath.Dir(o.Exe)), mode: c.mode}
	switch {
	case f.data == nil && o.Remove, f.data != nil && !o.Remove && string(f.data) == string(ch.data):
		return nil
	case o.Remove && !own:
		p.notes = append(p.notes, fmt.Sprintf("left %s in place: it is not %s that hist-capture installs (remove it by hand)", f.path, c.what))
		return nil
	case o.Remove:
		ch.remove, ch.rmdir = true, filepath.Dir(f.path)
		ch.did = fmt.Sprintf("removed %s %s", c.what, f.path)
	case f.data == nil:
		if _, err := os.Stat(filepath.Dir(f.path)); err != nil {
			ch.mkdir = filepath.Dir(f.path)
		}
		ch.did = fmt.Sprintf("installed %s %s", c.what, f.path)
	case own:
		ch.did = fmt.Sprintf("updated %s %s to run the binaries in %s", c.what, f.path, filepath.Dir(o.Exe))
	default:
		ch.backup = true
		ch.did = fmt.Sprintf("replaced %s with %s that hist-capture installs", f.path, c.what)
	}
	p.changes = append(p.changes, ch)
	return f.writable()
}

// planHook plans the edit of the settings file h at path.
func (o *Options) planHook(p *plan, path string, h hooked, note string) error {
	f, err := readFile(path)
	if err != nil {
		return err
	}
	cmd := cursorScript
	if !h.cursor {
		cmd = hookCommand(o.Exe)
	}
	var e edit
	if o.Remove {
		e, err = h.removeHook(f.data, f.backups(), f.linked)
	} else {
		e, err = h.addHook(f.data, cmd)
	}
	if err != nil {
		return err
	}
	for _, c := range e.theirs {
		p.notes = append(p.notes, fmt.Sprintf("left the hook %q in %s as it is: it is yours, not the one hist-capture writes (hist-capture --status shows whether it runs)", c, f.path))
	}
	ch := &change{f: f, data: e.data, mode: 0o600, backup: e.kind != created}
	switch {
	case e.kind == none || e.kind == theirs:
		return nil
	case e.kind == created:
		ch.did = fmt.Sprintf("created %s with the %s hook%s", f.path, h.event, note)
	case e.kind == added:
		ch.did = fmt.Sprintf("added the %s hook to %s%s", h.event, f.path, note)
	case e.kind == updated:
		ch.did = fmt.Sprintf("updated the %s hook in %s to run %s instead of %s", h.event, f.path, cmd, e.was)
	case e.gone && !f.linked:
		ch.remove, ch.backup = true, false
		ch.did = fmt.Sprintf("removed %s, which held only the %s hook that hist-capture created", f.path, h.event)
	case e.from != "":
		ch.drop, ch.backup = e.from, false
		ch.did = fmt.Sprintf("put back %s as it was before hist-capture --install (from %s)", f.path, filepath.Base(e.from))
	default:
		ch.did = fmt.Sprintf("removed the %s hook from %s", h.event, f.path)
	}
	p.changes = append(p.changes, ch)
	return f.writable()
}

// pastTense maps the first word of what a change did to a dry run's verb.
var pastTense = map[string]string{"installed": "install", "removed": "remove", "updated": "update", "replaced": "replace", "created": "create", "added": "add", "put": "put"}

// file is a file install reads, then writes or removes; a symbolic link
// is followed, and its target written.
type file struct {
	path   string      // as the agent names it
	real   string      // the file itself: path, or the target of its link
	linked bool        // path is a symbolic link
	data   []byte      // its content; nil when it does not exist
	mode   os.FileMode // its permissions
}

// readFile reads path, refusing a link to nothing or something other
// than a regular file, which install would replace.
func readFile(path string) (*file, error) {
	f := &file{path: path, real: path}
	fi, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return f, nil
	case err != nil:
		return nil, fmt.Errorf("reading %s: %s", path, words.Describe(err))
	case fi.Mode()&fs.ModeSymlink != 0:
		target, err := filepath.EvalSymlinks(path)
		if errors.Is(err, fs.ErrNotExist) {
			to, _ := os.Readlink(path)
			return nil, &refused{fmt.Sprintf("is a symbolic link to %s, which does not exist: create that file, or remove the link, then run again", to)}
		} else if err != nil {
			return nil, fmt.Errorf("following the link %s: %s", path, words.Describe(err))
		}
		f.real, f.linked = target, true
	}
	data, err := atomicfile.ReadRegular(f.real)
	if err == nil {
		fi, err = os.Stat(f.real)
	}
	switch {
	case errors.Is(err, atomicfile.ErrNotRegular) || errors.Is(err, syscall.EISDIR):
		return nil, &refused{"is not a regular file: move it away, then run again"}
	case err != nil:
		return nil, fmt.Errorf("reading %s: %s", f.real, words.Describe(err))
	}
	f.data, f.mode = data, fi.Mode().Perm()
	return f, nil
}

// writable refuses a file its owner may not write: the user protected it
// (the check is on the mode, which binds root too).
func (f *file) writable() error {
	if f.data != nil && f.mode&0o200 == 0 {
		return &refused{fmt.Sprintf("is read-only (mode %04o): hist leaves a file you protected as it is; make it writable (chmod u+w %s), then run again", f.mode, f.real)}
	}
	return nil
}

// backupMark names hist's copies of a file it changed: NAME.hist-backup-<time>.
const backupMark = ".hist-backup-"

// backups reads the hist backups of f, newest first.
func (f *file) backups() []backup {
	ents, _ := os.ReadDir(filepath.Dir(f.real))
	var out []backup
	for _, e := range ents {
		p := filepath.Join(filepath.Dir(f.real), e.Name())
		if strings.HasPrefix(e.Name(), filepath.Base(f.real)+backupMark) && e.Type().IsRegular() {
			if data, err := atomicfile.ReadRegular(p); err == nil {
				out = append(out, backup{p, data})
			}
		}
	}
	slices.SortFunc(out, func(a, b backup) int { // newest first: longer names are later ones of the same second
		return cmp.Or(len(b.path)-len(a.path), strings.Compare(b.path, a.path))
	})
	return out
}

// writeBackup keeps data beside path in a new file
// NAME.hist-backup-YYYYMMDD-HHMMSS (-2, -3… within one second), 0600,
// never over a file that is there.
func writeBackup(path string, data []byte, now time.Time) (string, error) {
	base := path + backupMark + now.Format("20060102-150405")
	for name, n := base, 2; ; n++ {
		if err := atomicfile.WriteNew(name, data); !errors.Is(err, fs.ErrExist) {
			return name, err
		}
		name = fmt.Sprintf("%s-%d", base, n)
	}
}

// change is one file to write or remove.
type change struct {
	f      *file
	data   []byte      // the new content
	remove bool        // remove the file instead
	mode   os.FileMode // a new file's permissions
	backup bool        // keep the file as it was in a hist backup first
	drop   string      // a hist backup to remove once done (the file is its bytes again)
	mkdir  string      // a folder to make first
	rmdir  string      // a folder to remove after, when it is empty
	did    string      // what was done, for the user: "added the … hook to PATH"
}

// apply makes ch, and returns the backup it kept ("" none). Each step is
// atomic; a failure leaves the file as it was (a backup written stays).
func (ch *change) apply(now time.Time) (kept string, err error) {
	if ch.mkdir != "" {
		if err := os.Mkdir(ch.mkdir, atomicfile.DirPerm); err != nil && !errors.Is(err, fs.ErrExist) {
			return "", err
		}
		if err := atomicfile.SyncDir(filepath.Dir(ch.mkdir)); err != nil {
			return "", err
		}
	}
	if ch.backup && ch.f.data != nil {
		if kept, err = writeBackup(ch.f.real, ch.f.data, now); err != nil {
			return "", err
		}
	}
	if err := ch.write(); err != nil {
		return kept, err
	}
	os.Remove(ch.drop)  // none when ""
	os.Remove(ch.rmdir) // fails, as it should, when something is left in it
	return kept, nil
}

func (ch *change) write() error {
	if ch.remove { // a link goes, not the file it names
		if err := os.Remove(ch.f.path); err != nil {
			return err
		}
		return atomicfile.SyncDir(filepath.Dir(ch.f.path))
	}
	mode := ch.mode
	if ch.f.data != nil {
		mode = ch.f.mode
	}
	p, err := atomicfile.Create(ch.f.real)
	if err != nil {
		return err
	}
	defer p.Cleanup()
	if _, err := p.Write(ch.data); err != nil {
		return err
	}
	if err := p.Chmod(mode); err != nil {
		return err
	}
	return p.Commit()
}
