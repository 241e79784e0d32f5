package pi

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"hist/lib/transcript"
	"hist/lib/transcript/internal/ttest"
)

func piPrompt(id, text string) string {
	return fmt.Sprintf(`{"type":"message","id":%q,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":%q,"timestamp":1767225601000}}`+"\n", id, text)
}

// A grown session is read from where the last read stopped, with its
// header's id and cwd; a torn last line is left to the next read; a
// rewritten or shrunk one is read whole.
func TestScanResumes(t *testing.T) {
	root := t.TempDir()
	path := filepath.Join(root, "s.jsonl")
	head := `{"type":"session","version":3,"id":"s1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/proj"}` + "\n"
	ttest.WriteFile(t, path, head+piPrompt("a1", "one")+piPrompt("a2", "two"))
	cur := ttest.Cursors{}
	scan := func(want ...string) []transcript.Prompt {
		t.Helper()
		got := ttest.ScanCursors(t, ScanKept, cur, root, want...)
		for _, p := range got {
			if p.Session != "s1" || p.Cwd != "/proj" {
				t.Errorf("%q: session %q cwd %q", p.Text, p.Session, p.Cwd)
			}
		}
		return got
	}
	scan("one", "two")
	if fi, _ := os.Stat(path); cur[path].Offset != fi.Size() {
		t.Fatalf("cursor %+v, size %d", cur[path], fi.Size())
	}
	scan() // nothing new

	// Appended: one whole line and one torn.
	torn := piPrompt("a4", "four")
	ttest.Append(t, path, piPrompt("a3", "three")+torn[:20])
	scan("three")
	ttest.Append(t, path, torn[20:])
	scan("four")

	// A torn line that is a whole record yet (no newline): read, and read
	// again once its line ends.
	last := piPrompt("a5", "five")
	ttest.Append(t, path, last[:len(last)-1])
	scan("five")
	ttest.Append(t, path, "\n")
	scan("five")

	// Its head rewritten (another session header), longer: read whole.
	data, _ := os.ReadFile(path)
	ttest.WriteFile(t, path, string(data[:len(head)-2])+`,"x":1}`+"\n"+string(data[len(head):])+piPrompt("a6", "six"))
	scan("one", "two", "three", "four", "five", "six")

	// Shrunk below the cursor: read whole.
	ttest.WriteFile(t, path, head+piPrompt("a9", "nine"))
	scan("nine")

	// The header after a blank line: found again as a read from the
	// start finds it.
	ttest.WriteFile(t, path, "\n"+head+piPrompt("b1", "ten"))
	scan("ten")
	ttest.Append(t, path, piPrompt("b2", "eleven"))
	scan("eleven")
}
