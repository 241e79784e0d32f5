//go:build unix

package deletion

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"hist/lib/atomicfile"
	"hist/lib/history"
	"hist/lib/identity"
	"hist/lib/record"
	"hist/lib/store"
	"hist/lib/tombstone"
)

func rec(text string, ts int64) string {
	return string(record.Marshal(record.Record{Text: text, TS: ts}))
}

type fixture struct {
	t    *testing.T
	st   store.Store
	hash string
	dir  string
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	root := filepath.Join(t.TempDir(), "store")
	f := &fixture{t: t, st: store.Store{Root: root}, hash: "0123456789abcdef"}
	f.dir = f.st.ProjectDir(f.hash)
	if err := store.EnsureDir(f.dir); err != nil {
		t.Fatal(err)
	}
	return f
}

func (f *fixture) scope() store.Scope { return store.Scope{Project: f.hash} }

// write creates a store file in the project folder with a fixed old mtime.
func (f *fixture) write(name, content string) string {
	f.t.Helper()
	p := filepath.Join(f.dir, name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		f.t.Fatal(err)
	}
	old := time.Unix(1_600_000_000, 0)
	if err := os.Chtimes(p, old, old); err != nil {
		f.t.Fatal(err)
	}
	return p
}

func read(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

type snapshot struct {
	data  string
	mtime time.Time
	ino   uint64
}

func snap(t *testing.T, p string) snapshot {
	t.Helper()
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return snapshot{read(t, p), fi.ModTime(), fi.Sys().(*syscall.Stat_t).Ino}
}

// noTemps fails if a temp file is left anywhere under root.
func noTemps(t *testing.T, root string) {
	t.Helper()
	filepath.Walk(root, func(p string, fi os.FileInfo, err error) error {
		if err == nil && atomicfile.IsTemp(fi.Name()) {
			t.Errorf("temp file left behind: %s", p)
		}
		return nil
	})
}

func hiddenEntries(t *testing.T, st store.Store) []string {
	t.Helper()
	s, err := tombstone.Load(st.Hidden())
	if err != nil {
		t.Fatal(err)
	}
	return s.Entries
}

func TestRewriteKeepsEverythingElseByteForByte(t *testing.T) {
	f := newFixture(t)
	lines := []struct {
		line string
		keep bool
	}{
		{rec("keep me", 1), true},
		{rec("Delete  ME", 2), false}, // case and whitespace: the same prompt
		{"this is not json\n", true},
		{"\n", true},
		{"   \n", true},
		{`{"v":1,"text":"delete me"}` + "\n", false}, // no ts: readers skip it, but it is a copy
		{`{"v":2,"text":"keep v2","ts":3}` + "\n", true},
		{rec("delete me and more", 4), true}, // shares a beginning: stays
		{rec("delete", 4), true},
		{rec("  delete\tme\n", 5), false},
		{`{"ts":6, "text" : "DELETE ME", "v":1, "extra":[1,2]}` + "\n", false},
		{`{"v":1,"text":"d\u0065lete me","ts":7}` + "\n", false}, // escaped: the same text
		{rec("keep 2", 8), true},
		{`["delete me"]` + "\n", true},
		{`{"v":1,"text":"torn`, true}, // a torn last line stays as it is
	}
	var all, want strings.Builder
	for _, l := range lines {
		all.WriteString(l.line)
		if l.keep {
			want.WriteString(l.line)
		}
	}
	p := f.write("a.jsonl", all.String())
	res := Delete(f.st, f.scope(), []string{"delete me"}, Options{})
	if res.Outcome != Clean || res.Err != nil {
		t.Fatalf("outcome %v, err %v", res.Outcome, res.Err)
	}
	if got := read(t, p); got != want.String() {
		t.Errorf("rewritten file:\n%s\nwant:\n%s", got, want.String())
	}
	if res.Copies != 5 || len(res.Rewritten) != 1 || res.Rewritten[0] != p || res.Tombstones != 1 || res.Prompts != 1 {
		t.Errorf("result %+v", res)
	}
	if e := hiddenEntries(t, f.st); len(e) != 1 || e[0] != identity.Key("delete me") {
		t.Errorf("hidden.json %v", e)
	}
	if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", fi.Mode())
	}
	noTemps(t, f.st.Root)
}

func TestFilesWithoutACopyAreNotTouched(t *testing.T) {
	f := newFixture(t)
	a := f.write("a.jsonl", rec("one", 1)+rec("secret", 2))
	b := f.write("b.jsonl", rec("two", 3)+rec("secret and more", 4)+"garbage\n"+`{"v":1,"text":"torn`)
	c := f.write("seed.jsonl", "")
	before := []snapshot{snap(t, b), snap(t, c)}
	res := Delete(f.st, f.scope(), []string{"SECRET"}, Options{})
	if res.Outcome != Clean || res.Copies != 1 || res.Scanned != 3 {
		t.Fatalf("result %+v", res)
	}
	for i, p := range []string{b, c} {
		if got := snap(t, p); got != before[i] {
			t.Errorf("%s changed: %+v -> %+v", p, before[i], got)
		}
	}
	if got := read(t, a); got != rec("one", 1) {
		t.Errorf("a.jsonl = %q", got)
	}
}

