package ledger

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
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

// Keys this run appends after another run appended some it has not read
// are found; Refresh reads the other run's.
func TestLedgerAppendAfterOther(t *testing.T) {
	path := filepath.Join(t.TempDir(), "imports.ledger")
	k := func(i int) Key { return KeyOf("pi", strconv.Itoa(i), "", 0, "") }
	l, _ := Load(path)
	if err := l.Append([]Key{k(0)}, nil, []Key{k(1), k(2)}); err != nil {
		t.Fatal(err)
	}
	other, _ := Load(path)
	if err := other.Append([]Key{k(4)}); err != nil {
		t.Fatal(err)
	}
	if err := l.Append([]Key{k(5)}); err != nil {
		t.Fatal(err)
	}
	if !l.Has(k(5)) || !l.Has(k(2)) {
		t.Error("a key appended is not found")
	}
	if grew, err := l.Refresh(); err != nil || !grew || !l.Has(k(4)) {
		t.Errorf("Refresh: grew %v, %v, has the other run's key %v", grew, err, l.Has(k(4)))
	}
	if l, _ := Load(path); keysIn(l) != 5 {
		t.Errorf("the file holds %d keys, want 5", keysIn(l))
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
	if !l.Has(k1) || l.Has(k2) || keysIn(l) != 1 {
		t.Fatalf("after a torn append: has k1 %v, k2 %v, keys %d", l.Has(k1), l.Has(k2), keysIn(l))
	}
	if err := l.Append([]Key{k2}); err != nil {
		t.Fatal(err)
	}
	l, _ = Load(path)
	if !l.Has(k1) || !l.Has(k2) || keysIn(l) != 2 {
		t.Fatalf("after the next append: has k1 %v, k2 %v, keys %d", l.Has(k1), l.Has(k2), keysIn(l))
	}
}

// keysIn is how many whole keys the file held when l was loaded.
func keysIn(l *Ledger) int { return int(l.size-int64(len(header))) / len(Key{}) }

func TestLedgerNotALedger(t *testing.T) {
	path := filepath.Join(t.TempDir(), "imports.ledger")
	os.WriteFile(path, []byte("something else entirely\n"), 0o600)
	if _, err := Load(path); err == nil || !strings.Contains(err.Error(), "is not an import ledger") {
		t.Fatalf("Load: %v", err)
	}
	l := &Ledger{Path: path, keys: map[Key]struct{}{}}
	before, _ := os.ReadFile(path)
	os.WriteFile(path, before[:5], 0o600)
	if err := l.Append([]Key{{1}}); err == nil {
		t.Fatal("Append to a file that is not a ledger")
	}
	if after, _ := os.ReadFile(path); string(after) != string(before[:5]) {
		t.Fatal("Append changed a file that is not a ledger")
	}
}

// list lists files in a new listing of src and records them.
func list(s *State, src string, files map[string]Stamp) {
	l := s.Listing(src)
	for p, st := range files {
		l.List(p, st)
	}
	s.SetFiles(l)
}

// The stamps and cutoffs written are read back; another build's stamps
// are dropped, its cutoffs kept; an unchanged state is not written again.
func TestStateRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "imports.state")
	s := LoadState(path, "build 1")
	files := map[string]Stamp{
		"/a b/c.jsonl":    {Dev: 1, Ino: 2, Size: 3, Mtime: 4},
		"/x/\"quoted\"\n": {Dev: 5, Ino: 6, Size: 7, Mtime: -8},
	}
	list(s, `pi "/root with space"`, files)
	s.SetCutoff("abc", "pi", 1767225602000)
	s.SetCutoff("def", "claude", 0)
	if err := s.Save(); err != nil {
		t.Fatal(err)
	}
	got := LoadState(path, "build 1")
	l := got.Listing(`pi "/root with space"`)
	for p, st := range files {
		if !l.List(p, st) {
			t.Errorf("%q: stamp not kept", p)
		}
	}
	if ms, ok := got.Cutoff("abc", "pi"); !ok || ms != 1767225602000 {
		t.Errorf("cutoff %d %v", ms, ok)
	}
	if ms, ok := got.Cutoff("def", "claude"); !ok || ms != 0 {
		t.Errorf("cutoff %d %v", ms, ok)
	}
	other := LoadState(path, "build 2")
	if len(other.Files) != 0 {
		t.Error("another build's stamps were kept")
	}
	if _, ok := other.Cutoff("abc", "pi"); !ok {
		t.Error("another build lost the cutoffs")
	}
	// Listing the same stamps again leaves nothing to write: the file is
	// not replaced (its inode stays).
	got.SetFiles(l)
	before, _ := os.Stat(path)
	if err := got.Save(); err != nil {
		t.Fatal(err)
	}
	if after, _ := os.Stat(path); !os.SameFile(before, after) {
		t.Error("an unchanged state was written again")
	}
}

// A file the run did not list is dropped, one it forgot too; one that
// changed gets its new stamp; nothing changes until SetFiles.
func TestListing(t *testing.T) {
	s := LoadState(filepath.Join(t.TempDir(), "imports.state"), "b")
	a, b, c := Stamp{Ino: 1, Size: 10}, Stamp{Ino: 2, Size: 20}, Stamp{Ino: 3, Size: 30}
	list(s, "pi", map[string]Stamp{"a": a, "b": b, "c": c})
	l := s.Listing("pi")
	a2 := Stamp{Ino: 1, Size: 15}
	if l.List("a", a2) || !l.List("c", c) || !l.Known("b") {
		t.Fatal("List or Known")
	}
	l.Forget("c")
	if s.Files["pi"]["a"] != a {
		t.Fatal("changed before SetFiles")
	}
	s.SetFiles(l)
	if f := s.Files["pi"]; len(f) != 1 || f["a"] != a2 {
		t.Errorf("files %+v", f)
	}
}

// A torn or garbled state is an empty one: every file is read again.
func TestStateTornOrGarbled(t *testing.T) {
	path := filepath.Join(t.TempDir(), "imports.state")
	s := LoadState(path, "b")
	list(s, "pi", map[string]Stamp{"/a.jsonl": {Ino: 1, Size: 10}, "/b.jsonl": {Ino: 2, Size: 20}})
	s.SetCutoff("abc", "pi", 5)
	if err := s.Save(); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	for name, bad := range map[string][]byte{
		"torn":    data[:len(data)-5],
		"garbled": bytes.Replace(data, []byte("f "), []byte("f x"), 1),
		"header":  append([]byte("hist import state v1\n"), data[len(stateHeader)+1:]...),
	} {
		os.WriteFile(path, bad, 0o600)
		got := LoadState(path, "b")
		if len(got.Files) != 0 || len(got.Cutoffs) != 0 {
			t.Errorf("%s: %d sources, %d cutoffs kept", name, len(got.Files), len(got.Cutoffs))
		}
	}
}
