package seed

import (
	"os"
	"path/filepath"
	"testing"

	"hist/lib/ledger"
)

// The keeper passes over an unchanged file and keeps one that changed in
// any way (grown, shrunk, another inode); a database is kept when its
// write-ahead log changed, appeared or went.
func TestKeeper(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.jsonl")
	db := filepath.Join(dir, "opencode.db")
	os.WriteFile(path, []byte("0123456789\n"), 0o600)
	os.WriteFile(db, []byte("db"), 0o600)
	r := &Runner{st: ledger.LoadState(filepath.Join(dir, "imports.state"), "b")}
	src := Source{Name: "pi", Root: dir}
	// run lists both files once, says which are kept, and records them.
	run := func() (bool, bool) {
		t.Helper()
		var n int
		keep, l := r.keeper(src, &n)
		var kept [2]bool
		for i, p := range []string{path, db} {
			fi, err := os.Stat(p)
			if err != nil {
				t.Fatal(err)
			}
			kept[i] = keep(p, fi)
		}
		r.st.SetFiles(l)
		return kept[0], kept[1]
	}
	step := func(what string, want0, want1 bool) {
		t.Helper()
		if a, b := run(); a != want0 || b != want1 {
			t.Errorf("%s: kept %v %v, want %v %v", what, a, b, want0, want1)
		}
	}
	step("first run", true, true)
	step("unchanged", false, false)
	f, _ := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	f.WriteString("more\n")
	f.Close()
	step("grown", true, false)
	os.WriteFile(path, []byte("short\n"), 0o600)
	step("shrunk", true, false)
	other := filepath.Join(dir, "other")
	os.WriteFile(other, []byte("short\n"), 0o600)
	os.Rename(other, path)
	step("new inode", true, false)
	os.WriteFile(db+"-wal", []byte("wal"), 0o600)
	step("a write-ahead log", false, true)
	step("unchanged log", false, false)
	os.Remove(db + "-wal")
	step("log gone", false, true)
}
