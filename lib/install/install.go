// Package install wires hist into the coding agents found on the machine,
// and unwires it: hist-capture --install and --uninstall. For each agent
// it does what docs/integrations.md describes by hand: it copies pi's
// extension, opencode's plugin and Cursor's hook script (embedded in the
// binary from scripts/, with the folder of the hist binaries written in),
// and adds the prompt hook, which runs hist-capture by its absolute path,
// to Claude Code's settings.json, Codex's hooks.json and Cursor's
// hooks.json.
//
// The user's files lose no byte: a settings file is edited in place
// (settings.go), the file as it was is kept first as
// NAME.hist-backup-<time> (never over another file), and --uninstall
// after an --install that nothing else touched gives back the very bytes
// of before. A file that is read-only, a link to nothing, not JSON, or
// not laid out as the agent reads it is left alone (Refused). Every write
// is atomic (lib/atomicfile); a new file is 0600 (Cursor's hook script
// 0700: it is run), a new folder 0700; a rewritten file keeps its mode.
package install

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"hist/lib/agent"
	"hist/lib/termsafe"
	"hist/lib/words"
)

// Options is one run of --install (or --uninstall, with Remove).
type Options struct {
	Getenv func(string) string
	Home   string
	// Exe is the hist-capture binary the hooks run (Executable); its
	// folder holds the other hist binaries.
	Exe            string
	Remove, DryRun bool
	Out            io.Writer                        // one line per file changed
	Errorf         func(format string, args ...any) // one line per problem
	Now            func() time.Time                 // names backups; time.Now when nil
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
// and says what it did on o.Out, one line per file: Done, Refused or
// Failed.
func Run(o Options, names []string) int {
	if o.Now == nil {
		o.Now = time.Now
	}
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

func (o *Options) flag() string {
	if o.Remove {
		return "--uninstall"
	}
	return "--install"
}

// agent installs one agent: it plans every file first, and writes only
// when no file was refused.
func (o *Options) agent(name string) int {
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
	var changes []*change
	var notes []string
	for _, c := range t.copies {
		ch, note, err := o.planCopy(dir, c)
		if err != nil {
			return o.problem(name, filepath.Join(dir, c.rel), err)
		}
		changes, notes = appendSome(changes, ch), appendSome(notes, note)
	}
	for _, h := range t.hooks {
		ch, hnotes, err := o.planHook(dir, h, t.note)
		if err != nil {
			return o.problem(name, filepath.Join(dir, h.rel), err)
		}
		changes, notes = appendSome(changes, ch), append(notes, hnotes...)
	}
	for _, n := range notes {
		fmt.Fprintf(o.Out, "%s: %s\n", name, n)
	}
	if len(changes) == 0 && len(notes) == 0 {
		fmt.Fprintf(o.Out, "%s: %s\n", name, map[bool]string{false: "already installed", true: "not installed"}[o.Remove])
	}
	for _, ch := range changes {
		if o.DryRun {
			fmt.Fprintf(o.Out, "%s: %s\n", name, ch.would)
			continue
		}
		kept, err := ch.apply(o.Now())
		if err != nil {
			o.Errorf("%s: writing %s: %s: the file is as it was", o.flag(), ch.f.real, words.Describe(err))
			return Failed
		}
		if kept != "" {
			ch.did += fmt.Sprintf(" (the file as it was: %s)", filepath.Base(kept))
		}
		fmt.Fprintf(o.Out, "%s: %s\n", name, ch.did)
	}
	return Done
}

func appendSome[T comparable](list []T, v T) []T {
	var zero T
	if v == zero {
		return list
	}
	return append(list, v)
}

// problem says why nothing was written for the agent name.
func (o *Options) problem(name, path string, err error) int {
	var r *refused
	if errors.As(err, &r) {
		o.Errorf("%s: %s %s", o.flag(), path, r.msg)
		return Refused
	}
	o.Errorf("%s: %v: nothing was changed for %s", o.flag(), err, name)
	return Failed
}

// planCopy plans the copy c in dir: a new file, one replaced (a file of
// the user's is kept as a backup first; hist's own of another folder is
// just updated), or, to uninstall, hist's own removed with its folder when
// nothing else is left in it. A note says what is left alone.
func (o *Options) planCopy(dir string, c copied) (*change, string, error) {
	f, err := readFile(filepath.Join(dir, filepath.FromSlash(c.rel)))
	if err != nil {
		return nil, "", err
	}
	_, own := c.binDir(f.data)
	ch := &change{f: f, data: c.fill(filepath.Dir(o.Exe)), mode: c.mode}
	switch {
	case f.data == nil && o.Remove, f.data != nil && !o.Remove && string(f.data) == string(ch.data):
		return nil, "", nil
	case o.Remove && !own:
		return nil, fmt.Sprintf("left %s in place: it is not %s that hist-capture installs (remove it by hand)", f.path, c.what), nil
	case o.Remove:
		ch.remove, ch.rmdir = true, filepath.Dir(f.path)
		ch.say("removed %s %s", "remove", c.what, f.path)
	case f.data == nil:
		if _, err := os.Stat(filepath.Dir(f.path)); err != nil {
			ch.mkdir = filepath.Dir(f.path)
		}
		ch.say("installed %s %s", "install", c.what, f.path)
	case own:
		ch.say("updated %s %s to run the binaries in %s", "update", c.what, f.path, filepath.Dir(o.Exe))
	default:
		ch.backup = true
		ch.say("replaced %s with %s that hist-capture installs", "replace", f.path, c.what)
	}
	return ch, "", f.writable()
}

// planHook plans the edit of the settings file h in dir.
func (o *Options) planHook(dir string, h hooked, note string) (*change, []string, error) {
	f, err := readFile(filepath.Join(dir, h.rel))
	if err != nil {
		return nil, nil, err
	}
	cmd := cursorScript
	if !h.cursor {
		cmd = HookCommand(o.Exe)
	}
	var e edit
	if o.Remove {
		e, err = h.removeHook(f.data, f.backups(), f.linked)
	} else {
		e, err = h.addHook(f.data, cmd)
	}
	if err != nil {
		return nil, nil, err
	}
	var notes []string
	for _, c := range e.theirs {
		notes = append(notes, fmt.Sprintf("left the hook %q in %s as it is: it is yours, not the one hist-capture writes (hist-capture --status shows whether it runs)", c, f.path))
	}
	ch := &change{f: f, data: e.data, mode: 0o600}
	switch e.kind {
	case none, theirs:
		return nil, notes, nil
	case created:
		ch.say("created %s with the %s hook%s", "create", f.path, h.event, note)
	case added:
		ch.backup = true
		ch.say("added the %s hook to %s%s", "add", h.event, f.path, note)
	case updated:
		ch.backup = true
		ch.say("updated the %s hook in %s to run %s instead of %s", "update", h.event, f.path, cmd, e.was)
	case removed:
		switch {
		case e.gone && !f.linked:
			ch.remove = true
			ch.say("removed %s, which held only the %s hook that hist-capture created", "remove", f.path, h.event)
		case e.from != "":
			ch.drop = e.from
			ch.say("put back %s as it was before hist-capture --install (from %s)", "put back", f.path, filepath.Base(e.from))
		default:
			ch.backup = true
			ch.say("removed the %s hook from %s", "remove", h.event, f.path)
		}
	}
	return ch, notes, f.writable()
}

// say sets what ch did, and what a dry run would do: format starts with
// the past tense of verb.
func (ch *change) say(format, verb string, args ...any) {
	ch.did = fmt.Sprintf(format, args...)
	past, _, _ := strings.Cut(format, " ")
	if verb == "put back" {
		past = "put back"
	}
	ch.would = "would " + verb + strings.TrimPrefix(ch.did, past)
}
