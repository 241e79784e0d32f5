package policy

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// TestSaveSweepsStaleTemps: a save killed before its rename leaves its temp
// file; the next save removes it (its process is gone), and leaves the
// temp files of running processes and other files alone.
func TestSaveSweepsStaleTemps(t *testing.T) {
	dir := t.TempDir()
	base := filepath.Base(PrefPath(dir))
	stale := "." + base + ".tmp-2147483646-0a1b"
	live := fmt.Sprintf(".%s.tmp-%d-0a1b", base, os.Getpid())
	other := ".other.json.tmp-2147483646-0a1b"
	for _, name := range []string{stale, live, other} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(`{"policy":`), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := Save(dir, true); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, stale)); !os.IsNotExist(err) {
		t.Errorf("the stale temp file %s stays: %v", stale, err)
	}
	for _, name := range []string{live, other} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Errorf("%s was removed: %v", name, err)
		}
	}
}