func TestEmptiedFileStays(t *testing.T) {
	f := newFixture(t)
	p := f.write("a.jsonl", rec("only", 1)+rec("ONLY ", 2))
	if res := Delete(f.st, f.scope(), []string{"only"}, Options{}); res.Outcome != Clean || res.Copies != 2 {
		t.Fatalf("result %+v", res)
	}
	if got := read(t, p); got != "" {
		t.Errorf("file holds %q", got)
	}
}

// Lines appended by a writer that opened the file before the rename, at
// every point of the rewrite, reach the new file; copies among them are
// dropped too.
func TestLinesAppendedDuringRewrite(t *testing.T) {
	f := newFixture(t)
	p := f.write("a.jsonl", rec("x", 1)+rec("gone", 2)+rec("y", 3))
	var w *os.File
	appendOld := func(s string) {
		if _, err := w.WriteString(s); err != nil {
			t.Fatal(err)
		}
	}
	hookScanned = func(string) {
		var err error
		if w, err = os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0); err != nil {
			t.Fatal(err)
		}
		appendOld(rec("after scan", 4) + rec("gone", 5))
	}
	hookBeforeRename = func(string) { appendOld(rec("before rename", 6)) }
	hookAfterRename = func(string) { appendOld(rec("after rename", 7) + rec(" GONE", 8)) }
	defer func() { hookScanned, hookBeforeRename, hookAfterRename = nil, nil, nil }()
	res := Delete(f.st, f.scope(), []string{"gone"}, Options{})
	w.Close()
	if res.Outcome != Clean || res.Copies != 3 || len(res.Carry) != 0 {
		t.Fatalf("result %+v", res)
	}
	want := rec("x", 1) + rec("y", 3) + rec("after scan", 4) + rec("before rename", 6) + rec("after rename", 7)
	if got := read(t, p); got != want {
		t.Errorf("file:\n%s\nwant:\n%s", got, want)
	}
}

// A last line still being written when the rewrite ends is waited for; a
// torn line from a writer that died is kept as it is.
func TestLineLandingAfterRenameIsWaitedFor(t *testing.T) {
	f := newFixture(t)
	p := f.write("a.jsonl", rec("x", 1)+rec("gone", 2))
	var w *os.File
	hookBeforeRename = func(string) {
		w, _ = os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
		w.WriteString(`{"v":1,"text":"half`)
	}
	hookAfterRename = func(string) {
		go func() {
			time.Sleep(20 * time.Millisecond)
			w.WriteString(` done","ts":3}` + "\n")
		}()
	}
	defer func() { hookBeforeRename, hookAfterRename = nil, nil }()
	res := Delete(f.st, f.scope(), []string{"gone"}, Options{})
	w.Close()
	if res.Outcome != Clean {
		t.Fatalf("result %+v", res)
	}
	if got, want := read(t, p), rec("x", 1)+rec("half done", 3); got != want {
		t.Errorf("file %q, want %q", got, want)
	}
}

// setFileLimit sets RLIMIT_FSIZE (bytes) until the test ends: writes that
// cross it fail with EFBIG (Go ignores SIGXFSZ).
var restoreLimit = func() {}

const childEnv = "DELETION_TEST_CHILD"

// inChild reruns the calling test in a child process of the test binary
// and reports whether this is that child. Tests that lower RLIMIT_FSIZE
// run there: the limit is per process, and the parent's go test log file
// must not hit it.
func inChild(t *testing.T) bool {
	if os.Getenv(childEnv) == t.Name() {
		return true
	}
	cmd := exec.Command(os.Args[0], "-test.run=^"+t.Name()+"$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), childEnv+"="+t.Name())
	out, err := cmd.CombinedOutput()
	if err == nil && bytes.Contains(out, []byte("--- SKIP: "+t.Name())) {
		t.Skipf("skipped in the child process:\n%s", out)
	}
	if err != nil || !bytes.Contains(out, []byte("--- PASS: "+t.Name())) {
		t.Fatalf("in a child process: %v\n%s", err, out)
	}
	return false
}

func setFileLimit(t *testing.T, limit uint64) {
	var old syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_FSIZE, &old); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &syscall.Rlimit{Cur: limit, Max: old.Max}); err != nil {
		t.Skipf("cannot set RLIMIT_FSIZE: %v", err)
	}
	restoreLimit = func() { syscall.Setrlimit(syscall.RLIMIT_FSIZE, &old) }
	t.Cleanup(restoreLimit)
}

