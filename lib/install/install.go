// Package install wires hist into the coding agents found on the machine,
// and unwires it: hist-capture --install and --uninstall. For each agent
// it does what docs/integrations.md describes by hand: it copies pi's
// extension, opencode's plugin and Cursor's hook script (embedded in the
// binary from scripts/), and adds the prompt hook to Claude Code's
// settings.json, Codex's hooks.json and Cursor's hooks.json, keeping every
// other key and hook of those files in the order found.
//
// Every write is atomic (lib/atomicfile) and keeps the previous file next
// to it as NAME.bak; a file it creates is 0600 (Cursor's hook script 0700:
// it is run), a folder 0700; a file it rewrites keeps its mode. A settings
// file that is not JSON is never rewritten: that agent is left alone.
package install

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hist/lib/envdir"
	"hist/lib/words"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"hist/lib/agent"
	"hist/lib/atomicfile"
	"hist/lib/cli"
	"hist/lib/shellquote"
	"hist/lib/termsafe"
	"hist/lib/transcript"
	integrations "hist/scripts"
)

// ExitRefused is hist-capture's exit status when a settings file could
// not be parsed (nothing was written for that agent).
const ExitRefused = 4

// Main runs hist-capture --install (--uninstall when remove) with args,
// the optional LIST, and returns the exit status: 0 done (agents not found
// are skipped, not an error), 1 a file could not be written, 2 usage,
// ExitRefused a settings file is not valid JSON.
func Main(e *cli.Env, args []string, remove, dryRun bool) int {
	flag := "--install"
	if remove {
		flag = "--uninstall"
	}
	if len(args) > 1 {
		e.Errorf("%s takes one LIST of agents, such as claude,codex (got %d arguments): separate the names with commas", flag, len(args))
		return cli.ExitUsage
	}
	if !filepath.IsAbs(e.Home) {
		// The agents' default folders are under HOME.
		e.Errorf("%s: HOME is not set or not an absolute path (%q): set HOME", flag, e.Home)
		return cli.ExitUsage
	}
	list := "all"
	if len(args) == 1 {
		list = args[0]
	}
	names, err := ParseList(list)
	if err != nil {
		e.Errorf("%s: %v", flag, err)
		return cli.ExitUsage
	}
	r := &run{
		env: e.Getenv, home: e.Home, hook: HookCommand(),
		dry: dryRun, remove: remove, flag: flag,
		out: termsafe.Writer(e.Stdout), e: e,
	}
	for _, n := range names {
		r.agent(n)
	}
	if r.offPath {
		// The hooks name the binary's path; these find it themselves.
		fmt.Fprintln(r.out, "note: hist-capture is not on PATH: pi's extension, opencode's plugin and Cursor's hook script run the hist binaries from PATH or from $HIST_BIN_DIR")
	}
	if dryRun {
		fmt.Fprintln(r.out, "dry run: nothing was written")
	}
	switch {
	case r.failed:
		return cli.ExitFailure
	case r.refused:
		return ExitRefused
	}
	return cli.ExitOK
}

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

// HookCommand is the command written into the agents' hook settings, run
// by a shell: "hist-capture --hook" when hist-capture is on PATH,
// otherwise the running binary's absolute path, quoted.
func HookCommand() string {
	if _, err := exec.LookPath("hist-capture"); err == nil {
		return plainHook
	}
	exe, err := os.Executable()
	if err != nil {
		return plainHook
	}
	return shellquote.Quote(exe, shellquote.POSIX) + " --hook"
}

const plainHook = "hist-capture --hook"

// ourHook matches a hook command that runs hist-capture --hook, whatever
// folder (quoted or not) it names hist-capture in; ourScript matches
// Cursor's hook script.
var (
	ourHook   = regexp.MustCompile(`(?:^|[/'"])hist-capture['"]?[ \t]+--hook[ \t]*$`)
	ourScript = regexp.MustCompile(`(?:^|/)hooks/hist-capture\.sh['"]?$`)
)

func isOurs(command string) bool {
	c := strings.TrimSpace(command)
	return ourHook.MatchString(c) || ourScript.MatchString(c)
}

// copied is a file installed by copying it whole.
type copied struct {
	rel  string // under the agent's folder
	data []byte
	mode os.FileMode
	what string // "the extension", for messages
}

// hooked is a JSON settings file that gets one hook entry.
type hooked struct {
	rel     string
	event   string         // the array under "hooks"
	entry   func() *object // the entry to add
	version bool           // a new file starts with "version": 1
}

