// Package binbuild builds the hist binaries once for the Go tests that run
// them as a user would (the concurrency, crash and soak tests).
package binbuild

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

// Main builds every command under cmd/ into a temp folder, sets *dir to
// it, runs the tests and removes the folder.
func Main(m *testing.M, dir *string) {
	d, err := os.MkdirTemp("", "hist-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(file), "..", "..", "..")
	cmd := exec.Command("go", "build", "-o", d+string(filepath.Separator), "./cmd/...")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building the binaries: %v\n%s", err, out)
		os.RemoveAll(d)
		os.Exit(1)
	}
	*dir = d
	code := m.Run()
	os.RemoveAll(d)
	os.Exit(code)
}
