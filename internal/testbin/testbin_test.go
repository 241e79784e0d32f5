package testbin

import (
	"os"
	"path/filepath"
	"testing"
)

// Every command under cmd/ is one of Commands, so the tests run it.
func TestEveryCommand(t *testing.T) {
	dirs, err := filepath.Glob(filepath.Join(Root(), "cmd", "hist-*"))
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no commands under cmd/: %v", err)
	}
	for _, d := range dirs {
		if fi, err := os.Stat(d); err != nil || !fi.IsDir() {
			continue
		}
		if _, ok := Commands[filepath.Base(d)]; !ok {
			t.Errorf("%s is not in testbin.Commands: the tests do not run it", filepath.Base(d))
		}
	}
	if len(Commands) != len(dirs) {
		t.Errorf("testbin.Commands has %d commands, cmd/ %d", len(Commands), len(dirs))
	}
}