// When the late lines cannot be appended to the new file, they are kept
// in a carry file beside it, which readers list and a later delete sweeps.
func TestLateLinesGoToACarryFileWhenAppendFails(t *testing.T) {
	if !inChild(t) {
		return
	}
	f := newFixture(t)
	big := strings.Repeat("k", 4000)
	p := f.write("a.jsonl", rec(big, 1)+rec("gone", 2))
	late := rec("late one", 3) + rec("gone", 4) + rec("late two", 5)
	hookAfterRename = func(string) {
		// A writer that opened the old file before the rename writes now.
		appendToOldInode(t, p, late)
		fi, _ := os.Stat(p)
		setFileLimit(t, uint64(fi.Size())+10) // the new file cannot grow by a line; a small carry file can be written
	}
	defer func() { hookAfterRename = nil }()
	res := Delete(f.st, f.scope(), []string{"gone"}, Options{})
	restoreLimit()
	hookAfterRename = nil
	if res.Outcome != Clean || len(res.Carry) != 1 || res.Copies != 2 {
		t.Fatalf("result %+v", res)
	}
	carry := res.Carry[0]
	if filepath.Dir(carry) != f.dir || store.Classify(filepath.Base(carry)) != store.Carry || store.Origin(filepath.Base(carry)) != "a.jsonl" {
		t.Errorf("carry file %s", carry)
	}
	if got, want := read(t, carry), rec("late one", 3)+rec("late two", 5); got != want {
		t.Errorf("carry holds %q, want %q", got, want)
	}
	if fi, _ := os.Stat(carry); fi.Mode().Perm() != 0o600 {
		t.Errorf("carry mode %v", fi.Mode())
	}
	// The failed append may have written a fragment up to the limit (a
	// short write): a torn line that readers skip; its line is in the carry.
	if got := read(t, p); !strings.HasPrefix(got, rec(big, 1)) || strings.Contains(got[len(rec(big, 1)):], "\n") {
		t.Errorf("file holds %q", got)
	}
	// Readers list the carry file's prompts; a later delete sweeps it.
	files, _ := f.st.Files(f.scope())
	h := history.Read(files, nil)
	if h.Len() != 3 {
		t.Errorf("listed %d prompts, want 3", h.Len())
	}
	if res := Delete(f.st, f.scope(), []string{"late one"}, Options{}); res.Outcome != Clean || res.Copies != 1 {
		t.Errorf("second delete %+v", res)
	}
	if got := read(t, carry); got != rec("late two", 5) {
		t.Errorf("carry after the second delete holds %q", got)
	}
}