// target is one agent's integration.
type target struct {
	dir    func(env transcript.Env, home string) string
	copies []copied
	hooks  []hooked
	note   string // added to the line of a hook added
}

func folder(v, def string) func(transcript.Env, string) string {
	return func(env transcript.Env, home string) string {
		if d := envdir.Get(env, v, home); d != "" {
			return d
		}
		return filepath.Join(home, def)
	}
}

var targets = map[string]target{
	"pi": {
		dir:    folder("PI_CODING_AGENT_DIR", filepath.Join(".pi", "agent")),
		copies: []copied{{"extensions/hist.ts", integrations.PiExtension, atomicfile.FilePerm, "the extension"}},
	},
	"claude": {
		dir:   folder("CLAUDE_CONFIG_DIR", ".claude"),
		hooks: []hooked{{rel: "settings.json", event: "UserPromptSubmit"}},
	},
	"codex": {
		dir:   folder("CODEX_HOME", ".codex"),
		hooks: []hooked{{rel: "hooks.json", event: "UserPromptSubmit"}},
		note:  `; trust it once: start codex and choose "Trust all and continue"`,
	},
	"cursor": {
		dir:    folder("CURSOR_CONFIG_DIR", ".cursor"),
		copies: []copied{{"hooks/hist-capture.sh", integrations.CursorHook, 0o700, "the hook script"}},
		hooks: []hooked{{rel: "hooks.json", event: "beforeSubmitPrompt", version: true, entry: func() *object {
			return &object{[]member{{"command", "./hooks/hist-capture.sh"}}}
		}}},
	},
	"opencode": {
		dir: func(env transcript.Env, home string) string {
			if x := transcript.Getenv(env, "XDG_CONFIG_HOME"); filepath.IsAbs(x) {
				return filepath.Join(x, "opencode")
			}
			return filepath.Join(home, ".config", "opencode")
		},
		copies: []copied{{"plugin/hist.js", integrations.OpencodePlugin, atomicfile.FilePerm, "the plugin"}},
	},
}

// commandEntry is Claude Code's and Codex's hook entry, as in
// scripts/claude/settings.json.
func commandEntry(command string) *object {
	return &object{[]member{{"hooks", []any{&object{[]member{
		{"type", "command"}, {"command", command}, {"timeout", json.Number("10")},
	}}}}}}
}

type run struct {
	env         transcript.Env
	home        string
	hook        string
	dry, remove bool
	flag        string
	out         io.Writer
	e           *cli.Env
	failed      bool
	refused     bool
	offPath     bool // an integration that looks for hist-capture on PATH was found
}

// change is one file to write (data) or remove (data nil).
type change struct {
	path   string
	data   []byte
	mode   os.FileMode
	backup []byte // the previous content, kept as .bak; nil for none
	mkdir  bool   // the file's folder must be created
	line   [2]string
}

func (r *run) agent(name string) {
	t, ok := targets[name]
	if !ok {
		fmt.Fprintf(r.out, "%s: nothing to install (hist-seed imports its sessions): skipped\n", name)
		return
	}
	dir := t.dir(r.env, r.home)
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		fmt.Fprintf(r.out, "%s: not found (no %s): skipped\n", name, dir)
		return
	}
	var changes []change
	var notes []string
	for _, c := range t.copies {
		ch, note, err := r.planCopy(name, dir, c)
		if err != nil {
			r.e.Errorf("%s: %v: nothing was changed for %s", r.flag, err, name)
			r.failed = true
			return
		}
		if ch != nil {
			changes = append(changes, *ch)
		}
		if note != "" {
			notes = append(notes, note)
		}
	}
	for _, h := range t.hooks {
		ch, err := r.planHook(name, dir, h, t.note)
		var se *syntaxError
		var bad *shapeError
		switch {
		case errors.As(err, &se) || errors.As(err, &bad):
			r.e.Errorf("%s: %s %v: fix or move it, then run again", r.flag, filepath.Join(dir, h.rel), err)
			r.refused = true
			return
		case err != nil:
			r.e.Errorf("%s: %v: nothing was changed for %s", r.flag, err, name)
			r.failed = true
			return
		}
		if ch != nil {
			changes = append(changes, *ch)
		}
	}
	for _, n := range notes {
		fmt.Fprintln(r.out, n)
	}
	switch {
	case len(changes) > 0 || len(notes) > 0:
	case r.remove:
		fmt.Fprintf(r.out, "%s: not installed\n", name)
	default:
		fmt.Fprintf(r.out, "%s: already installed\n", name)
	}
	for _, ch := range changes {
		i := 0
		if r.dry {
			i = 1
		} else {
			if err := apply(ch); err != nil {
				r.e.Errorf("%s: writing %s: %v: the file is as it was", r.flag, ch.path, words.Describe(err))
				r.failed = true
				return
			}
		}
		fmt.Fprintf(r.out, "%s: %s\n", name, ch.line[i])
	}
	if !r.remove && len(t.copies) > 0 && r.hook != plainHook {
		r.offPath = true
	}
}

