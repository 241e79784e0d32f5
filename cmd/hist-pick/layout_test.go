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
// a seeded one says imported.
func TestPreviewOrigin(t *testing.T) {
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
	// A compacted file merges capture files only: its prompts were captured.
	st := store.Store{Root: f.store}
	compact := record.Append(nil, record.Record{Text: "compacted claude prompt", TS: 1700000000000, Src: "claude", Session: "sess-old"})
	if err := os.WriteFile(filepath.Join(st.ProjectDir(f.hash), "compact-1700000000001-abcd.jsonl"), compact, 0o600); err != nil {
		t.Fatal(err)
	}

	tm := newTerm(t, f.dir, 120, 40)
	for _, tc := range []struct{ query, agent, session string }{
		{"hook captured", "Agent    Claude Code (captured live)", "claude --resume sess-live"},
		{"compacted claude", "Agent    Claude Code (captured live)", "claude --resume sess-old"},
		{"flaky", "Agent    Claude Code (imported)", "claude --resume sess-123"},
	} {
		tm.pick("--query '" + tc.query + "'")
		tm.waitCount("1/1")
		s := tm.waitText(tc.session)
		if !strings.Contains(s, tc.agent) {
			t.Errorf("%s: the preview lacks %q:\n%s", tc.query, tc.agent, s)
		}
		tm.keys("Escape")
		tm.result()
	}
}