// appendToOldInode appends to the file the rewriter still holds open under
// path's old inode: found through /proc/self/fd (the rewriter runs in this
// process).
func appendToOldInode(t *testing.T, path, s string) {
	t.Helper()
	var cur syscall.Stat_t
	if err := syscall.Stat(path, &cur); err != nil {
		t.Fatal(err)
	}
	fds, _ := os.ReadDir("/proc/self/fd")
	for _, e := range fds {
		target, err := os.Readlink("/proc/self/fd/" + e.Name())
		if err != nil || !strings.HasPrefix(target, path) || !strings.HasSuffix(target, "(deleted)") {
			continue
		}
		w, err := os.OpenFile("/proc/self/fd/"+e.Name(), os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		var st syscall.Stat_t
		syscall.Fstat(int(w.Fd()), &st)
		if st.Ino == cur.Ino {
			continue
		}
		if _, err := w.WriteString(s); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Fatal("the old inode is not open")
}

func TestUnreadableFileIsPartlyHidden(t *testing.T) {
	f := newFixture(t)
	a := f.write("a.jsonl", rec("keep", 1)+rec("gone", 2))
	if err := os.Mkdir(filepath.Join(f.dir, "x.jsonl"), 0o700); err != nil {
		t.Fatal(err)
	}
	res := Delete(f.st, f.scope(), []string{"gone"}, Options{})
	if res.Outcome != PartlyHidden || len(res.Failed) != 1 || res.Tombstones != 1 || res.Copies != 1 {
		t.Fatalf("result %+v", res)
	}
	var fe *FileError
	if !errors.As(res.Failed[0], &fe) || fe.Path != filepath.Join(f.dir, "x.jsonl") {
		t.Errorf("failed %v", res.Failed)
	}
	if read(t, a) != rec("keep", 1) {
		t.Errorf("the readable file was not cleaned")
	}
	if len(hiddenEntries(t, f.st)) != 1 {
		t.Errorf("no tombstone")
	}
	if res.Outcome.Notice() != "Some history files could not be rewritten; the prompt is hidden, but copies may remain on disk." {
		t.Errorf("notice %q", res.Outcome.Notice())
	}
}

// A file whose new version cannot be written is left as it was, and its
// temp file is removed.
func TestFailedRewriteLeavesFileAndNoTemp(t *testing.T) {
	if !inChild(t) {
		return
	}
	f := newFixture(t)
	big := f.write("big.jsonl", rec("gone", 1)+rec(strings.Repeat("b", 20000), 2))
	small := f.write("small.jsonl", rec("gone", 3)+rec("s", 4))
	before := snap(t, big)
	setFileLimit(t, 8000)
	res := Delete(f.st, f.scope(), []string{"gone"}, Options{})
	restoreLimit()
	if res.Outcome != PartlyHidden || len(res.Failed) != 1 || res.Copies != 1 || res.Tombstones != 1 {
		t.Fatalf("result %+v", res)
	}
	if !errors.Is(res.Failed[0], syscall.EFBIG) {
		t.Errorf("failure %v, want EFBIG", res.Failed[0])
	}
	if snap(t, big) != before {
		t.Errorf("big.jsonl changed")
	}
	if read(t, small) != rec("s", 4) {
		t.Errorf("small.jsonl not cleaned")
	}
	noTemps(t, f.st.Root)
}

func bigHidden(t *testing.T, st store.Store) string {
	t.Helper()
	var e []string
	for i := range 1000 {
		e = append(e, identity.Key(fmt.Sprint("old ", i)))
	}
	b, _ := json.Marshal(e)
	if err := os.WriteFile(st.Hidden(), b, 0o600); err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestHidingFailed(t *testing.T) {
	if !inChild(t) {
		return
	}
	f := newFixture(t)
	a := f.write("a.jsonl", rec("keep", 1)+rec("gone", 2))
	hidden := bigHidden(t, f.st) // ~72 KB: cannot be rewritten under the limit
	setFileLimit(t, 16<<10)
	res := Delete(f.st, f.scope(), []string{"gone"}, Options{})
	restoreLimit()
	if res.Outcome != RemovedNotHidden || res.Tombstones != 0 || res.Copies != 1 || !errors.Is(res.Err, syscall.EFBIG) {
		t.Fatalf("result %+v", res)
	}
	if read(t, a) != rec("keep", 1) {
		t.Errorf("not cleaned")
	}
	if read(t, f.st.Hidden()) != hidden {
		t.Errorf("hidden.json changed")
	}
	noTemps(t, f.st.Root)
}

func TestBothFailed(t *testing.T) {
	if !inChild(t) {
		return
	}
	f := newFixture(t)
	f.write("a.jsonl", rec("keep", 1)+rec("gone", 2))
	os.Mkdir(filepath.Join(f.dir, "x.jsonl"), 0o700)
	bigHidden(t, f.st)
	setFileLimit(t, 16<<10)
	res := Delete(f.st, f.scope(), []string{"gone"}, Options{})
	restoreLimit()
	if res.Outcome != Both || res.Tombstones != 0 || len(res.Failed) != 1 || res.Copies != 1 {
		t.Fatalf("result %+v", res)
	}
	noTemps(t, f.st.Root)
}

func TestNothingRemoved(t *testing.T) {
	t.Run("lock", func(t *testing.T) {
		f := newFixture(t)
		a := f.write("a.jsonl", rec("gone", 1))
		before := snap(t, a)
		os.Mkdir(f.st.Lock(), 0o700) // a folder where the lock file goes
		res := Delete(f.st, f.scope(), []string{"gone"}, Options{})
		if res.Outcome != NothingRemoved || res.Err == nil || res.Tombstones != 0 {
			t.Fatalf("result %+v", res)
		}
		if snap(t, a) != before {
			t.Errorf("changed")
		}
		if _, err := os.Stat(f.st.Hidden()); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("hidden.json written")
		}
	})
	t.Run("listing", func(t *testing.T) {
		root := filepath.Join(t.TempDir(), "store")
		st := store.Store{Root: root}
		os.MkdirAll(root, 0o700)
		g := filepath.Join(root, store.GlobalName)
		os.WriteFile(g, []byte(rec("gone", 1)), 0o600)
		os.WriteFile(st.Projects(), nil, 0o600) // a file where the projects folder goes
		res := Delete(st, store.Scope{All: true}, []string{"gone"}, Options{})
		if res.Outcome != NothingRemoved || res.Tombstones != 0 {
			t.Fatalf("result %+v", res)
		}
		if read(t, g) != rec("gone", 1) {
			t.Errorf("changed")
		}
		if _, err := os.Stat(st.Lock()); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("lock file created")
		}
		if _, err := os.Stat(st.Hidden()); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("hidden.json written")
		}
		if res.Outcome.Notice() != "Store delete failed; nothing was removed." {
			t.Errorf("notice %q", res.Outcome.Notice())
		}
	})
}

