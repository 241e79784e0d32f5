// Package testbin is for tests only: it builds the hist binaries the way a
// user installs them, for the tests that run them as a user would, and
// says how long the long tests run. No binary imports it.
package testbin

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

// Root is the module's root folder.
func Root() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// Build builds the named commands (every command under cmd/ when none is
// named) into dir, each as the binary of its name.
func Build(dir string, names ...string) error {
	pkgs := []string{"./cmd/..."}
	if len(names) > 0 {
		pkgs = nil
		for _, n := range names {
			pkgs = append(pkgs, "./cmd/"+n)
		}
	}
	cmd := exec.Command("go", append([]string{"build", "-o", dir + string(filepath.Separator)}, pkgs...)...)
	cmd.Dir = Root()
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("building %v: %v\n%s", pkgs, err, out)
	}
	return nil
}

// Main builds the named commands (every one when none is named) into a
// temp folder, sets *dir to it, runs the tests and removes the folder.
func Main(m *testing.M, dir *string, names ...string) {
	d, err := os.MkdirTemp("", "hist-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := Build(d, names...); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.RemoveAll(d)
		os.Exit(1)
	}
	*dir = d
	code := m.Run()
	os.RemoveAll(d)
	os.Exit(code)
}

// Long says whether the long tests run at full length: HIST_LONG=1.
// Without it they run fewer rounds, enough to catch a regression quickly.
func Long() bool {
	return os.Getenv("HIST_LONG") == "1"
}

// Scale is long under HIST_LONG=1 and short otherwise: a loop's rounds,
// kills or seconds.
func Scale(short, long int) int {
	if Long() {
		return long
	}
	return short
}

// Track reads every source file the binaries are built from (and the
// scripts the tests install), from inside a test: go test's result cache
// then depends on them, so a change to a command never leaves the cached
// result of a test that runs the command's binary. Call it from one test
// of each package that runs the binaries.
func Track(t *testing.T) {
	t.Helper()
	root := Root()
	n := 0
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", "testdata", "node_modules", "bench":
				return filepath.SkipDir
			}
			return nil
		}
		switch filepath.Ext(p) {
		case ".go", ".mod", ".sum", ".ts", ".js", ".json", ".bash", ".zsh", ".fish", ".sh":
			if _, err := os.ReadFile(p); err != nil {
				return err
			}
			n++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		t.Fatal("no source files found under " + root)
	}
}
