package seed

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"hist/lib/lock"
	"hist/lib/record"
	"hist/lib/store"
	"hist/lib/transcript"
)

func emitting(t *testing.T, name string, ps []transcript.Prompt) Source {
	root := t.TempDir()
	return Source{Name: name, Root: root, Scan: func(_ string, emit func(transcript.Prompt) error) (transcript.Stats, error) {
		for _, p := range ps {
			if err := emit(p); err != nil {
				return transcript.Stats{}, err
			}
		}
		return transcript.Stats{Files: 1, Prompts: len(ps)}, nil
	}}
}

func readRecords(t *testing.T, path string) []record.Record {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []record.Record
	if _, err := record.Scan(f, func(l *record.Line) error {
		out = append(out, l.Record())
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestBootstrapDedupAndFilters(t *testing.T) {
	st := store.Store{Root: t.TempDir()}
	ps := []transcript.Prompt{
		{Text: "one", TS: 10, Cwd: "/p/a", Session: "s", Src: "pi"},
		{Text: "  ONE ", TS: 10, Cwd: "/p/a", Session: "s2", Src: "pi"}, // same identity and time
		{Text: "one", TS: 11, Cwd: "/p/a", Session: "s", Src: "pi"},     // another event
		{Text: "/model x", TS: 12, Cwd: "/p/a", Src: "pi"},              // command-like
		{Text: " \n", TS: 13, Cwd: "/p/a", Src: "pi"},                   // blank
		{Text: "no cwd", TS: 14, Cwd: "", Src: "pi"},
		{Text: "relative cwd", TS: 15, Cwd: "rel/dir", Src: "pi"},
		{Text: "two", TS: 16, Cwd: "/p/b/../b", Src: "pi"},
	}
	r := New(Options{Store: st})
	rep, err := r.Bootstrap([]Source{emitting(t, "pi", ps)})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Sources[0].NoCwd != 2 {
		t.Errorf("NoCwd = %d, want 2", rep.Sources[0].NoCwd)
	}
	if len(rep.Files) != 2 {
		t.Fatalf("files = %+v", rep.Files)
	}
	a := readRecords(t, filepath.Join(st.ProjectDir(store.Hash("/p/a")), "seed.jsonl"))
	if len(a) != 2 || a[0].TS != 10 || a[1].TS != 11 || a[0].Src != "pi" || a[0].Session != "s" {
		t.Errorf("project a = %+v", a)
	}
	if rep.Files[0].Dupes != 1 {
		t.Errorf("dupes = %d, want 1", rep.Files[0].Dupes)
	}
	b := readRecords(t, filepath.Join(st.ProjectDir(store.Hash("/p/b")), "seed.jsonl"))
	if len(b) != 1 || b[0].Text != "two" {
		t.Errorf("project b = %+v", b)
	}
	if got := st.LoadRegistry()[store.Hash("/p/b")]; got != "/p/b" {
		t.Errorf("registry /p/b = %q", got)
	}
}

func TestBootstrapProjectOnly(t *testing.T) {
	st := store.Store{Root: t.TempDir()}
	ps := []transcript.Prompt{
		{Text: "a prompt", TS: 1, Cwd: "/p/a", Src: "claude"},
		{Text: "b prompt", TS: 2, Cwd: "/p/b", Src: "claude"},
	}
	r := New(Options{Store: st, Project: "/p/a"})
	rep, err := r.Bootstrap([]Source{emitting(t, "claude", ps), emitting(t, "codex", nil)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(st.ProjectDir(store.Hash("/p/b"))); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("project b was written: %v", err)
	}
	var statuses []string
	for _, f := range rep.Files {
		statuses = append(statuses, f.Source+"="+f.Status)
	}
	if got := strings.Join(statuses, " "); got != "codex=none claude=written" {
		t.Errorf("files: %s", got)
	}
	if _, err := os.Stat(filepath.Join(st.ProjectDir(store.Hash("/p/a")), "seed-claude.jsonl")); err != nil {
		t.Error(err)
	}
}

func TestBootstrapRetryAndLayout(t *testing.T) {
	st := store.Store{Root: t.TempDir()}
	ps := []transcript.Prompt{{Text: "x", TS: 1, Cwd: "/p/a", Src: "pi"}}
	bad := emitting(t, "pi", ps)
	scan := bad.Scan
	bad.Scan = func(root string, emit func(transcript.Prompt) error) (transcript.Stats, error) {
		st, _ := scan(root, emit)
		return st, &transcript.ReadError{Path: "/x.jsonl", Err: errors.New("input/output error")}
	}
	layout := Source{Name: "cursor", Root: t.TempDir(), Scan: func(string, func(transcript.Prompt) error) (transcript.Stats, error) {
		return transcript.Stats{Skipped: 2}, nil
	}}
	missing := Source{Name: "codex", Root: filepath.Join(t.TempDir(), "nope"), Scan: func(string, func(transcript.Prompt) error) (transcript.Stats, error) {
		t.Error("a missing root was scanned")
		return transcript.Stats{}, nil
	}}
	r := New(Options{Store: st})
	rep, err := r.Bootstrap([]Source{bad, layout, missing})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{SourceRetry, SourceLayout, SourceMissing}
	for i, s := range rep.Sources {
		if s.Status != want[i] {
			t.Errorf("%s: status %s, want %s", s.Name, s.Status, want[i])
		}
	}
	if len(rep.Files) != 0 {
		t.Errorf("files written: %+v", rep.Files)
	}
	if _, err := os.Stat(st.Projects()); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("projects folder exists: %v", err)
	}
}

func TestBootstrapBusyLock(t *testing.T) {
	st := store.Store{Root: t.TempDir()}
	held, err := lock.Acquire(st.Lock(), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Release()
	r := New(Options{Store: st, LockWait: 50 * time.Millisecond})
	rep, err := r.Bootstrap([]Source{emitting(t, "pi", []transcript.Prompt{{Text: "x", TS: 1, Cwd: "/p/a"}})})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Busy == nil {
		t.Fatal("no Busy with the lock held")
	}
	if _, err := os.Stat(st.Projects()); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("written while another rewriter held the lock: %v", err)
	}
}

func TestCreateNewNeverReplaces(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "seed.jsonl")
	r := New(Options{})
	if err := os.WriteFile(path, []byte("old\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	created, err := r.createNew(path, []byte("new\n"))
	if err != nil || created {
		t.Fatalf("created=%v err=%v over an existing file", created, err)
	}
	if data, _ := os.ReadFile(path); string(data) != "old\n" {
		t.Errorf("existing file changed: %q", data)
	}
	os.Remove(path)
	created, err = r.createNew(path, []byte("new\n"))
	if err != nil || !created {
		t.Fatalf("created=%v err=%v", created, err)
	}
	fi, _ := os.Stat(path)
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", fi.Mode())
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Errorf("temp files left: %v", ents)
	}
}

func TestInterruptRemovesMigrationLock(t *testing.T) {
	st := store.Store{Root: t.TempDir()}
	src := filepath.Join(t.TempDir(), "history.jsonl")
	os.WriteFile(src, []byte("x\n"), 0o600)
	inScan := make(chan struct{})
	release := make(chan struct{})
	r := New(Options{Store: st})
	done := make(chan error)
	go func() {
		_, err := r.Migrate([]LegacySource{{Name: "claude", Path: src, Scan: func(emit func(transcript.Prompt) error) (transcript.Stats, error) {
			close(inScan)
			<-release
			return transcript.Stats{Files: 1}, emit(transcript.Prompt{Text: "late", TS: 1})
		}}})
		done <- err
	}()
	<-inScan
	lockDir := filepath.Join(st.Root, MigrationLockName)
	if _, err := os.Stat(lockDir); err != nil {
		t.Fatalf("the lock folder is not held while migrating: %v", err)
	}
	r.Interrupt()
	if _, err := os.Stat(lockDir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("lock folder still there after Interrupt: %v", err)
	}
	close(release)
	err := <-done
	if !errors.Is(err, errStopped) {
		t.Errorf("Migrate after Interrupt: %v, want it stopped", err)
	}
	if _, err := os.Stat(st.Global()); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("history-global.jsonl written after Interrupt: %v", err)
	}
}

func TestMigratedStateCorrupt(t *testing.T) {
	st := store.Store{Root: t.TempDir()}
	os.WriteFile(filepath.Join(st.Root, MigratedName), []byte("{garbage"), 0o600)
	src := filepath.Join(t.TempDir(), "history.jsonl")
	os.WriteFile(src, []byte("x\n"), 0o600)
	r := New(Options{Store: st})
	_, err := r.Migrate([]LegacySource{{Name: "claude", Path: src, Scan: func(func(transcript.Prompt) error) (transcript.Stats, error) {
		t.Error("read with a corrupt migration record")
		return transcript.Stats{}, nil
	}}})
	if err == nil {
		t.Fatal("no error for a corrupt migration record")
	}
	if _, err := os.Stat(filepath.Join(st.Root, MigrationLockName)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("lock folder: %v", err)
	}
}
