package watch

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"
)

// notices records what a Watcher says.
type notices struct {
	mu  sync.Mutex
	got []string
}

func (n *notices) add(paths []string, why string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.got = append(n.got, strings.Join(paths, ",")+": "+why)
}

func (n *notices) String() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return strings.Join(n.got, "\n")
}

// wantChange fails unless w reports a change within d.
func wantChange(t *testing.T, w *Watcher, d time.Duration, what string) {
	t.Helper()
	select {
	case <-w.C:
	case <-time.After(d):
		t.Fatalf("%s: no change reported within %v", what, d)
	}
}

// wantNone fails when w reports a change within d.
func wantNone(t *testing.T, w *Watcher, d time.Duration, what string) {
	t.Helper()
	select {
	case <-w.C:
		t.Fatalf("%s: a change was reported", what)
	case <-time.After(d):
	}
}

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintln(f, text)
	f.Close()
}

// TestPollWhenWatchLimit: a root whose watch cannot be added (the inotify
// watch limit) is polled: a write is seen, no write is no change, and it
// is said once why.
func TestPollWhenWatchLimit(t *testing.T) {
	pollEvery = 100 * time.Millisecond
	addWatch = func(*fsnotify.Watcher, string) error { return fmt.Errorf("add: %w", syscall.ENOSPC) }
	t.Cleanup(func() {
		pollEvery = Every
		addWatch = func(w *fsnotify.Watcher, path string) error { return w.Add(path) }
	})
	dir := t.TempDir()
	file := filepath.Join(dir, "a", "s.jsonl")
	write(t, file, "one")
	var n notices
	w := Start([]Root{{Path: dir}}, "", n.add)
	defer w.Close()
	if !strings.Contains(n.String(), dir+": polled every 2s: the inotify watch limit is reached") {
		t.Fatalf("notice: %q", n.String())
	}
	wantNone(t, w, 500*time.Millisecond, "nothing written")
	write(t, file, "two")
	wantChange(t, w, 2*time.Second, "a line appended")
	write(t, filepath.Join(dir, "b", "c", "new.jsonl"), "three")
	wantChange(t, w, 2*time.Second, "a file in a new folder")
	wantNone(t, w, 500*time.Millisecond, "nothing more written")
	if got := strings.Count(n.String(), "\n"); got != 0 {
		t.Errorf("said more than once: %q", n.String())
	}
}

// TestMissingRootAppears: a root that does not exist yet is looked for;
// once it appears it is a change, and it is watched from then on.
func TestMissingRootAppears(t *testing.T) {
	pollEvery = 100 * time.Millisecond
	t.Cleanup(func() { pollEvery = Every })
	dir := filepath.Join(t.TempDir(), "sessions")
	var n notices
	w := Start([]Root{{Path: dir}}, "", n.add)
	defer w.Close()
	if !strings.Contains(n.String(), dir+": not there yet") {
		t.Fatalf("notice: %q", n.String())
	}
	write(t, filepath.Join(dir, "x", "s.jsonl"), "one")
	wantChange(t, w, 2*time.Second, "the root appeared")
	wantNone(t, w, 700*time.Millisecond, "nothing more written")
	write(t, filepath.Join(dir, "x", "s.jsonl"), "two")
	wantChange(t, w, 3*time.Second, "a line appended")
	if strings.Contains(n.String(), "polled") {
		t.Errorf("polled, not watched: %q", n.String())
	}
}

// TestWatchNewFolder: a folder created under a watched root is watched
// too, and the store's folder is not.
func TestWatchNewFolder(t *testing.T) {
	dir := t.TempDir()
	store := filepath.Join(dir, "history")
	os.Mkdir(store, 0o700)
	var n notices
	w := Start([]Root{{Path: dir}}, store, n.add)
	defer w.Close()
	os.Mkdir(filepath.Join(dir, "x"), 0o700)
	wantChange(t, w, 3*time.Second, "a folder created")
	write(t, filepath.Join(dir, "x", "s.jsonl"), "one")
	wantChange(t, w, 3*time.Second, "a file in the new folder")
	write(t, filepath.Join(store, "seed.jsonl"), "written by the import")
	wantNone(t, w, time.Second, "the store written")
	if n.String() != "" {
		t.Errorf("notice: %q", n.String())
	}
}

// TestRootReplaced: a watched root removed and created again (its
// watches gone with it) is watched again: that is a change, and so is a
// write in it afterwards.
func TestRootReplaced(t *testing.T) {
	pollEvery = 100 * time.Millisecond
	t.Cleanup(func() { pollEvery = Every })
	dir := filepath.Join(t.TempDir(), "projects")
	write(t, filepath.Join(dir, "x", "s.jsonl"), "one")
	var n notices
	w := Start([]Root{{Path: dir}}, "", n.add)
	defer w.Close()
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	wantChange(t, w, 2*time.Second, "the root removed and created again")
	wantNone(t, w, 700*time.Millisecond, "nothing more written")
	write(t, filepath.Join(dir, "y", "s.jsonl"), "two")
	wantChange(t, w, 3*time.Second, "a file in the new root")
}

// TestChurnForgotten: folders created and removed under a root leave no
// watch behind.
func TestChurnForgotten(t *testing.T) {
	dir := t.TempDir()
	w := Start([]Root{{Path: dir}}, "", (&notices{}).add)
	defer w.Close()
	for i := range 200 {
		sub := filepath.Join(dir, fmt.Sprint("d", i))
		if err := os.Mkdir(sub, 0o700); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Millisecond)
		os.RemoveAll(sub)
	}
	deadline := time.Now().Add(5 * time.Second)
	for len(w.fw.WatchList()) > 1 {
		if time.Now().After(deadline) {
			t.Fatalf("%d watches left after the folders went, want 1 (the root's)", len(w.fw.WatchList()))
		}
		time.Sleep(50 * time.Millisecond)
	}
}