func TestUntrustedChangesNothing(t *testing.T) {
	for name, content := range map[string]string{"corrupt": "[\"sha256:", "object": `{"a":1}`, "numbers": "[1,2]"} {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t)
			a := f.write("a.jsonl", rec("gone", 1))
			before := snap(t, a)
			os.WriteFile(f.st.Hidden(), []byte(content), 0o600)
			res := Delete(f.st, f.scope(), []string{"gone"}, Options{})
			var u *tombstone.UntrustedError
			if res.Outcome != Untrusted || !errors.As(res.Err, &u) {
				t.Fatalf("result %+v", res)
			}
			if snap(t, a) != before || read(t, f.st.Hidden()) != content {
				t.Errorf("changed")
			}
			if _, err := os.Stat(f.st.Lock()); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("lock file created")
			}
		})
	}
}

func TestDryRunChangesNothing(t *testing.T) {
	f := newFixture(t)
	a := f.write("a.jsonl", rec("gone", 1)+rec("keep", 2))
	b := f.write("b.jsonl", rec("GONE", 3))
	before := []snapshot{snap(t, a), snap(t, b)}
	res := Delete(f.st, f.scope(), []string{"gone"}, Options{DryRun: true})
	if res.Outcome != Clean || res.Copies != 2 || len(res.Rewritten) != 2 || res.Tombstones != 1 || !res.DryRun {
		t.Fatalf("result %+v", res)
	}
	for i, p := range []string{a, b} {
		if snap(t, p) != before[i] {
			t.Errorf("%s changed", p)
		}
	}
	for _, p := range []string{f.st.Hidden(), f.st.Lock()} {
		if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s created", p)
		}
	}
}

func TestTombstonesMoveToEndCapAndKeepLegacy(t *testing.T) {
	f := newFixture(t)
	entries := []string{"a legacy plain entry"}
	for i := range 999 {
		entries = append(entries, identity.Key(fmt.Sprint("old ", i)))
	}
	b, _ := json.Marshal(entries)
	os.WriteFile(f.st.Hidden(), b, 0o600)
	// Deleting an existing one moves it to the end; the count stays 1000.
	res := Delete(f.st, f.scope(), []string{"OLD 0"}, Options{Hide: true})
	if res.Outcome != Clean || res.Tombstones != 0 || res.AlreadyHidden != 1 || res.Dropped != 0 {
		t.Fatalf("%+v", res)
	}
	e := hiddenEntries(t, f.st)
	if len(e) != 1000 || e[0] != "a legacy plain entry" || e[999] != identity.Key("old 0") || e[1] != identity.Key("old 1") {
		t.Errorf("after move-to-end: %d entries, first %q, last %q", len(e), e[0], e[999])
	}
	// A new one drops the oldest (the legacy entry, here).
	res = Delete(f.st, f.scope(), []string{"new one", "new one ", "  "}, Options{Hide: true})
	if res.Tombstones != 1 || res.Dropped != 1 || res.DroppedOwn != 0 {
		t.Errorf("%+v", res)
	}
	e = hiddenEntries(t, f.st)
	if len(e) != 1000 || e[0] != identity.Key("old 1") || e[999] != identity.Key("new one") {
		t.Errorf("after the cap: %d entries, first %q, last %q", len(e), e[0], e[999])
	}
	raw := read(t, f.st.Hidden())
	if strings.Contains(raw, "new one") {
		t.Errorf("hidden.json holds a deleted prompt's text")
	}
}

func TestLegacyEntriesKept(t *testing.T) {
	f := newFixture(t)
	legacy := []string{"short legacy", strings.Repeat("p", 120)}
	b, _ := json.Marshal(legacy)
	os.WriteFile(f.st.Hidden(), b, 0o600)
	Delete(f.st, f.scope(), []string{"short legacy"}, Options{Hide: true})
	e := hiddenEntries(t, f.st)
	if len(e) != 3 || e[0] != legacy[0] || e[1] != legacy[1] || e[2] != identity.Key("short legacy") {
		t.Errorf("entries %q", e)
	}
}

func TestGlobalScopeAndCarryFiles(t *testing.T) {
	f := newFixture(t)
	p := f.write("a.jsonl", rec("gone", 1))
	c := f.write("a.jsonl.carry-1-ab.jsonl", rec("gone", 2)+rec("kept", 3))
	g := filepath.Join(f.st.Root, store.GlobalName)
	gc := filepath.Join(f.st.Root, "history-global.jsonl.carry-5-cd.jsonl")
	os.WriteFile(g, []byte(rec("gone", 4)), 0o600)
	os.WriteFile(gc, []byte(rec("Gone", 5)), 0o600)
	other := filepath.Join(f.st.ProjectDir("fedcba9876543210"), "b.jsonl")
	store.EnsureDir(filepath.Dir(other))
	os.WriteFile(other, []byte(rec("gone", 6)), 0o600)

	// Project scope: this project's files only.
	res := Delete(f.st, f.scope(), []string{"gone"}, Options{})
	if res.Copies != 2 || len(res.Rewritten) != 2 || read(t, c) != rec("kept", 3) || read(t, p) != "" {
		t.Fatalf("project scope: %+v", res)
	}
	if read(t, g) != rec("gone", 4) || read(t, other) != rec("gone", 6) {
		t.Errorf("project scope touched other files")
	}
	// Global scope: every project and history-global.jsonl with its carry files.
	res = Delete(f.st, store.Scope{All: true}, []string{"gone"}, Options{})
	if res.Copies != 3 || len(res.Rewritten) != 3 {
		t.Fatalf("global scope: %+v", res)
	}
	for _, q := range []string{g, gc, other} {
		if read(t, q) != "" {
			t.Errorf("%s still holds %q", q, read(t, q))
		}
	}
}

