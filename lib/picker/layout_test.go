package picker

import (
	"strings"
	"testing"
	"time"

	"hist/lib/shellquote"
)

func TestCapturedAndLabel(t *testing.T) {
	for path, want := range map[string]bool{
		"/s/projects/h/0b7c1e2a-1111-4222-8333-444455556666.jsonl":            true,
		"/s/projects/h/compact-1700000000000-ab12.jsonl":                      true,
		"/s/projects/h/0b7c1e2a.jsonl.carry-1700000000000-ab12.jsonl":         true,
		"/s/projects/h/compact-1-a.gc-1700000000000-ab12.jsonl":               true,
		"/s/projects/h/seed.jsonl":                                            false,
		"/s/projects/h/seed-claude.jsonl":                                     false,
		"/s/projects/h/seed-claude.jsonl.carry-1700000000000-ab12.jsonl":      false,
		"/s/history-global.jsonl":                                             false,
		"/s/history-global.jsonl.carry-1700000000000-ab12.jsonl":              false,
		"/s/history-global.jsonl.carry-1-a.jsonl.gc-1700000000000-ab12.jsonl": false,
	} {
		if got := captured(path); got != want {
			t.Errorf("captured(%q) = %v, want %v", path, got, want)
		}
	}
	now := time.Date(2025, 6, 2, 12, 0, 0, 0, time.Local)
	it := previewItem{Text: "t", TS: now.UnixMilli(), Project: "abcd", Src: "claude", Session: "s-1", Live: true}
	if got := preview(it, "ctrl-o", shellquote.POSIX, now); !strings.Contains(got, "Agent    Claude Code (captured live)\n") {
		t.Errorf("a live capture's preview:\n%s", got)
	}
	it.Live = false
	if got := preview(it, "ctrl-o", shellquote.POSIX, now); !strings.Contains(got, "Agent    Claude Code (imported)\n") {
		t.Errorf("an imported prompt's preview:\n%s", got)
	}
}
