//go:build unix

package main

// What hist-pick prints for a shell, run by that real shell in tmux: the
// documented `eval` of --resume, ctrl-o in the plain selector, and the
// key bindings. Session ids and folder names come from transcripts, so
// the fixture's are hostile: whatever the shell runs must be the agent
// with the expected folder and arguments, and nothing else (no PWNED
// file anywhere).

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"hist/lib/record"
	"hist/lib/shellquote"
	"hist/lib/store"
)

// A folder name and session ids that run `touch PWNED` when quoted for
// the wrong shell or not at all.
const (
	hostileFolder = `it's x\'; touch PWNED; echo \ $(touch PWNED) ` + "`touch PWNED`"
	hostileID     = `x\'; touch PWNED; echo \`
	// A prompt that runs `touch PWNED` when it is evaluated or inserted raw.
	evalPrompt = "x5 why does $(touch PWNED) fail? it's `touch PWNED` \\ done"
)

type hostileFixture struct {
	dir, folder, log string
}

// newHostileFixture is a store with a project in hostileFolder and fake
// agents (pi, claude, codex, cursor-agent, opencode) that log their folder
// and arguments to log.
func newHostileFixture(t *testing.T) *hostileFixture {
	t.Helper()
	dir := t.TempDir()
	f := &hostileFixture{dir: dir, folder: filepath.Join(dir, hostileFolder), log: filepath.Join(dir, "agent.log")}
	for _, d := range []string{filepath.Join(dir, "proj"), filepath.Join(dir, "home"), filepath.Join(dir, "fakebin"), f.folder} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	for _, agent := range []string{"pi", "claude", "codex", "cursor-agent", "opencode"} {
		script := "#!/bin/sh\n{ printf 'cwd=%s\\n' \"$PWD\"; printf 'arg=%s\\n' \"${0##*/}\" \"$@\"; } >>" + shellquote.Quote(f.log, shellquote.POSIX) + "\n"
		if err := os.WriteFile(filepath.Join(dir, "fakebin", agent), []byte(script), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	st := store.Store{Root: filepath.Join(dir, "agent", "history")}
	write := func(folder string, recs ...record.Record) {
		t.Helper()
		canon, err := store.Canonical(folder)
		if err != nil {
			t.Fatal(err)
		}
		hash := store.Hash(canon)
		if err := st.Register(hash, canon); err != nil {
			t.Fatal(err)
		}
		var data []byte
		for _, r := range recs {
			data = record.Append(data, r)
		}
		if err := os.MkdirAll(st.ProjectDir(hash), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(st.ProjectDir(hash), "seed.jsonl"), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	ts := int64(1700000000000)
	write(f.folder, record.Record{Text: "x1 folder prompt", TS: ts, Src: "pi", Session: "good-id.1"})
	write(filepath.Join(dir, "proj"),
		record.Record{Text: "x2 pi id", TS: ts + 1, Src: "pi", Session: hostileID},
		record.Record{Text: "x3 dash id", TS: ts + 2, Src: "claude", Session: "--dangerously-skip-permissions"},
		record.Record{Text: "x4 double dash id", TS: ts + 3, Src: "codex", Session: "--"},
		record.Record{Text: evalPrompt, TS: ts + 4})
	return f
}

// pwned lists the PWNED files under the test's folder.
func (f *hostileFixture) pwned() []string {
	var found []string
	filepath.Walk(f.dir, func(path string, info os.FileInfo, err error) error {
		if err == nil && info.Name() == "PWNED" {
			found = append(found, path)
		}
		return nil
	})
	return found
}

// takeLog returns the fake agents' log and empties it.
func (f *hostileFixture) takeLog() string {
	b, _ := os.ReadFile(f.log)
	os.Remove(f.log)
	return string(b)
}

func (f *hostileFixture) wantAlphaLog(t *testing.T, what string) {
	t.Helper()
	canon, _ := store.Canonical(f.folder)
	if got, want := f.takeLog(), "cwd="+canon+"\narg=pi\narg=--session\narg=good-id.1\n"; got != want {
		t.Errorf("%s: the agents' log is %q, want %q", what, got, want)
	}
}

func (f *hostileFixture) wantNothingRan(t *testing.T, what string) {
	t.Helper()
	if got := f.takeLog(); got != "" {
		t.Errorf("%s: an agent ran: %q", what, got)
	}
	if p := f.pwned(); len(p) > 0 {
		t.Errorf("%s: injected code ran: %v", what, p)
		for _, x := range p {
			os.Remove(x)
		}
	}
}

// testShell is a shell to start in tmux with the prompt "$ ".
type testShell struct {
	name string // also the --shell value
	argv func(dir string) []string
	bind string // loads the key bindings ("" for none)
	eval string // evals hist-pick's output; %s is its arguments
	bin  string // the program to look for
}

var testShells = []testShell{
	{name: "bash", bin: "bash", bind: `eval "$(hist-pick --shell bash)"`, eval: `eval "$(hist-pick %s)"`},
	{name: "zsh", bin: "zsh", argv: func(dir string) []string {
		os.WriteFile(filepath.Join(dir, ".zshrc"), []byte("PROMPT='$ '\n"), 0o600)
		return []string{"env", "ZDOTDIR=" + dir, "zsh", "-i"}
	}, bind: `eval "$(hist-pick --shell zsh)"`, eval: `eval "$(hist-pick %s)"`},
	{name: "fish", bin: "fish", argv: func(dir string) []string {
		return []string{"fish", "--no-config", "-i", "-C", "function fish_prompt; echo -n '$ '; end; set -g fish_greeting ''"}
	}, bind: `hist-pick --shell fish | source`, eval: `eval (hist-pick %s)`},
	{name: "sh", bin: "dash", argv: func(dir string) []string {
		return []string{"env", "PS1=$ ", "dash", "-i"}
	}, eval: `eval "$(hist-pick %s)"`},
}

func (sh testShell) start(t *testing.T, f *hostileFixture) *term {
	t.Helper()
	if _, err := exec.LookPath(sh.bin); err != nil {
		t.Skipf("%s is not installed", sh.bin)
	}
	path := "PATH=" + filepath.Join(f.dir, "fakebin") + ":" + binDir + ":" + os.Getenv("PATH")
	if sh.argv == nil {
		return newTerm(t, f.dir, 160, 45, path)
	}
	return newShellTerm(t, f.dir, 160, 45, sh.argv(f.dir), path)
}

// done is typed after a command line: it prints __done__, which the
// typed line itself does not show.
const done = "; echo __do''ne__"

func (tm *term) waitDone() string {
	tm.t.Helper()
	return tm.waitFor("__done__", doneShown)
}

func doneShown(screen string) bool {
	for _, r := range strings.Split(screen, "\n") {
		if strings.TrimSpace(r) == "__done__" {
			return true
		}
	}
	return false
}

// The documented `eval` of --resume (enter and ctrl-o), and ctrl-o in the
// plain selector, in bash, zsh, fish and sh: a hostile folder is quoted
// for the shell; hostile and option-like session ids are refused; a
// prompt without a session prints nothing.
func TestResumeEvalInShells(t *testing.T) {
	t.Parallel()
	needTmux(t)
	type step struct {
		args string
		keys func(tm *term)
		want string // "alpha": the fake pi ran in the folder; else text on the screen
	}
	press := func(k string) func(*term) { return func(tm *term) { tm.keys(k) } }
	// refuseThen presses ctrl-o, which must refuse (the footer says so
	// and the selector stays open), then k.
	refuseThen := func(k string) func(*term) {
		return func(tm *term) {
			tm.keys("C-o")
			s := tm.waitFor("the refusal", func(s string) bool { return strings.Contains(s, "is not a plain id") || doneShown(s) })
			if doneShown(s) {
				tm.t.Errorf("ctrl-o on a hostile session id printed a command:\n%s", s)
				return
			}
			tm.keys(k)
		}
	}
	for _, sh := range testShells {
		t.Run(sh.name, func(t *testing.T) {
			t.Parallel()
			f := newHostileFixture(t)
			tm := sh.start(t, f)
			for _, st := range []step{
				// ctrl-o in the plain selector, as `eval "$(hist-pick)"`
				// has always allowed.
				{"--all --query x1", press("C-o"), "alpha"},
				{"--all --query x2", refuseThen("Escape"), ""},
				{"--all --query x3", refuseThen("Escape"), ""},
				{"--all --query x4", refuseThen("Escape"), ""},
				// --resume, with and without --shell.
				{"--resume --shell " + sh.name + " --all --query x1", press("Enter"), "alpha"},
				{"--resume --shell " + sh.name + " --all --query x1", press("C-o"), "alpha"},
				{"--resume --all --query x1", press("Enter"), "alpha"},
				{"--resume --shell " + sh.name + " --all --query x2", refuseThen("Enter"), `hist-pick: --resume: the session id "x\\'; touch PWNED; echo \\" is not a plain id`},
				{"--resume --shell " + sh.name + " --all --query x3", press("Enter"), `"--dangerously-skip-permissions" is not a plain id`},
				{"--resume --shell " + sh.name + " --all --query x4", press("Enter"), `session id "--" is not a plain id`},
				{"--resume --shell " + sh.name + " --all --query x5", press("Enter"), "hist-pick: --resume: this prompt was not imported from an agent's session"},
			} {
				what := strings.Replace(sh.eval, "%s", st.args, 1)
				tm.clear()
				tm.run(what + done)
				tm.waitCount("1/1")
				time.Sleep(100 * time.Millisecond)
				st.keys(tm)
				s := tm.waitDone()
				if st.want == "alpha" {
					f.wantAlphaLog(t, what)
					tm.run("cd " + shellquote.Quote(filepath.Join(f.dir, "proj"), shellquote.POSIX))
				} else if !strings.Contains(strings.ReplaceAll(s, "\n", ""), st.want) {
					t.Errorf("%s: the screen lacks %q:\n%s", what, st.want, s)
				}
				f.wantNothingRan(t, what)
			}
		})
	}
}

// The key bindings: alt-r inserts the prompt as one quoted word (run as
// `printf %s WORD`, it prints the prompt exactly and runs nothing in it),
// ctrl-o inserts the resume command quoted for the shell, and a refused
// session id inserts nothing.
func TestBindingsQuoteInShells(t *testing.T) {
	t.Parallel()
	needTmux(t)
	for _, sh := range testShells {
		if sh.bind == "" {
			continue
		}
		t.Run(sh.name, func(t *testing.T) {
			t.Parallel()
			f := newHostileFixture(t)
			tm := sh.start(t, f)
			tm.run(sh.bind + "; clear" + done)
			tm.waitDone()
			time.Sleep(300 * time.Millisecond) // the line editor is reading
			out := filepath.Join(f.dir, "out.txt")

			tm.clear()
			tm.text("printf %s ")
			tm.keys("M-r")
			tm.waitCount("1/")
			tm.text("x5")
			tm.waitCount("1/1")
			tm.keys("Enter")
			tm.waitFor("the quoted prompt on the line", func(s string) bool { return strings.Contains(s, "$ printf %s '") })
			tm.text(" >" + shellquote.Quote(out, shellquote.POSIX) + done)
			tm.keys("Enter")
			tm.waitDone()
			if got, err := os.ReadFile(out); err != nil || string(got) != evalPrompt {
				t.Errorf("printf %%s <ctrl-r>: printed %q (%v), want the prompt %q", got, err, evalPrompt)
			}
			f.wantNothingRan(t, "ctrl-r")

			tm.clear()
			tm.keys("M-r")
			tm.waitCount("1/")
			tm.keys("Tab") // the folder's project is another one
			tm.waitText("◉ All projects")
			tm.text("x1")
			tm.waitCount("1/1")
			tm.keys("C-o")
			tm.waitFor("the resume command on the line", func(s string) bool { return strings.Contains(s, "$ cd '") })
			tm.text(done)
			tm.keys("Enter")
			tm.waitDone()
			f.wantAlphaLog(t, "ctrl-r, ctrl-o")
			tm.run("cd " + shellquote.Quote(filepath.Join(f.dir, "proj"), shellquote.POSIX))
			f.wantNothingRan(t, "ctrl-r, ctrl-o")

			tm.clear()
			tm.keys("M-r")
			tm.waitCount("1/")
			tm.text("x2")
			tm.waitCount("1/1")
			tm.keys("C-o")
			tm.waitText("is not a plain id")
			tm.keys("Escape")
			tm.waitFor("the selector to close", func(s string) bool { return !strings.Contains(s, "Prompt history") })
			tm.text("echo line::end" + done)
			tm.keys("Enter")
			if s := tm.waitDone(); !strings.Contains(s, "\nline::end\n") {
				t.Errorf("a refused session id inserted something:\n%s", s)
			}
			f.wantNothingRan(t, "ctrl-r, ctrl-o on a refused id")
		})
	}
}