func TestStaleTempFilesAreSwept(t *testing.T) {
	f := newFixture(t)
	f.write("a.jsonl", rec("gone", 1))
	stale := filepath.Join(f.dir, ".a.jsonl.tmp-999999999-abcd") // no such pid
	live := filepath.Join(f.dir, fmt.Sprintf(".a.jsonl.tmp-%d-abcd", os.Getppid()))
	os.WriteFile(stale, []byte(rec("gone", 1)), 0o600)
	os.WriteFile(live, []byte(rec("gone", 1)), 0o600)
	Delete(f.st, f.scope(), []string{"gone"}, Options{})
	if _, err := os.Stat(stale); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("stale temp file kept")
	}
	if _, err := os.Stat(live); err != nil {
		t.Errorf("a live process's temp file was removed")
	}
}

func TestNotices(t *testing.T) {
	want := map[Outcome]string{
		Clean:            "",
		NothingRemoved:   "Store delete failed; nothing was removed.",
		PartlyHidden:     "Some history files could not be rewritten; the prompt is hidden, but copies may remain on disk.",
		RemovedNotHidden: "Deleted from the store, but hiding failed — the prompt may reappear from session transcripts.",
		Both:             "Some history files could not be rewritten and hiding failed — the prompt may reappear from those files or from session transcripts.",
	}
	for o, s := range want {
		if o.Notice() != s {
			t.Errorf("%v: %q", o, o.Notice())
		}
	}
}

// A prompt with no copy in the scope is reported and not tombstoned;
// with Hide it is.
func TestNoCopyTombstonedOnlyWithHide(t *testing.T) {
	f := newFixture(t)
	a := f.write("a.jsonl", rec("other", 1))
	before := snap(t, a)
	res := Delete(f.st, f.scope(), []string{"never captured"}, Options{})
	if res.Outcome != Clean || res.Copies != 0 || res.Tombstones != 0 || len(res.NotFound) != 1 || res.NotFound[0] != "never captured" {
		t.Fatalf("result %+v", res)
	}
	if _, err := os.Stat(f.st.Hidden()); err == nil {
		t.Fatalf("hidden.json written")
	}
	res = Delete(f.st, f.scope(), []string{"never captured"}, Options{Hide: true})
	if res.Outcome != Clean || res.Copies != 0 || res.Tombstones != 1 || len(res.Rewritten) != 0 {
		t.Fatalf("result %+v", res)
	}
	if snap(t, a) != before {
		t.Errorf("changed")
	}
	if !bytes.Contains([]byte(read(t, f.st.Hidden())), []byte(identity.Key("never captured"))) {
		t.Errorf("no tombstone")
	}
}

// A store file that is a symbolic link is not replaced: renaming over the
// link would leave the copy in its target. The delete says so.
func TestSymlinkIsNotRewritten(t *testing.T) {
	f := newFixture(t)
	target := filepath.Join(t.TempDir(), "elsewhere.jsonl")
	os.WriteFile(target, []byte(rec("gone", 1)+rec("keep", 2)), 0o600)
	link := filepath.Join(f.dir, "l.jsonl")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	f.write("a.jsonl", rec("gone", 3))
	dry := Delete(f.st, f.scope(), []string{"gone"}, Options{DryRun: true})
	if dry.Outcome != PartlyHidden || len(dry.Failed) != 1 {
		t.Fatalf("dry run %+v", dry)
	}
	res := Delete(f.st, f.scope(), []string{"gone"}, Options{})
	if res.Outcome != PartlyHidden || len(res.Failed) != 1 || res.Copies != 1 || !strings.Contains(res.Failed[0].Error(), "symbolic link") {
		t.Fatalf("%+v", res)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link was replaced")
	}
	if read(t, target) != rec("gone", 1)+rec("keep", 2) {
		t.Errorf("the target changed")
	}
	noTemps(t, f.st.Root)
}

func srec(text string, ts int64, session string) string {
	return string(record.Marshal(record.Record{Text: text, TS: ts, Src: "claude", Session: session}))
}

