package seed

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// TestSweepTemps: temp files of a killed run (process gone) are removed;
// those of a running process and other files stay.
func TestSweepTemps(t *testing.T) {
	dir := t.TempDir()
	stale := ".history-global.jsonl.tmp-2147483646-0a1b"
	live := fmt.Sprintf(".seed.jsonl.tmp-%d-0a1b", os.Getpid())
	other := "seed.jsonl"
	for _, name := range []string{stale, live, other} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("{}\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	sweepTemps(dir)
	if _, err := os.Stat(filepath.Join(dir, stale)); !os.IsNotExist(err) {
		t.Errorf("the stale temp file stays: %v", err)
	}
	for _, name := range []string{live, other} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Errorf("%s was removed: %v", name, err)
		}
	}
}
