package seed

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"hist/lib/identity"
	"hist/lib/lock"
	"hist/lib/record"
	"hist/lib/store"
	"hist/lib/tombstone"
	"hist/lib/transcript"
)

func emitting(t *testing.T, name string, ps []transcript.Prompt) Source {
	root := t.TempDir()
	return Source{Name: name, Root: root, Scan: func(_ string, _ transcript.Keep, emit func(transcript.Prompt) error) (transcript.Stats, error) {
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
	bad.Scan = func(root string, keep transcript.Keep, emit func(transcript.Prompt) error) (transcript.Stats, error) {
		st, _ := scan(root, keep, emit)
		return st, &transcript.ReadError{Path: "/x.jsonl", Err: errors.New("input/output error")}
	}
	layout := Source{Name: "cursor", Root: t.TempDir(), Scan: func(string, transcript.Keep, func(transcript.Prompt) error) (transcript.Stats, error) {
		return transcript.Stats{Skipped: 2}, nil
	}}
	missing := Source{Name: "codex", Root: filepath.Join(t.TempDir(), "nope"), Scan: func(string, transcript.Keep, func(transcript.Prompt) error) (transcript.Stats, error) {
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

func TestInterruptRemovesMigrationLock(t *testing.T) {
	st := store.Store{Root: t.TempDir()}
	src := filepath.Join(t.TempDir(), "history.jsonl")
	os.WriteFile(src, []byte("x\n"), 0o600)
	inScan := make(chan struct{})
	release := make(chan struct{})
	r := New(Options{Store: st})
	done := make(chan error)
	go func() {
		_, err := r.Migrate([]LegacySource{{Name: "claude", Path: src, Scan: func(_ string, emit func(transcript.Prompt) error) (transcript.Stats, error) {
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
	_, err := r.Migrate([]LegacySource{{Name: "claude", Path: src, Scan: func(string, func(transcript.Prompt) error) (transcript.Stats, error) {
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

// TestSpill checks that records that went to the spool file come back in
// order, with the ones still in memory, and that the spool leaves nothing
// in the store.
func TestSpill(t *testing.T) {
	defer func(v int64) { spillAt = v }(spillAt)
	var ps []transcript.Prompt
	for i := range 300 {
		ps = append(ps, transcript.Prompt{Text: fmt.Sprintf("prompt %d %s", i, strings.Repeat("x", i%50)), TS: int64(i + 1),
			Cwd: fmt.Sprintf("/p/%d", i%7), Session: "s", Src: "codex"})
	}
	write := func(limit int64) map[string][]record.Record {
		spillAt = limit
		st := store.Store{Root: t.TempDir()}
		r := New(Options{Store: st})
		if _, err := r.Bootstrap([]Source{emitting(t, "codex", ps)}); err != nil {
			t.Fatal(err)
		}
		out := map[string][]record.Record{}
		for i := range 7 {
			dir := st.ProjectDir(store.Hash(fmt.Sprintf("/p/%d", i)))
			out[fmt.Sprint(i)] = readRecords(t, filepath.Join(dir, "seed-codex.jsonl"))
			if ents, _ := os.ReadDir(dir); len(ents) != 1 {
				t.Errorf("%s holds %d files, want only the seed", dir, len(ents))
			}
		}
		ents, _ := os.ReadDir(st.Root)
		for _, e := range ents {
			if e.Name() != "projects" && e.Name() != store.RegistryName && e.Name() != store.LockName && e.Name() != store.LedgerName && e.Name() != store.StateName {
				t.Errorf("left in the store: %s", e.Name())
			}
		}
		return out
	}
	inMemory := write(1 << 30)
	spilled := write(200)
	n := 0
	for k, want := range inMemory {
		n += len(want)
		if fmt.Sprint(spilled[k]) != fmt.Sprint(want) {
			t.Errorf("project %s: spilled %d records, in memory %d", k, len(spilled[k]), len(want))
		}
	}
	if n != 300 {
		t.Errorf("%d records, want 300", n)
	}
}

// TestHiddenWhileReading checks that a prompt deleted while the sources
// are read (its tombstone written after the first load of hidden.json) is
// left out of the seed.
func TestHiddenWhileReading(t *testing.T) {
	for _, limit := range []int64{1 << 30, 10} {
		defer func(v int64) { spillAt = v }(spillAt)
		spillAt = limit
		st := store.Store{Root: t.TempDir()}
		src := Source{Name: "pi", Root: t.TempDir(), Scan: func(_ string, _ transcript.Keep, emit func(transcript.Prompt) error) (transcript.Stats, error) {
			emit(transcript.Prompt{Text: "keep me", TS: 1, Cwd: "/p/a", Src: "pi"})
			emit(transcript.Prompt{Text: "Delete  me", TS: 2, Cwd: "/p/a", Src: "pi"})
			h, err := tombstone.Load(st.Hidden())
			if err != nil {
				t.Fatal(err)
			}
			h.Add("delete me")
			if err := h.Save(); err != nil {
				t.Fatal(err)
			}
			emit(transcript.Prompt{Text: "keep me too", TS: 3, Cwd: "/p/a", Src: "pi"})
			return transcript.Stats{Files: 1, Prompts: 3}, nil
		}}
		rep, err := New(Options{Store: st}).Bootstrap([]Source{src})
		if err != nil {
			t.Fatal(err)
		}
		recs := readRecords(t, filepath.Join(st.ProjectDir(store.Hash("/p/a")), "seed.jsonl"))
		if len(recs) != 2 || recs[0].Text != "keep me" || recs[1].Text != "keep me too" {
			t.Errorf("spillAt %d: seed = %+v", limit, recs)
		}
		if f := rep.Files[0]; f.Prompts != 2 || f.Hidden != 1 {
			t.Errorf("spillAt %d: prompts %d hidden %d, want 2 and 1", limit, f.Prompts, f.Hidden)
		}
	}
}

// TestRetryAfterSpill checks that a source that fails after some of its
// records went to temp files leaves nothing: no temp file, no folder.
func TestRetryAfterSpill(t *testing.T) {
	defer func(v int64) { spillAt = v }(spillAt)
	spillAt = 10
	st := store.Store{Root: filepath.Join(t.TempDir(), "store")}
	ok := emitting(t, "pi", []transcript.Prompt{{Text: "fine", TS: 1, Cwd: "/p/ok", Src: "pi"}})
	bad := Source{Name: "claude", Root: t.TempDir(), Scan: func(_ string, _ transcript.Keep, emit func(transcript.Prompt) error) (transcript.Stats, error) {
		for i := range 20 {
			emit(transcript.Prompt{Text: fmt.Sprint("lost ", i), TS: int64(i), Cwd: fmt.Sprint("/p/", i%3), Src: "claude"})
		}
		return transcript.Stats{}, &transcript.ReadError{Path: "/x", Err: errors.New("EIO")}
	}}
	rep, err := New(Options{Store: st}).Bootstrap([]Source{bad})
	if err != nil || rep.Sources[0].Status != SourceRetry {
		t.Fatalf("err %v, report %+v", err, rep.Sources)
	}
	if _, err := os.Stat(st.Root); !errors.Is(err, os.ErrNotExist) {
		ents, _ := os.ReadDir(st.Root)
		t.Errorf("the store was left behind: %v %v", err, ents)
	}
	// With a source that succeeds, only its seed is there.
	_, err = New(Options{Store: st}).Bootstrap([]Source{bad, ok})
	if err != nil {
		t.Fatal(err)
	}
	hashes, _ := st.ProjectHashes()
	if len(hashes) != 1 || hashes[0] != store.Hash("/p/ok") {
		t.Errorf("projects: %v", hashes)
	}
	ents, _ := os.ReadDir(st.ProjectDir(store.Hash("/p/ok")))
	if len(ents) != 1 || ents[0].Name() != "seed.jsonl" {
		t.Errorf("project folder: %v", ents)
	}
}

// TestDedupByTime checks the dedup of prompt events (same time, same
// identity) against a reference, whether the earlier prompt at a time is
// still in memory, in a temp file or being spilled, and whether the keys
// are made for every prompt (a tombstone to check against) or only for
// prompts that share their time.
func TestDedupByTime(t *testing.T) {
	defer func(v int64) { spillAt = v }(spillAt)
	var ps []transcript.Prompt
	variants := []string{"fix the %d bug", "Fix  the %d BUG ", "\tfix the %d bug\n", "fix the %d bugs"}
	for i := range 600 {
		ts := int64(i / 3) // three prompts a millisecond
		if i%10 == 0 {
			ts = 1000 // and many at one time, as prompts with the session's time
		}
		text := fmt.Sprintf(variants[i*7%len(variants)], i%5) + strings.Repeat(" pad", i%40)
		ps = append(ps, transcript.Prompt{Text: text, TS: ts, Cwd: fmt.Sprintf("/p/%d", i%4), Session: "s", Src: "pi"})
	}
	// The reference: the first prompt of each (project, time, identity).
	want := map[string][]string{}
	dupes := map[string]int{}
	seen := map[string]bool{}
	for _, p := range ps {
		k := fmt.Sprint(p.Cwd, "\x00", p.TS, "\x00", identity.Normalize(p.Text))
		if seen[k] {
			dupes[p.Cwd]++
			continue
		}
		seen[k] = true
		want[p.Cwd] = append(want[p.Cwd], fmt.Sprint(p.TS, " ", p.Text))
	}
	if len(seen) == len(ps) || len(seen) < len(ps)/3 {
		t.Fatalf("the input has %d distinct events of %d: not a test of the dedup", len(seen), len(ps))
	}
	for _, tomb := range []bool{false, true} {
		for _, limit := range []int64{1 << 30, 2000, 10} {
			spillAt = limit
			st := store.Store{Root: t.TempDir()}
			if tomb {
				h, err := tombstone.Load(st.Hidden())
				if err != nil {
					t.Fatal(err)
				}
				h.Add("a prompt none of these is")
				if err := h.Save(); err != nil {
					t.Fatal(err)
				}
			}
			rep, err := New(Options{Store: st}).Bootstrap([]Source{emitting(t, "pi", ps)})
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range rep.Files {
				var got []string
				for _, r := range readRecords(t, f.Path) {
					got = append(got, fmt.Sprint(r.TS, " ", r.Text))
				}
				if fmt.Sprint(got) != fmt.Sprint(want[f.Cwd]) || f.Dupes != dupes[f.Cwd] || f.Prompts != len(want[f.Cwd]) {
					t.Errorf("tombstones %v, spillAt %d, %s: %d prompts (%d repeats), want %d (%d)",
						tomb, limit, f.Cwd, len(got), f.Dupes, len(want[f.Cwd]), dupes[f.Cwd])
				}
			}
			if len(rep.Files) != 4 {
				t.Errorf("%d files, want 4", len(rep.Files))
			}
		}
	}
}

// TestSpillSameBytes checks that seed files written by spills under
// budgets of every size are byte for byte the ones written at once,
// records read back for the dedup included.
func TestSpillSameBytes(t *testing.T) {
	defer func(v int64) { spillAt = v }(spillAt)
	var ps []transcript.Prompt
	for i := range 900 {
		// Two prompts a millisecond in each project; one in four is a
		// repeat of the one before it (the same identity).
		n := i
		if i%4 == 1 {
			n = i - 1
		}
		size := []int{1, 40, 700, 4090, 4097, 9000, 70000}[n%7]
		text := fmt.Sprintf("prompt %d é ", n) + strings.Repeat(string(rune('a'+n%26)), size)
		if n != i {
			text = " " + strings.ToUpper(text)
		}
		ps = append(ps, transcript.Prompt{Text: text, TS: int64(i / 2), Cwd: fmt.Sprintf("/p/%d", (i/2)%5), Session: "s", Src: "pi"})
	}
	write := func(limit int64) (map[string]string, *Report) {
		spillAt = limit
		st := store.Store{Root: t.TempDir()}
		rep, err := New(Options{Store: st}).Bootstrap([]Source{emitting(t, "pi", ps)})
		if err != nil {
			t.Fatal(err)
		}
		files := seedFiles(t, rep)
		for i := range rep.Files {
			rep.Files[i].Path = filepath.Base(rep.Files[i].Path)
		}
		return files, rep
	}
	want, wantRep := write(1 << 30)
	if len(want) != 5 || wantRep.Files[0].Dupes == 0 {
		t.Fatalf("%d seeds, %+v", len(want), wantRep.Files)
	}
	for _, limit := range []int64{10, 5000, 30000, 200000, 3 << 20} {
		got, rep := write(limit)
		for cwd, w := range want {
			if got[cwd] != w {
				t.Errorf("spillAt %d: %s differs (%d bytes, want %d)", limit, cwd, len(got[cwd]), len(w))
			}
		}
		if fmt.Sprint(rep.Files) != fmt.Sprint(wantRep.Files) {
			t.Errorf("spillAt %d: report %+v, want %+v", limit, rep.Files, wantRep.Files)
		}
	}
}

// TestFolderSyncFails: a seed whose folder cannot be fsynced is in place,
// and reported failed in those words; the other projects' are written.
func TestFolderSyncFails(t *testing.T) {
	defer func(f func(string) error) { syncDir = f }(syncDir)
	var ps []transcript.Prompt
	for i := range 6 {
		ps = append(ps, transcript.Prompt{Text: fmt.Sprint("prompt ", i), TS: int64(i), Cwd: fmt.Sprintf("/p/%d", i%3), Session: "s", Src: "pi"})
	}
	bad := store.Hash("/p/1")
	var synced sync.Map
	syncDir = func(dir string) error {
		if _, again := synced.LoadOrStore(dir, true); again {
			t.Errorf("%s synced twice", dir)
		}
		if filepath.Base(dir) == bad {
			return errors.New("input/output error")
		}
		return nil
	}
	st := store.Store{Root: t.TempDir()}
	rep, err := New(Options{Store: st}).Bootstrap([]Source{emitting(t, "pi", ps)})
	want := "is written but its folder could not be synced: input/output error"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("Bootstrap: %v; want an error saying %q", err, want)
	}
	if len(rep.Files) != 3 {
		t.Fatalf("%d files reported, want 3: %+v", len(rep.Files), rep.Files)
	}
	for _, f := range rep.Files {
		if _, err := os.Stat(f.Path); err != nil {
			t.Errorf("%s: %v", f.Cwd, err)
		}
		switch {
		case f.Project == bad && (f.Status != FileFailed || !strings.Contains(f.Err, want)):
			t.Errorf("%s: %v %q, want failed with %q", f.Cwd, f.Status, f.Err, want)
		case f.Project != bad && f.Status != FileWritten:
			t.Errorf("%s: %v %q, want written", f.Cwd, f.Status, f.Err)
		}
	}
}

// seedFiles returns what the seed files rep names hold, by project, and
// checks that each project folder holds only its seed (no temp file left).
func seedFiles(t *testing.T, rep *Report) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, f := range rep.Files {
		data, err := os.ReadFile(f.Path)
		if err != nil {
			t.Fatal(err)
		}
		out[f.Cwd] = string(data)
		if ents, _ := os.ReadDir(filepath.Dir(f.Path)); len(ents) != 1 {
			t.Errorf("%s holds %d files, want only the seed", filepath.Dir(f.Path), len(ents))
		}
	}
	return out
}