// A project's delete also removes the copies in history-global.jsonl whose
// session the project's records name (the legacy migration copied them
// there), and counts the copies it leaves in other projects and in the
// global file.
func TestProjectDeleteRemovesItsGlobalCopies(t *testing.T) {
	f := newFixture(t)
	p := f.write("seed-1.jsonl", srec("deploy it", 1, "s-mine")+srec("other", 2, "s-mine"))
	g := filepath.Join(f.st.Root, store.GlobalName)
	os.WriteFile(g, []byte(srec("deploy it", 1, "s-mine")+srec("Deploy  it", 3, "s-theirs")+rec("deploy it", 4)+srec("kept", 5, "s-mine")), 0o600)
	other := filepath.Join(f.st.ProjectDir("fedcba9876543210"), "b.jsonl")
	store.EnsureDir(filepath.Dir(other))
	os.WriteFile(other, []byte(rec("deploy it", 6)+rec("DEPLOY IT", 7)), 0o600)

	res := Delete(f.st, f.scope(), []string{"deploy it"}, Options{})
	if res.Outcome != Clean || res.Copies != 2 || len(res.Rewritten) != 2 || res.Tombstones != 1 {
		t.Fatalf("%+v", res)
	}
	if read(t, p) != srec("other", 2, "s-mine") {
		t.Errorf("project file holds %q", read(t, p))
	}
	if want := srec("Deploy  it", 3, "s-theirs") + rec("deploy it", 4) + srec("kept", 5, "s-mine"); read(t, g) != want {
		t.Errorf("global holds %q", read(t, g))
	}
	if e := res.Elsewhere; e.ProjectCopies != 2 || e.Projects != 1 || e.Global != 2 {
		t.Errorf("elsewhere %+v", e)
	}
	if got, want := res.Elsewhere.String(), "4 copies remain in 1 other project and in history-global.jsonl: hist-delete --all removes them"; got != want {
		t.Errorf("note %q", got)
	}
	// Nothing left outside: no note.
	if s := (Elsewhere{}).String(); s != "" {
		t.Errorf("empty note %q", s)
	}
}

// Prompts read from a pipe must be prompts the store holds: one that is
// not (a record cut at a NUL, say) refuses the whole delete before
// anything changes, unless Hide asks for its tombstone.
func TestStoredRefusesUnknownPrompt(t *testing.T) {
	f := newFixture(t)
	a := f.write("a.jsonl", rec("deploy", 1))
	other := filepath.Join(f.st.ProjectDir("fedcba9876543210"), "b.jsonl")
	store.EnsureDir(filepath.Dir(other))
	os.WriteFile(other, []byte(rec("elsewhere", 2)), 0o600)
	before := snap(t, a)
	res := Delete(f.st, f.scope(), []string{"deploy", " the staging branch"}, Options{Stored: true})
	if res.Outcome != NotStored || len(res.NotStored) != 1 || res.NotStored[0] != " the staging branch" || res.Copies != 0 {
		t.Fatalf("%+v", res)
	}
	if snap(t, a) != before {
		t.Errorf("changed")
	}
	if _, err := os.Stat(f.st.Hidden()); err == nil {
		t.Errorf("hidden.json written")
	}
	// A prompt stored in another project is one the store holds.
	res = Delete(f.st, f.scope(), []string{"deploy", "elsewhere"}, Options{Stored: true})
	if res.Outcome != Clean || res.Copies != 1 || len(res.NotFound) != 1 || res.Tombstones != 1 || res.Elsewhere.ProjectCopies != 1 {
		t.Fatalf("%+v", res)
	}
}

// Deleting an already tombstoned prompt writes no new tombstone and says so.
func TestAlreadyTombstonedCounted(t *testing.T) {
	f := newFixture(t)
	f.write("a.jsonl", rec("gone", 1))
	if res := Delete(f.st, f.scope(), []string{"gone"}, Options{}); res.Tombstones != 1 || res.AlreadyHidden != 0 {
		t.Fatalf("%+v", res)
	}
	f.write("b.jsonl", rec("gone", 2))
	before := read(t, f.st.Hidden())
	res := Delete(f.st, f.scope(), []string{"gone"}, Options{})
	if res.Tombstones != 0 || res.AlreadyHidden != 1 || res.Copies != 1 {
		t.Fatalf("%+v", res)
	}
	if read(t, f.st.Hidden()) != before {
		t.Errorf("hidden.json changed")
	}
}