// readExisting reads path: its content and mode, or nil when it does not
// exist (an empty file reads as an empty, non-nil slice).
func readExisting(path string) ([]byte, os.FileMode, error) {
	data, err := atomicfile.ReadRegular(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, 0, nil
	}
	if err != nil {
		return nil, 0, fmt.Errorf("reading %s: %s", path, words.Describe(err))
	}
	fi, err := os.Stat(path)
	if err != nil {
		return nil, 0, fmt.Errorf("reading %s: %s", path, words.Describe(err))
	}
	return data, fi.Mode().Perm(), nil
}

func bak(path string) string { return filepath.Base(path) + ".bak" }

func (r *run) planCopy(name, dir string, c copied) (*change, string, error) {
	path := filepath.Join(dir, filepath.FromSlash(c.rel))
	old, mode, err := readExisting(path)
	if err != nil {
		return nil, "", err
	}
	_, statErr := os.Stat(filepath.Dir(path))
	mkdir := errors.Is(statErr, fs.ErrNotExist)
	switch {
	case r.remove && old == nil:
		return nil, "", nil
	case r.remove && !bytes.Equal(old, c.data):
		return nil, fmt.Sprintf("%s: left %s in place: it is not %s this hist-capture installs (remove it by hand)", name, path, c.what), nil
	case r.remove:
		// Its content is hist's own: no copy is kept.
		return &change{path: path, line: [2]string{
			"removed " + c.what + " " + path,
			"would remove " + c.what + " " + path}}, "", nil
	case old == nil:
		return &change{path: path, data: c.data, mode: c.mode, mkdir: mkdir, line: [2]string{
			"installed " + c.what + " " + path,
			"would install " + c.what + " " + path}}, "", nil
	case bytes.Equal(old, c.data):
		return nil, "", nil
	}
	return &change{path: path, data: c.data, mode: mode, backup: old, line: [2]string{
		fmt.Sprintf("replaced %s with %s this hist-capture installs (previous kept as %s)", path, c.what, bak(path)),
		fmt.Sprintf("would replace %s with %s this hist-capture installs (previous kept as %s)", path, c.what, bak(path))}}, "", nil
}

// shapeError says a settings file is JSON but not laid out as the agent
// reads it (a "hooks" that is not an object, and the like).
type shapeError struct{ what string }

func (e *shapeError) Error() string { return e.what }

