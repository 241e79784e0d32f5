package seed

import (
	"fmt"
	"hist/lib/store"
	"os"
	"path/filepath"
	"testing"
)

// TestSweepTemps: this machine's temp files of a killed run (process
// gone) are removed; those of a running process, another machine's and
// other files stay.
func TestSweepTemps(t *testing.T) {
	dir := t.TempDir()
	stale := ".history-global@m1.jsonl.tmp-2147483646-0a1b"
	live := fmt.Sprintf(".seed@m1.jsonl.tmp-%d-0a1b", os.Getpid())
	peer := ".seed@m2.jsonl.tmp-2147483646-0a1b"
	other := "seed@m1.jsonl"
	for _, name := range []string{stale, live, peer, other} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("{}\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	sweepTemps(store.Store{Root: dir, Machine: "m1"}, dir)
	if _, err := os.Stat(filepath.Join(dir, stale)); !os.IsNotExist(err) {
		t.Errorf("the stale temp file stays: %v", err)
	}
	for _, name := range []string{live, peer, other} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Errorf("%s was removed: %v", name, err)
		}
	}
}
