package seed

import (
	"os"
	"path/filepath"
	"testing"

	"hist/lib/ledger"
	"hist/lib/transcript"
)

// The keeper passes over an unchanged file, resumes one that only grew,
// and reads whole one that shrank or is another file (a new inode).
func TestKeeperCursors(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.jsonl")
	os.WriteFile(path, []byte("0123456789\n"), 0o600)
	r := &Runner{st: ledger.LoadState(filepath.Join(dir, "imports.state"), "b")}
	src := Source{Name: "pi", Root: dir}
	// run lists path once, says whether it is kept and from where, and
	// records a read to its end.
	run := func() (bool, transcript.Cursor) {
		t.Helper()
		var n int
		k := r.keeper(src, &n)
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		kept := k.Keep(path, fi)
		var res transcript.Resumer = k
		from := res.From(path)
		if kept {
			res.Reached(path, transcript.Cursor{Offset: fi.Size(), Head: 7})
		}
		r.st.SetFiles(k.listing())
		return kept, from
	}
	if kept, from := run(); !kept || from.Offset != 0 {
		t.Fatalf("first run: %v %+v", kept, from)
	}
	if kept, _ := run(); kept {
		t.Fatal("unchanged file kept")
	}
	f, _ := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	f.WriteString("more\n")
	f.Close()
	if kept, from := run(); !kept || from.Offset != 11 || from.Head != 7 {
		t.Fatalf("grown: %v %+v", kept, from)
	}
	os.WriteFile(path, []byte("short\n"), 0o600)
	if kept, from := run(); !kept || from.Offset != 0 {
		t.Fatalf("shrunk: %v %+v", kept, from)
	}
	other := filepath.Join(dir, "other")
	os.WriteFile(other, []byte("short\nand much longer\n"), 0o600)
	os.Rename(other, path)
	if kept, from := run(); !kept || from.Offset != 0 {
		t.Fatalf("new inode: %v %+v", kept, from)
	}
}
