//go:build unix

package main

// Tmux tests of the preview and the layout (helpers in tmux_test.go).

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"hist/lib/record"
	"hist/lib/store"
)

// A prompt captured live by the Claude Code hook says so in the preview;
// a seeded one says imported; a compacted one says neither.
func TestPreviewOrigin(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	capture := filepath.Join(t.TempDir(), "hist-capture")
	if out, err := exec.Command("go", "build", "-o", capture, "hist/cmd/hist-capture").CombinedOutput(); err != nil {
		t.Fatalf("building hist-capture: %v\n%s", err, out)
	}
	hook := exec.Command(capture, "--hook")
	hook.Env = []string{"HOME=" + filepath.Join(f.dir, "home"), "PI_CODING_AGENT_DIR=" + filepath.Join(f.dir, "agent"), "GENTLE_PI_HISTORY_CAPTURE=1"}
	hook.Stdin = strings.NewReader(`{"prompt":"hook captured prompt","cwd":"` + f.proj + `","session_id":"sess-live","hook_event_name":"UserPromptSubmit"}`)
	if out, err := hook.CombinedOutput(); err != nil || len(out) > 0 {
		t.Fatalf("hist-capture --hook: %v\n%s", err, out)
	}
	// A compact file merges capture and import files alike: its prompts'
	// origin is not known.
	st := store.Store{Root: f.store}
	compact := record.Append(nil, record.Record{Text: "compacted claude prompt", TS: 1700000000000, Src: "claude", Session: "sess-old"})
	if err := os.WriteFile(filepath.Join(st.ProjectDir(f.hash), "compact-1700000000001-abcd.jsonl"), compact, 0o600); err != nil {
		t.Fatal(err)
	}

	tm := newTerm(t, f.dir, 120, 40)
	for _, tc := range []struct{ query, agent, session, not string }{
		{"hook captured", "Agent    Claude Code (captured live)", "claude --resume sess-live", ""},
		{"compacted claude", "Agent    Claude Code", "claude --resume sess-old", "Claude Code ("},
		{"flaky", "Agent    Claude Code (imported)", "claude --resume sess-123", ""},
	} {
		tm.pick("--query '" + tc.query + "'")
		tm.waitCount("1/1")
		s := tm.waitText(tc.session)
		if !strings.Contains(s, tc.agent) || tc.not != "" && strings.Contains(s, tc.not) {
			t.Errorf("%s: the preview lacks %q (or has %q):\n%s", tc.query, tc.agent, tc.not, s)
		}
		tm.keys("Escape")
		tm.result()
	}
}

// On a short terminal (80x24) the preview gets only the rows left over
// after 10 prompts, the key hint stays on screen, and ctrl-p hides and
// shows the preview; on a shorter one the preview starts hidden.
func TestShortTerminal(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	tm := newTerm(t, f.dir, 80, 24)
	tm.pick("")
	tm.waitFor("the loaded header", func(s string) bool {
		return strings.Contains(s, "32 loaded") && !strings.Contains(s, "loaded…")
	})
	tm.waitText("Time ")
	s := tm.settle()
	check := func(what string, s string, preview bool) {
		t.Helper()
		l := parseLayout(t, s)
		if len(l.list) < 10 {
			t.Errorf("%s: %d prompt rows, want at least 10:\n%s", what, len(l.list), s)
		}
		if !strings.Contains(l.footer, "enter pick") || !strings.Contains(l.footer, "ctrl-p preview") {
			t.Errorf("%s: the key hint (with ctrl-p preview) is not under the list: %q\n%s", what, l.footer, s)
		}
		if got := strings.Contains(s, "Time "); got != preview {
			t.Errorf("%s: preview shown %v, want %v:\n%s", what, got, preview, s)
		}
	}
	check("80x24", s, true)
	t.Logf("80x24:\n%s", s)

	tm.keys("C-p")
	tm.waitFor("the preview to hide", func(s string) bool { return !strings.Contains(s, "Time ") })
	check("ctrl-p", tm.settle(), false)
	tm.keys("C-p")
	tm.waitText("Time ")
	check("ctrl-p again", tm.settle(), true)

	// 18 rows: no room for a useful preview under 10 prompts.
	tm.tmux("resize-window", "-t", "t", "-y", "18")
	tm.waitFor("the preview to hide at 18 rows", func(s string) bool { return !strings.Contains(s, "Time ") })
	check("80x18", tm.settle(), false)
	tm.keys("C-p")
	tm.waitText("Time ")
	if s := tm.settle(); !strings.Contains(s, "ctrl-p preview") {
		t.Errorf("80x18 with the preview: the hint is gone:\n%s", s)
	}
	tm.keys("Escape")
	if code, _, _ := tm.result(); code != "130" {
		t.Errorf("Esc: exit %s", code)
	}
}

// An empty project whose store holds prompts elsewhere: the hint says how
// many All projects has and which key switches to it.
func TestEmptyProjectHint(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	empty := filepath.Join(f.dir, "empty")
	if err := os.MkdirAll(empty, 0o700); err != nil {
		t.Fatal(err)
	}
	tm := newTerm(t, f.dir, 120, 40)
	tm.pick("--project " + empty)
	tm.waitText("0 loaded")
	// 32 in the fixture's project, 1 more in the other, 1 in history-global.jsonl.
	s := tm.waitText("All projects (34 prompts)")
	if !strings.Contains(s, "tab shows All projects") {
		t.Errorf("the empty project's hint does not name the key:\n%s", s)
	}
	tm.keys("Tab")
	tm.waitText("34 loaded")
	tm.keys("Escape")
	tm.result()
}