func (r *run) planHook(name, dir string, h hooked, note string) (*change, error) {
	path := filepath.Join(dir, h.rel)
	old, mode, err := readExisting(path)
	if err != nil {
		return nil, err
	}
	var doc any = &object{}
	if old != nil {
		if doc, err = parseJSON(old); err != nil {
			return nil, err
		}
	} else if h.version {
		doc = &object{[]member{{"version", json.Number("1")}}}
	}
	root, ok := doc.(*object)
	if !ok {
		return nil, &shapeError{"is not a JSON object"}
	}
	hooksV, hasHooks := root.get("hooks")
	hooks, ok := hooksV.(*object)
	if hasHooks && !ok {
		return nil, &shapeError{`has a "hooks" that is not an object`}
	}
	if !hasHooks {
		hooks = &object{}
	}
	evV, hasEv := hooks.get(h.event)
	entries, ok := evV.([]any)
	if hasEv && !ok {
		return nil, &shapeError{fmt.Sprintf("has a \"hooks\" → %q that is not an array", h.event)}
	}

	if r.remove {
		kept, removed := withoutOurs(entries)
		if !removed {
			return nil, nil
		}
		if len(kept) > 0 {
			hooks.set(h.event, kept)
		} else {
			hooks.del(h.event)
		}
		if len(hooks.members) == 0 {
			root.del("hooks")
		} else {
			root.set("hooks", hooks)
		}
		if len(root.members) == 0 || h.version && len(root.members) == 1 && root.members[0].key == "version" {
			return &change{path: path, backup: old, line: [2]string{
				fmt.Sprintf("removed %s, which held only the %s hook (previous kept as %s)", path, h.event, bak(path)),
				fmt.Sprintf("would remove %s, which holds only the %s hook (previous kept as %s)", path, h.event, bak(path))}}, nil
		}
		return &change{path: path, data: formatJSON(root), mode: mode, backup: old, line: [2]string{
			fmt.Sprintf("removed the %s hook from %s (previous kept as %s)", h.event, path, bak(path)),
			fmt.Sprintf("would remove the %s hook from %s (previous kept as %s)", h.event, path, bak(path))}}, nil
	}

	if hasOurs(entries) {
		return nil, nil
	}
	entry := commandEntry(r.hook)
	if h.entry != nil {
		entry = h.entry()
	}
	hooks.set(h.event, append(entries, entry))
	root.set("hooks", hooks)
	data := formatJSON(root)
	if old == nil {
		return &change{path: path, data: data, mode: atomicfile.FilePerm, line: [2]string{
			fmt.Sprintf("created %s with the %s hook%s", path, h.event, note),
			fmt.Sprintf("would create %s with the %s hook%s", path, h.event, note)}}, nil
	}
	return &change{path: path, data: data, mode: mode, backup: old, line: [2]string{
		fmt.Sprintf("added the %s hook to %s (previous kept as %s)%s", h.event, path, bak(path), note),
		fmt.Sprintf("would add the %s hook to %s (previous kept as %s)%s", h.event, path, bak(path), note)}}, nil
}

// command is the "command" string of a hook object, or "".
func command(v any) string {
	o, ok := v.(*object)
	if !ok {
		return ""
	}
	c, _ := o.get("command")
	s, _ := c.(string)
	return s
}

// hasOurs reports whether one of entries runs hist's hook, either itself
// (Cursor) or in its "hooks" list (Claude Code, Codex).
func hasOurs(entries []any) bool {
	for _, en := range entries {
		if isOurs(command(en)) {
			return true
		}
		if o, ok := en.(*object); ok {
			v, _ := o.get("hooks")
			inner, _ := v.([]any)
			if _, found := dropOurs(inner); found {
				return true
			}
		}
	}
	return false
}

// withoutOurs is entries without hist's hooks: an entry that is one goes
// (Cursor), one whose "hooks" list holds one loses it (Claude Code, Codex),
// and goes if nothing is left.
func withoutOurs(entries []any) ([]any, bool) {
	entries, removed := dropOurs(entries)
	kept := entries[:0]
	for _, en := range entries {
		if o, ok := en.(*object); ok {
			v, _ := o.get("hooks")
			if inner, ok := v.([]any); ok {
				left, dropped := dropOurs(inner)
				if dropped {
					removed = true
					if len(left) == 0 {
						continue
					}
					o.set("hooks", left)
				}
			}
		}
		kept = append(kept, en)
	}
	return kept, removed
}

// dropOurs is list without the hooks that run hist's.
func dropOurs(list []any) ([]any, bool) {
	var left []any
	for _, h := range list {
		if !isOurs(command(h)) {
			left = append(left, h)
		}
	}
	return left, len(left) < len(list)
}

// apply makes one change: the previous content to NAME.bak first, then the
// new file (or the removal), each atomic.
func apply(ch change) error {
	path := ch.path
	if p, err := filepath.EvalSymlinks(path); err == nil {
		path = p // a settings file linked from elsewhere is written where it lives
	}
	dir := filepath.Dir(path)
	if ch.mkdir {
		if err := os.Mkdir(dir, atomicfile.DirPerm); err != nil && !errors.Is(err, fs.ErrExist) {
			return err
		}
		if err := atomicfile.SyncDir(filepath.Dir(dir)); err != nil {
			return err
		}
	}
	if ch.backup != nil {
		if err := atomicfile.WriteBytes(path+".bak", ch.backup); err != nil {
			return err
		}
	}
	if ch.data == nil {
		if err := os.Remove(path); err != nil {
			return err
		}
		return atomicfile.SyncDir(dir)
	}
	p, err := atomicfile.Create(path)
	if err != nil {
		return err
	}
	defer p.Cleanup()
	if _, err := p.Write(ch.data); err != nil {
		return err
	}
	if err := p.Chmod(ch.mode); err != nil {
		return err
	}
	return p.Commit()
}
