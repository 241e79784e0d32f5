package ledger

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestKeyOf(t *testing.T) {
	a := KeyOf("claude", "uuid-1", "s1", 1, "text")
	if a != KeyOf("claude", "uuid-1", "s2", 2, "other") {
		t.Error("a reader's id alone does not make the key")
	}
	for _, k := range []Key{
		KeyOf("codex", "uuid-1", "s1", 1, "text"),
		KeyOf("claude", "uuid-2", "s1", 1, "text"),
		KeyOf("claude", "", "s1", 1, "text"),
	} {
		if k == a {
			t.Errorf("%x: two events share a key", k)
		}
	}
	// Without an id: session, time and text, each delimited.
	if KeyOf("pi", "", "s", 1, "ab") == KeyOf("pi", "", "s", 1, "a") || KeyOf("pi", "", "sa", 1, "b") == KeyOf("pi", "", "s", 1, "ab") {
		t.Error("fields run into each other")
	}
}

func TestLedgerAppendLoad(t *testing.T) {
	path := filepath.Join(t.TempDir(), "imports.ledger")
	l, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	k1, k2, k3 := KeyOf("pi", "1", "", 0, ""), KeyOf("pi", "2", "", 0, ""), KeyOf("pi", "3", "", 0, "")
	if l.Has(k1) {
		t.Fatal("an empty ledger has a key")
	}
	if err := l.Append([]Key{k1, k2}); err != nil {
		t.Fatal(err)
	}
	if !l.Has(k1) || !l.Has(k2) || l.Has(k3) {
		t.Fatal("Has after Append")
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", fi.Mode().Perm())
	}
	// Another run appends: Refresh sees it.
	other, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if !other.Has(k1) || !other.Has(k2) {
		t.Fatal("Load does not see the keys appended")
	}
	if err := other.Append([]Key{k3}); err != nil {
		t.Fatal(err)
	}
	if grew, err := l.Refresh(); err != nil || !grew || !l.Has(k3) {
		t.Fatalf("Refresh: grew %v, %v, has k3 %v", grew, err, l.Has(k3))
	}
	if grew, err := l.Refresh(); err != nil || grew {
		t.Fatalf("a second Refresh: grew %v, %v", grew, err)
	}
}

// TestLedgerTornTail: a run killed during its append leaves part of a
// key; it is ignored, and the next append cuts it off so that keys stay
// aligned.
func TestLedgerTornTail(t *testing.T) {
	path := filepath.Join(t.TempDir(), "imports.ledger")
	k1, k2 := KeyOf("pi", "1", "", 0, ""), KeyOf("pi", "2", "", 0, "")
	l, _ := Load(path)
	if err := l.Append([]Key{k1}); err != nil {
		t.Fatal(err)
	}
	f, _ := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	f.Write(k2[:7])
	f.Close()
	l, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if !l.Has(k1) || l.Has(k2) || l.Len() != 1 {
		t.Fatalf("after a torn append: has k1 %v, k2 %v, len %d", l.Has(k1), l.Has(k2), l.Len())
	}
	if err := l.Append([]Key{k2}); err != nil {
		t.Fatal(err)
	}
	l, _ = Load(path)
	if !l.Has(k1) || !l.Has(k2) || l.Len() != 2 {
		t.Fatalf("after the next append: has k1 %v, k2 %v, len %d", l.Has(k1), l.Has(k2), l.Len())
	}
}

func TestLedgerNotALedger(t *testing.T) {
	path := filepath.Join(t.TempDir(), "imports.ledger")
	os.WriteFile(path, []byte("something else entirely\n"), 0o600)
	if _, err := Load(path); err == nil || !strings.Contains(err.Error(), "is not an import ledger") {
		t.Fatalf("Load: %v", err)
	}
	l := &Ledger{Path: path, added: map[Key]struct{}{}}
	before, _ := os.ReadFile(path)
	os.WriteFile(path, before[:5], 0o600)
	if err := l.Append([]Key{{1}}); err == nil {
		t.Fatal("Append to a file that is not a ledger")
	}
	if after, _ := os.ReadFile(path); string(after) != string(before[:5]) {
		t.Fatal("Append changed a file that is not a ledger")
	}
}

func TestStateRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "imports.state")
	s := LoadState(path, "build 1")
	files := map[string]Stamp{
		"/a b/c\n\"d\".jsonl": {Dev: 1, Ino: 2, Size: 3, Mtime: time.Now().UnixNano()},
		"/x.db-wal":           {Dev: 1, Ino: 9, Size: 0, Mtime: -5},
	}
	s.SetFiles(`pi "/root with space"`, files)
	s.SetCutoff("abc", "pi", 1767225602000)
	s.SetCutoff("def", "claude", 0)
	if err := s.Save(); err != nil {
		t.Fatal(err)
	}
	got := LoadState(path, "build 1")
	for p, st := range files {
		if !got.Unchanged(`pi "/root with space"`, p, st) {
			t.Errorf("%q: stamp not kept", p)
		}
	}
	if ms, ok := got.Cutoff("abc", "pi"); !ok || ms != 1767225602000 {
		t.Errorf("cutoff %d %v", ms, ok)
	}
	if ms, ok := got.Cutoff("def", "claude"); !ok || ms != 0 {
		t.Errorf("cutoff %d %v", ms, ok)
	}
	// Another build reads everything again, but keeps the cutoffs.
	other := LoadState(path, "build 2")
	if len(other.Files) != 0 {
		t.Error("another build's stamps were kept")
	}
	if _, ok := other.Cutoff("abc", "pi"); !ok {
		t.Error("another build lost the cutoffs")
	}
	// Saving the same stamps again does not rewrite the file.
	fi1, _ := os.Stat(path)
	got.SetFiles(`pi "/root with space"`, files)
	time.Sleep(10 * time.Millisecond)
	if err := got.Save(); err != nil {
		t.Fatal(err)
	}
	if fi2, _ := os.Stat(path); !fi2.ModTime().Equal(fi1.ModTime()) {
		t.Error("an unchanged state was written again")
	}
}
