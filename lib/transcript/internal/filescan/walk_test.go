package filescan

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"testing"
)

// TestWalkDirAsFilepath checks that WalkDir visits what filepath.WalkDir
// visits (with the same entry types and errors), skipped folders included,
// over random trees.
func TestWalkDirAsFilepath(t *testing.T) {
	for seed := range uint64(20) {
		rng := rand.New(rand.NewPCG(seed, 1))
		root := t.TempDir()
		var mk func(dir string, depth int)
		mk = func(dir string, depth int) {
			for i := range rng.IntN(6) {
				p := filepath.Join(dir, fmt.Sprintf("e%d.jsonl", i))
				switch k := rng.IntN(6); {
				case k == 0 && depth < 3:
					os.Mkdir(p, 0o700)
					mk(p, depth+1)
				case k == 1 && depth < 3:
					p = filepath.Join(dir, fmt.Sprintf("skip%d", i))
					os.Mkdir(p, 0o700)
					mk(p, depth+1)
				case k == 2:
					os.Symlink("e0.jsonl", p)
				case k == 3:
					syscall.Mkfifo(p, 0o600)
				default:
					os.WriteFile(p, nil, 0o600)
				}
			}
		}
		top := root
		if seed%2 == 1 {
			// A root with a lone folder in a lone folder (Codex's
			// sessions/YYYY/MM): the folders under them are walked at once.
			top = filepath.Join(root, "2026", "11")
			os.MkdirAll(top, 0o700)
		}
		mk(top, 0)
		for range 3 { // folders directly under top, the ones walked at once
			d := filepath.Join(top, fmt.Sprintf("d%d", rng.IntN(100)))
			os.Mkdir(d, 0o700)
			mk(d, 1)
		}
		visit := func(walk func(string, fs.WalkDirFunc) error) []string {
			var mu sync.Mutex
			var got []string
			err := walk(root, func(path string, d fs.DirEntry, err error) error {
				mu.Lock()
				defer mu.Unlock()
				rel, _ := filepath.Rel(root, path)
				line := fmt.Sprintf("%s %v %v", rel, d.Type(), err)
				if d != nil {
					// Info as lstat gives it (WalkDir's comes from fstatat).
					fi, ierr := d.Info()
					if ierr == nil {
						line += fmt.Sprintf(" %v %d %d %s", fi.Mode(), fi.Size(), fi.ModTime().UnixNano(), fi.Name())
					} else {
						line += " " + ierr.Error()
					}
				}
				got = append(got, line)
				if d.IsDir() && filepath.Base(path)[:2] == "sk" {
					return filepath.SkipDir
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			slices.Sort(got)
			return got
		}
		want, got := visit(filepath.WalkDir), visit(WalkDir)
		if !slices.Equal(got, want) {
			t.Errorf("seed %d: visited\n%q\nwant\n%q", seed, got, want)
		}
	}
}

// TestWalkDirErrors checks a missing root, a file as root, a SkipDir for
// root and an error from a subtree.
func TestWalkDirErrors(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "gone")
	var seen error
	if err := WalkDir(missing, func(_ string, _ fs.DirEntry, err error) error { seen = err; return err }); !errors.Is(err, fs.ErrNotExist) || !errors.Is(seen, fs.ErrNotExist) {
		t.Errorf("missing root: %v, fn saw %v", err, seen)
	}
	file := filepath.Join(t.TempDir(), "f.jsonl")
	os.WriteFile(file, nil, 0o600)
	n := 0
	if err := WalkDir(file, func(string, fs.DirEntry, error) error { n++; return nil }); err != nil || n != 1 {
		t.Errorf("file root: %v, %d calls", err, n)
	}
	root := t.TempDir()
	for i := range 6 {
		os.MkdirAll(filepath.Join(root, fmt.Sprint("d", i), "sub"), 0o700)
	}
	n = 0
	if err := WalkDir(root, func(string, fs.DirEntry, error) error { n++; return filepath.SkipDir }); err != nil || n != 1 {
		t.Errorf("SkipDir for root: %v, %d calls", err, n)
	}
	boom := errors.New("boom")
	err := WalkDir(root, func(path string, _ fs.DirEntry, _ error) error {
		if filepath.Base(path) == "sub" && filepath.Base(filepath.Dir(path)) == "d3" {
			return boom
		}
		return nil
	})
	if err != boom {
		t.Errorf("error in a subtree: %v", err)
	}
}