// A prompt holding a NUL also deletes the form new records keep (U+FFFD),
// and a stored prompt holding a NUL (older builds) is deleted by its text.
func TestNULForms(t *testing.T) {
	f := newFixture(t)
	a := f.write("a.jsonl", rec("deploy\x00 the staging branch", 1)+`{"v":1,"text":"deploy\u0000 the staging branch","ts":2}`+"\n"+rec("deploy", 3))
	res := Delete(f.st, f.scope(), []string{"deploy\x00 the staging branch"}, Options{})
	if res.Outcome != Clean || res.Copies != 2 {
		t.Fatalf("%+v", res)
	}
	if read(t, a) != rec("deploy", 3) {
		t.Errorf("file holds %q", read(t, a))
	}
}

// A batch larger than hidden.json's cap says how many of its own
// tombstones did not fit; those of prompts with copies left elsewhere are
// kept past the cap.
func TestCapKeepsPromptsWithCopiesLeft(t *testing.T) {
	f := newFixture(t)
	var b strings.Builder
	var prompts []string
	for i := range tombstone.Cap + 5 {
		p := fmt.Sprint("prompt ", i)
		prompts = append(prompts, p)
		b.WriteString(rec(p, int64(i)))
	}
	f.write("a.jsonl", b.String())
	other := filepath.Join(f.st.ProjectDir("fedcba9876543210"), "b.jsonl")
	store.EnsureDir(filepath.Dir(other))
	os.WriteFile(other, []byte(rec("prompt 0", 1)), 0o600)
	res := Delete(f.st, f.scope(), prompts, Options{})
	if res.Outcome != Clean || res.Tombstones != tombstone.Cap+5 || res.DroppedOwn != 4 || res.Dropped != 0 {
		t.Fatalf("%+v", res)
	}
	h, err := tombstone.Load(f.st.Hidden())
	if err != nil {
		t.Fatal(err)
	}
	if !h.Hidden("prompt 0") {
		t.Errorf("the tombstone of a prompt with a copy left elsewhere was dropped")
	}
}

// A copy is found however its line spells the prompt: \u escapes, letters
// whose case fold is ASCII, other cases and spacing; a prompt that only
// shares a start is not a copy.
func TestIdentityVariantsFound(t *testing.T) {
	const pw = "please rotate the staging database password before the demo"
	const sky = "kiss the sky 42"
	filler := rec("filler without the words", 1)
	cases := []struct {
		name, prompt, line string
	}{
		{"u-escapes", pw, `{"v":1,"text":"please rotate the st\u0061ging d\u0061tabase p\u0061ssword before the demo","ts":2}` + "\n"},
		{"kelvin", sky, rec("\u212aiss the s\u212ay 42", 2)},
		{"long-s", sky, rec("ki\u017f\u017f the \u017fky 42", 2)},
		{"dotted-I", sky, rec("k\u0130ss the sky 42", 2)},
		{"dotless-i", sky, rec("k\u0131ss THE SKY 42", 2)},
		{"upper", sky, rec("KISS\tTHE\n SKY   42", 2)},
		{"long-word", "run " + strings.Repeat("ab", 100), rec("Run "+strings.Repeat("AB", 100), 2) + rec("run "+strings.Repeat("ab", 99)+"ac", 3)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			f.write("a.jsonl", strings.Repeat(filler, 10)+tc.line+strings.Repeat(filler, 10))
			f.write("b.jsonl", strings.Repeat(filler, 10))
			res := Delete(f.st, f.scope(), []string{tc.prompt}, Options{DryRun: true})
			if res.Copies != 1 || len(res.Rewritten) != 1 {
				t.Fatalf("%+v", res)
			}
		})
	}
}

// Past the cap, a tombstone that hides a prompt still on disk (here in
// another project's file, and in another machine's) is kept rather than
// let the prompt show again, even when that leaves more than Cap.
func TestCapKeepsTombstonesOfStoredPrompts(t *testing.T) {
	f := newFixture(t)
	f.st.Machine = "a"
	var b, c strings.Builder
	var entries []string
	for i := range tombstone.Cap {
		p := fmt.Sprint("old ", i)
		entries = append(entries, identity.Key(p))
		if i%2 == 0 {
			b.WriteString(rec(p, int64(i)))
		} else {
			c.WriteString(rec(p, int64(i)))
		}
	}
	data, _ := json.Marshal(entries)
	os.WriteFile(f.st.Hidden(), data, 0o600)
	other := filepath.Join(f.st.ProjectDir("fedcba9876543210"), "b@a.jsonl")
	store.EnsureDir(filepath.Dir(other))
	os.WriteFile(other, []byte(b.String()), 0o600)
	f.write("c@b.jsonl", c.String())
	f.write("d@a.jsonl", rec("new", 1))
	res := Delete(f.st, f.scope(), []string{"new"}, Options{})
	if res.Outcome != Clean || res.Tombstones != 1 || res.Dropped != 0 {
		t.Fatalf("%+v", res)
	}
	if e := hiddenEntries(t, f.st); len(e) != tombstone.Cap+1 || e[0] != identity.Key("old 0") {
		t.Errorf("%d entries, first %q", len(e), e[0])
	}
}
