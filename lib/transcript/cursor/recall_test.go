package cursor

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"hist/lib/identity"
	"hist/lib/transcript"
	"hist/lib/transcript/internal/ttest"
)

func TestRecallPath(t *testing.T) {
	env := func(m map[string]string) transcript.Env { return func(k string) string { return m[k] } }
	if got := RecallPath(env(nil), "/h"); got != "/h/.cursor/prompt_history.json" {
		t.Errorf("got %+v", got)
	}
	if got := RecallPath(env(map[string]string{"CURSOR_CONFIG_DIR": "/c"}), "/h"); got != "/c/prompt_history.json" {
		t.Errorf("got %+v", got)
	}
}

func TestCursorHistory(t *testing.T) {
	// Built by hand: the files' shape is not documented (see ScanRecall).
	root := t.TempDir()
	global := filepath.Join(root, "prompt_history.json")
	ttest.WriteFile(t, global, `["global one", "/model gpt", "  ", "global two"]`)
	chat := filepath.Join(root, "chats", "36e6f82a4f9ae16e16ce627c19e4b65f", "4a0c5b1e-2f0d-4c1b-9d7e-0c1a2b3c4d5e", "prompt_history.json")
	ttest.WriteFile(t, chat, `{"entries":[{"text":"per chat"},{"prompt":"as prompt"},{"other":1},7,"plain string"]}`)
	bad := filepath.Join(root, "chats", "w", "bad", "prompt_history.json")
	ttest.WriteFile(t, bad, `{"nothing":"here"}`)
	mt := time.Date(2026, 6, 1, 2, 3, 4, 0, time.UTC)
	for _, p := range []string{global, chat, bad} {
		os.Chtimes(p, mt, mt)
	}
	got, st := ttest.Collect(t, ScanRecall, global)
	ttest.WantTexts(t, got, "global one", "global two", "per chat", "as prompt", "plain string")
	for i, p := range got {
		session := ""
		if i >= 2 {
			session = "4a0c5b1e-2f0d-4c1b-9d7e-0c1a2b3c4d5e"
		}
		if p.Session != session || p.TS != mt.UnixMilli() || !p.Approx || p.Src != transcript.SrcCursor || p.Cwd != "" {
			t.Errorf("got %+v", p)
		}
	}
	if st.Files != 3 || st.Malformed != 1 {
		t.Errorf("stats %+v", st)
	}
	// No global file: the chats' files are still read.
	os.Remove(global)
	got, _ = ttest.Collect(t, ScanRecall, global)
	ttest.WantTexts(t, got, "per chat", "as prompt", "plain string")
	stop := errors.New("stop")
	if _, err := ScanRecall(global, func(transcript.Prompt) error { return stop }); err != stop {
		t.Errorf("err %v", err)
	}
}

// FuzzCursorHistory: any file content parses without panic and yields only
// capturable prompts.
func FuzzCursorHistory(f *testing.F) {
	f.Add([]byte(`["a", {"text":"b"}, 3, null]`))
	f.Add([]byte(`{"history":["x"]}`))
	f.Add([]byte(`{"entries":{"a":1}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		texts, _ := parseCursorHistory(data)
		for _, s := range texts {
			if !identity.Capturable(s) {
				t.Fatalf("emitted %q", s)
			}
		}
	})
}
