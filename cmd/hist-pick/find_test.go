//go:build unix

package main

// Tmux tests of finding a prompt: the order key, the agent key, the
// filters, the rows' column and the repository scope (helpers in
// tmux_test.go).

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"hist/lib/record"
	"hist/lib/store"
)

// firstRow is the first list row's prompt.
func firstRow(s string) string {
	for _, r := range strings.Split(s, "\n") {
		if promptRow.MatchString(r) {
			return rowText(r)
		}
	}
	return ""
}

// ctrl-t orders by use and back; ctrl-x cycles the agent filter; the
// header's second row says which order and filter are in force, and
// "relevance" while a query is typed (ctrl-r: the order again).
func TestOrderAndAgentKeys(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	tm := newTerm(t, f.dir, 120, 40)
	tm.pick("")
	tm.waitText("32 loaded")
	status := func(want, first string) string {
		t.Helper()
		return tm.waitFor(fmt.Sprintf("%q with %q first", want, first), func(s string) bool {
			rows := strings.Split(s, "\n")
			return len(rows) > 2 && strings.HasPrefix(rows[2], ">") && strings.TrimSpace(rows[1]) == want && firstRow(s) == first
		})
	}
	status("newest first", "fix the flaky test")
	tm.keys("C-t")
	// prompt 29 was typed twice; the others once.
	s := status("most used", "prompt 29")
	if !regexp.MustCompile(`(?m)^▌ +\d+y pi +×2 prompt 29`).MatchString(s) {
		t.Errorf("most used: the first row does not show its 2 uses:\n%s", s)
	}
	tm.keys("C-x") // pi: every prompt but Claude Code's
	s = status("most used · pi", "prompt 29")
	tm.waitText("31 loaded")
	if strings.Contains(s, "flaky") {
		t.Errorf("pi: Claude Code's prompt is listed:\n%s", s)
	}
	tm.keys("C-x")
	status("most used · claude", "fix the flaky test")
	tm.waitText("1/1")
	tm.keys("C-x")
	status("most used", "prompt 29")
	tm.waitText("32 loaded")
	tm.text("prompt 1")
	status("relevance", "prompt 19")
	tm.keys("C-r")
	status("most used", "prompt 21") // the newest match (none was used twice)
	tm.keys("C-u")
	tm.keys("C-t")
	status("newest first", "fix the flaky test")
	tm.keys("Escape")
	if code, _, _ := tm.result(); code != "130" {
		t.Errorf("Esc: exit %s", code)
	}
}

// The command line's filters: the header names them; a filter that
// matches nothing says so in the footer.
func TestFilterFlags(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	tm := newTerm(t, f.dir, 120, 40)
	tm.pick("--src claude --since 2023-11-14T22:44")
	s := tm.waitText("1 loaded")
	l := parseLayout(t, s)
	if got := strings.TrimSpace(l.header[1]); got != "newest first · claude · since 2023-11-14T22:44" || l.selected() != "fix the flaky test" {
		t.Errorf("status %q, selected %q:\n%s", got, l.selected(), s)
	}
	tm.keys("Escape")
	tm.result()
	tm.pick("--session none")
	tm.waitText("No prompt here matches the filters.")
	tm.keys("Escape")
	tm.result()
	tm.pick("--src bogus")
	if code, _, stderr := tm.result(); code != "2" || !strings.Contains(stderr, `"bogus" is not an agent`) {
		t.Errorf("--src bogus: exit %s, %q", code, stderr)
	}
}

// Uses are counted as the store is read: rows sent before the load ends
// are sent again with their counts once it has.
func TestUsesOnceLoaded(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	var b []byte
	// The newest prompt's other copy is the oldest record of a big file.
	b = record.Append(b, record.Record{Text: "typed long ago and now", TS: 1500000000000})
	for i := range 20000 {
		b = record.Append(b, record.Record{Text: fmt.Sprintf("filler prompt %05d", i), TS: 1600000000000 + int64(i)})
	}
	b = record.Append(b, record.Record{Text: "typed long ago and now", TS: 1800000000000})
	if err := os.WriteFile(filepath.Join(store.Store{Root: f.store}.ProjectDir(f.hash), "big.jsonl"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	tm := newTerm(t, f.dir, 120, 40)
	tm.pick("")
	s := tm.waitFor("the first row with its 2 uses", func(s string) bool {
		return regexp.MustCompile(`(?m)^▌ +\w+ pi +×2 typed long ago and now`).MatchString(s) && strings.Contains(s, "20,033 loaded")
	})
	if l := parseLayout(t, s); len(l.list) != 10 || !strings.Contains(l.header[0], "1/20,033") {
		t.Errorf("after the reload:\n%s", s)
	}
	tm.keys("Escape")
	tm.result()
}

// In a git repository the radio's project scope is the repository: the
// prompts of its subfolders are listed from its top, and of its top from
// a subfolder.
func TestRepositoryScope(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	sub := filepath.Join(f.proj, "sub")
	for _, d := range []string{filepath.Join(f.proj, ".git"), sub} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	st := store.Store{Root: f.store}
	canon, _ := store.Canonical(sub)
	if err := st.Register(store.Hash(canon), canon); err != nil {
		t.Fatal(err)
	}
	writeRecords(t, filepath.Join(st.ProjectDir(store.Hash(canon)), "s.jsonl"), record.Record{Text: "typed in sub", TS: 1800000000000})
	tm := newTerm(t, f.dir, 120, 40)
	tm.pick("--project " + sub)
	s := tm.waitText("33 loaded")
	if !strings.Contains(s, "◉ This repository | ○ All projects") || !strings.Contains(s, "typed in sub") || !strings.Contains(s, "fix the flaky test") {
		t.Errorf("from the subfolder:\n%s", s)
	}
	tm.keys("Escape")
	tm.result()
}

func writeRecords(t *testing.T, path string, recs ...record.Record) {
	t.Helper()
	var b []byte
	for _, r := range recs {
		b = record.Append(b, r)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}
