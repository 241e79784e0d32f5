package claude

import (
	"path/filepath"
	"testing"

	"hist/lib/transcript"
	"hist/lib/transcript/internal/ttest"
)

// A grown transcript is read from where the last read stopped; a record
// appended without a cwd takes the latest one read before it.
func TestScanResumes(t *testing.T) {
	root := t.TempDir()
	path := filepath.Join(root, "p", "s.jsonl")
	ttest.WriteFile(t, path, lines(rec("one", m{"cwd": "/w/a"}), rec("two", m{"cwd": "/w/b"})))
	cur := ttest.Cursors{}
	scan := func(want ...string) []transcript.Prompt {
		t.Helper()
		got := ttest.ScanCursors(t, ScanKept, cur, root, want...)
		return got
	}
	scan("one", "two")
	scan()
	ttest.Append(t, path, lines(rec("three", m{"cwd": nil})))
	if got := scan("three"); len(got) == 1 && got[0].Cwd != "/w/b" {
		t.Errorf("cwd %q, want the latest one before", got[0].Cwd)
	}
	// Rewritten: read whole.
	ttest.WriteFile(t, path, lines(rec("zero", m{"cwd": "/w/z"}), rec("one", m{"cwd": "/w/a"}), rec("two", m{"cwd": "/w/b"}), rec("four", m{"cwd": "/w/b"})))
	scan("zero", "one", "two", "four")
}
