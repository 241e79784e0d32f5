package picker

import (
	"strings"
	"testing"
	"time"

	"hist/lib/history"
	"hist/lib/shellquote"
)

func TestPreviewSize(t *testing.T) {
	for _, tc := range []struct {
		lines int
		mode  previewMode
		rows  int
		shown bool
	}{
		{30, previewAuto, 16, true}, // the full preview: 14 rows above
		{24, previewAuto, 10, true}, // 80x24: 10 prompts, 9 preview lines
		{19, previewAuto, 5, true},
		{18, previewAuto, 9, false}, // too short: hidden, half when asked
		{18, previewShown, 9, true},
		{24, previewHidden, 10, false},
		{30, previewHidden, 16, false},
		{8, previewShown, 5, true},
	} {
		rows, shown := previewSize(tc.lines, tc.mode)
		if rows != tc.rows || shown != tc.shown {
			t.Errorf("%d lines, mode %d: %d rows, shown %v; want %d, %v", tc.lines, tc.mode, rows, shown, tc.rows, tc.shown)
		}
	}
}

func TestTogglePreview(t *testing.T) {
	p := &picker{cfg: Config{ResumeKey: "ctrl-o", DeleteKeys: []string{"ctrl-delete"}}, cols: 80, lines: 24}
	for i, want := range []string{"down,9,wrap,border-top", "down,9,wrap,border-top,hidden", "down,9,wrap,border-top"} {
		if i > 0 {
			p.togglePreview()
		}
		if got := p.previewWindow(); got != want {
			t.Errorf("after %d toggles: %q, want %q", i, got, want)
		}
	}
	p.lines, p.previewMode = 18, previewAuto
	if got := p.previewWindow(); got != "down,8,wrap,border-top,hidden" {
		t.Errorf("18 lines: %q", got)
	}
	p.togglePreview()
	if got := p.previewWindow(); got != "down,8,wrap,border-top" {
		t.Errorf("18 lines, toggled: %q", got)
	}
	if p.toggleKey() != "ctrl-p" {
		t.Errorf("toggle key %q", p.toggleKey())
	}
	p.cfg.DeleteKeys = []string{"alt-d", "ctrl-p"}
	p.cols = 200
	if h := p.footer(&run{}); p.toggleKey() != "" || strings.Contains(h, "preview") {
		t.Errorf("a delete key on ctrl-p: toggle key %q, hint %q", p.toggleKey(), h)
	}
}

// The footer shows the key hint, as many keys as fit, whole, while it has
// nothing else to say.
func TestHintAndFooter(t *testing.T) {
	p := &picker{cfg: Config{ResumeKey: "ctrl-o", DeleteKeys: []string{"ctrl-delete", "alt-d"}}, cols: 200, lines: 30}
	r := &run{}
	all := "enter pick · ctrl-o resume · tab scope · alt-d delete · ctrl-p preview · ctrl-t order · ctrl-r relevance · ctrl-x agent"
	for cols, want := range map[int]string{
		200: all,
		120: "enter pick · ctrl-o resume · tab scope · alt-d delete · ctrl-p preview · ctrl-t order · ctrl-r relevance",
		80:  "enter pick · ctrl-o resume · tab scope · alt-d delete · ctrl-p preview",
		50:  "enter pick · ctrl-o resume · tab scope",
	} {
		p.cols = cols
		if got := p.footer(r); got != want {
			t.Errorf("%d columns: footer %q, want %q", cols, got, want)
		}
	}
	r.footer = "a notice"
	if got := p.footer(r); got != "a notice" {
		t.Errorf("a notice: footer %q", got)
	}
}

func TestOriginAndLabel(t *testing.T) {
	for path, want := range map[string]string{
		"/s/projects/h/0b7c1e2a-1111-4222-8333-444455556666.jsonl":            "captured live",
		"/s/projects/h/0b7c1e2a@m1.jsonl":                                     "captured live",
		"/s/projects/h/0b7c1e2a.jsonl.carry-1700000000000-ab12.jsonl":         "captured live",
		"/s/projects/h/compact-1700000000000-ab12.jsonl":                      "",
		"/s/projects/h/compact-1-a.gc-1700000000000-ab12.jsonl":               "",
		"/s/projects/h/import-pi-1700000000000-ab12cd34@m1.jsonl":             "imported",
		"/s/projects/h/seed.jsonl":                                            "imported",
		"/s/projects/h/seed-claude.jsonl":                                     "imported",
		"/s/projects/h/seed-claude.jsonl.carry-1700000000000-ab12.jsonl":      "imported",
		"/s/history-global.jsonl":                                             "imported",
		"/s/history-global.jsonl.carry-1700000000000-ab12.jsonl":              "imported",
		"/s/history-global.jsonl.carry-1-a.jsonl.gc-1700000000000-ab12.jsonl": "imported",
	} {
		if got := origin(path); got != want {
			t.Errorf("origin(%q) = %q, want %q", path, got, want)
		}
	}
	now := time.Date(2025, 6, 2, 12, 0, 0, 0, time.Local)
	it := history.Entry{Text: "t", TS: now.UnixMilli(), Project: "abcd", Src: "claude", Session: "s-1", File: "/s/projects/h/0b7c1e2a@m1.jsonl"}
	if got := preview(it, "", "ctrl-o", shellquote.POSIX, now); !strings.Contains(got, "Agent    Claude Code (captured live)\n") {
		t.Errorf("a live capture's preview:\n%s", got)
	}
	it.File = "/s/projects/h/seed-claude.jsonl"
	if got := preview(it, "", "ctrl-o", shellquote.POSIX, now); !strings.Contains(got, "Agent    Claude Code (imported)\n") {
		t.Errorf("an imported prompt's preview:\n%s", got)
	}
	// A compact file merges capture and import files: it does not say.
	it.File = "/s/projects/h/compact-1700000000000-ab12.jsonl"
	if got := preview(it, "", "ctrl-o", shellquote.POSIX, now); !strings.Contains(got, "Agent    Claude Code\n") {
		t.Errorf("a compacted prompt's preview:\n%s", got)
	}
}

func TestOthersHint(t *testing.T) {
	if got := othersHint(1234, true); got != "No prompts in this repository yet: tab shows All projects (1,234 prompts)." {
		t.Errorf("othersHint(1234) = %q", got)
	}
	if got := othersHint(1, false); !strings.Contains(got, "this folder yet") || !strings.Contains(got, "(1 prompt).") {
		t.Errorf("othersHint(1) = %q", got)
	}
}

// A press that gives what the size gives goes back to following the size.
func TestToggleBackToAuto(t *testing.T) {
	p := &picker{cfg: Config{ResumeKey: "ctrl-o", DeleteKeys: []string{"ctrl-delete"}}, cols: 80, lines: 24}
	p.togglePreview()
	p.togglePreview()
	if p.previewMode != previewAuto {
		t.Fatalf("hide then show at 24 lines: mode %d, want auto", p.previewMode)
	}
	p.lines = 18
	if got := p.previewWindow(); !strings.HasSuffix(got, ",hidden") {
		t.Errorf("then 18 lines: %q, want hidden", got)
	}
	p.togglePreview()
	p.lines = 30
	if got := p.previewWindow(); got != "down,15,wrap,border-top" {
		t.Errorf("shown at 18 lines, then 30: %q", got)
	}
	p.togglePreview()
	if got := p.previewWindow(); !strings.HasSuffix(got, ",hidden") || p.previewMode != previewHidden {
		t.Errorf("hidden at 30 lines: %q, mode %d", got, p.previewMode)
	}
}
