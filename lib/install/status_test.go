package install

import (
	"os"
	"path/filepath"
	"testing"
)

// An agent is wired once its hook is in its settings, or its extension
// file is in place; not before, nor with a hook of another program.
func TestWired(t *testing.T) {
	home := t.TempDir()
	env := func(string) string { return "" }
	settings := filepath.Join(home, ".claude", "settings.json")
	os.MkdirAll(filepath.Dir(settings), 0o700)
	for _, tc := range []struct {
		data string
		want bool
	}{
		{`{"hooks":{"UserPromptSubmit":[{"hooks":[{"type":"command","command":"other --hook"}]}]}}`, false},
		{`not json`, false},
		{`{"hooks":[]}`, false},
		{`{"hooks":{"UserPromptSubmit":[{"hooks":[{"type":"command","command":"hist-capture --hook"}]}]}}`, true},
	} {
		os.WriteFile(settings, []byte(tc.data), 0o600)
		if got := Wired("claude", env, home); got != tc.want {
			t.Errorf("%s: Wired = %v", tc.data, got)
		}
	}
	if Wired("pi", env, home) {
		t.Error("pi wired without its extension")
	}
	ext := filepath.Join(home, ".pi", "agent", "extensions", "hist.ts")
	os.MkdirAll(filepath.Dir(ext), 0o700)
	os.WriteFile(ext, []byte("x"), 0o600)
	if !Wired("pi", env, home) {
		t.Error("pi not wired with its extension")
	}
}
