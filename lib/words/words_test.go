package words

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

func TestPlural(t *testing.T) {
	for n, want := range map[int]string{0: "0 entries", 1: "1 entry", 2: "2 entries"} {
		if got := Plural(n, "entry", "entries"); got != want {
			t.Errorf("Plural(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestDescribe(t *testing.T) {
	_, err := os.Open("/nonexistent/x")
	if got := Describe(err); got != "no such file or directory" {
		t.Errorf("PathError: %q", got)
	}
	err = os.Rename("/nonexistent/a", "/nonexistent/b")
	if got := Describe(err); got != "no such file or directory" {
		t.Errorf("LinkError: %q", got)
	}
	if got := Describe(fmt.Errorf("reading: %w", syscall.EISDIR)); got != "is a directory" {
		t.Errorf("EISDIR: %q", got)
	}
	if got := Describe(errors.New("plain")); got != "plain" {
		t.Errorf("plain: %q", got)
	}
}

// The fix a permission error gets (the failing searches themselves are
// tested as a user without root's override, in testscripts).
func TestChmod(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f.json")
	os.WriteFile(file, nil, 0o600)
	for _, c := range []struct {
		path string
		err  error
		want string
	}{
		{file, fs.ErrPermission, "chmod 600 " + file},
		{dir, fs.ErrPermission, "chmod 700 " + dir},
		{filepath.Join(dir, "new", "x.jsonl"), fs.ErrPermission, "chmod 700 " + dir},
		{file, &fs.PathError{Op: "open", Path: file, Err: syscall.EACCES}, "chmod 600 " + file},
		{file, syscall.EISDIR, ""},
		{file, fs.ErrNotExist, ""},
	} {
		if got := Chmod(c.path, c.err); got != c.want {
			t.Errorf("Chmod(%s, %v) = %q, want %q", c.path, c.err, got, c.want)
		}
	}
}
