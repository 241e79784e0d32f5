package audit

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"hist/lib/lock"
	"hist/lib/store"
)

func write(t *testing.T, path, data string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
}

func newStore(t *testing.T) (store.Store, string) {
	root := filepath.Join(t.TempDir(), "history")
	if err := os.MkdirAll(filepath.Join(root, "projects", "h1"), 0o700); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{root, filepath.Join(root, "projects"), filepath.Join(root, "projects", "h1")} {
		os.Chmod(d, 0o700)
	}
	return store.Store{Root: root}, filepath.Join(root, "projects", "h1")
}

// A claim while a rewriter holds the lock, and a temp file of a process
// that runs (this one), are in-flight work, not problems.
func TestInFlightIsNotAProblem(t *testing.T) {
	st, dir := newStore(t)
	write(t, filepath.Join(dir, "a.jsonl"), `{"v":1,"text":"one","ts":1}`+"\n", 0o600)
	write(t, filepath.Join(dir, "b.jsonl.gc-1700000000000-abcd.jsonl"), `{"v":1,"text":"two","ts":2}`+"\n", 0o600)
	write(t, filepath.Join(dir, ".a.jsonl.tmp-"+strconv.Itoa(os.Getpid())+"-abcd"), "x", 0o600)
	l, err := lock.Acquire(st.Lock(), 0)
	if err != nil {
		t.Fatal(err)
	}
	r := Check(st, "", false)
	l.Release()
	if p := r.Problems(); len(p) != 0 {
		t.Fatalf("problems %q", p)
	}
	if !r.RewriterNow || len(r.Claims) != 1 || r.Claims[0].Gone || len(r.Temps) != 1 || r.Temps[0].Gone {
		t.Fatalf("report %+v", r)
	}
	if r.Files != 2 || r.Entries != 2 || len(r.Projects) != 1 || r.Projects[0].Entries != 2 {
		t.Fatalf("counts %+v", r)
	}

	// Without the lock the claim is a leftover.
	r = Check(st, "", false)
	if p := r.Problems(); len(p) != 1 || !strings.Contains(p[0], "leftover claim") {
		t.Fatalf("problems %q", p)
	}
}

// Check never writes: not the lock file, not a missing store.
func TestCheckWritesNothing(t *testing.T) {
	st := store.Store{Root: filepath.Join(t.TempDir(), "none")}
	r := Check(st, "", false)
	if !r.Missing || len(r.Problems()) != 0 {
		t.Fatalf("report %+v", r)
	}
	if _, err := os.Lstat(st.Root); !os.IsNotExist(err) {
		t.Fatalf("store created: %v", err)
	}
	st, _ = newStore(t)
	Check(st, "", false)
	if _, err := os.Lstat(st.Lock()); !os.IsNotExist(err) {
		t.Fatalf("lock file created: %v", err)
	}
}

// Redaction: the count is reported; a problem only with redaction on.
func TestUnredacted(t *testing.T) {
	st, dir := newStore(t)
	tok := "ghp_" + strings.Repeat("a1B2", 9)
	write(t, filepath.Join(dir, "a.jsonl"), `{"v":1,"text":"use `+tok+`","ts":1}`+"\n"+`{"v":1,"text":"plain","ts":2}`+"\n", 0o600)
	write(t, filepath.Join(st.Root, "history-global.jsonl"), `{"v":1,"text":"g `+tok+`","ts":3}`+"\nnot json\n", 0o600)
	r := Check(st, "", false)
	if r.Unredacted != 2 || r.Global != 1 || r.Malformed != 1 || len(r.Problems()) != 1 {
		t.Fatalf("report %+v problems %q", r, r.Problems())
	}
	r = Check(st, "off", true)
	if r.RedactOn || r.Unredacted != 2 || len(r.Problems()) != 0 {
		t.Fatalf("off: report %+v problems %q", r, r.Problems())
	}
}
