package ledger

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
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

// Keys appended after the file's keys were loaded are found, from
// several groups; so are keys this run appends after another run appended
// some it has not read.
func TestLedgerAppendAfterLoad(t *testing.T) {
	path := filepath.Join(t.TempDir(), "imports.ledger")
	k := func(i int) Key { return KeyOf("pi", strconv.Itoa(i), "", 0, "") }
	l, _ := Load(path)
	if err := l.Append([]Key{k(0)}); err != nil {
		t.Fatal(err)
	}
	for i := range scanProbes + 1 {
		l.Has(k(100 + i))
	}
	if !l.loaded {
		t.Fatal("the keys were not loaded")
	}
	if err := l.Append([]Key{k(1)}, nil, []Key{k(2), k(3)}); err != nil {
		t.Fatal(err)
	}
	for i := range 4 {
		if !l.Has(k(i)) {
			t.Errorf("key %d not found after Append", i)
		}
	}
	other, _ := Load(path)
	if err := other.Append([]Key{k(4)}); err != nil {
		t.Fatal(err)
	}
	if err := l.Append([]Key{k(5)}); err != nil {
		t.Fatal(err)
	}
	if !l.Has(k(5)) {
		t.Error("a key appended after another run's is not found")
	}
	if grew, err := l.Refresh(); err != nil || !grew || !l.Has(k(4)) {
		t.Errorf("Refresh: grew %v, %v, has the other run's key %v", grew, err, l.Has(k(4)))
	}
	if l, _ := Load(path); keysIn(l) != 6 {
		t.Errorf("the file holds %d keys, want 6", keysIn(l))
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

// list lists files in a new listing of src and records them read whole,
// to their ends.
func list(s *State, src string, files map[string]Stamp) {
	l := s.Listing(src)
	for p, st := range files {
		l.List(p, st)
		l.Reached(p, st.Size, 42, "ctx "+p)
	}
	s.SetFiles(l)
}

func TestStateRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "imports.state")
	s := LoadState(path, "build 1")
	files := map[string]Stamp{
		"/a b/c\n\"d\".jsonl": {Dev: 1, Ino: 2, Size: 3, Mtime: time.Now().UnixNano()},
		"/x.db-wal":           {Dev: 1 << 63, Ino: 9, Size: 0, Mtime: -5},
	}
	list(s, `pi "/root with space"`, files)
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
		if f := got.Files[`pi "/root with space"`][p]; f.Offset != st.Size || f.Head != 42 || f.Context != "ctx "+p {
			t.Errorf("%q: cursor not kept: %+v", p, f)
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
	// Listing the same stamps again does not rewrite the file.
	fi1, _ := os.Stat(path)
	l := got.Listing(`pi "/root with space"`)
	for p, st := range files {
		if _, _, same := l.List(p, st); !same {
			t.Errorf("%q: not unchanged", p)
		}
	}
	got.SetFiles(l)
	time.Sleep(10 * time.Millisecond)
	if err := got.Save(); err != nil {
		t.Fatal(err)
	}
	if fi2, _ := os.Stat(path); !fi2.ModTime().Equal(fi1.ModTime()) {
		t.Error("an unchanged state was written again")
	}
}

// A file the run did not list is dropped; one that changed gets its new
// stamp and cursor; nothing changes until SetFiles.
func TestListing(t *testing.T) {
	s := LoadState(filepath.Join(t.TempDir(), "imports.state"), "b")
	a, b := Stamp{Ino: 1, Size: 10}, Stamp{Ino: 2, Size: 20}
	list(s, "pi", map[string]Stamp{"a": a, "b": b})
	l := s.Listing("pi")
	a2 := Stamp{Ino: 1, Size: 15}
	old, ok, same := l.List("a", a2)
	if !ok || same || old.Offset != 10 {
		t.Fatalf("List(a) = %+v %v %v", old, ok, same)
	}
	l.Reached("a", 14, 7, "")
	if f := s.Files["pi"]["a"]; f.Stamp != a || f.Offset != 10 {
		t.Fatalf("changed before SetFiles: %+v", f)
	}
	s.SetFiles(l)
	if f, ok := s.Files["pi"]["a"]; !ok || f.Stamp != a2 || f.Offset != 14 || f.Head != 7 {
		t.Errorf("a: %+v", f)
	}
	if _, ok := s.Files["pi"]["b"]; ok {
		t.Error("b, not listed, was kept")
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
	if got := LoadState(path, "b"); len(got.Files["pi"]) != 2 {
		t.Fatalf("whole state: %d files", len(got.Files["pi"]))
	}
	bad := map[string][]byte{
		"torn":      data[:len(data)-5],
		"no end":    data[:len(data)-len("end\n")],
		"garbled":   bytes.Replace(data, []byte("f "), []byte("f x"), 1),
		"binary":    append(append([]byte{}, data[:30]...), 0, 1, 2, 0xff),
		"old":       []byte("hist import state v2\nb \"b\"\n"),
		"no quotes": bytes.Replace(data, []byte(`"/a.jsonl"`), []byte(`/a.jsonl`), 1),
	}
	for name, b := range bad {
		os.WriteFile(path, b, 0o600)
		got := LoadState(path, "b")
		if len(got.Files) != 0 || len(got.Cutoffs) != 0 {
			t.Errorf("%s: state taken: %v %v", name, got.Files, got.Cutoffs)
		}
		if got.Unchanged("pi", "/a.jsonl", Stamp{Ino: 1, Size: 10}) {
			t.Errorf("%s: a file counts as unchanged", name)
		}
	}
}

// writeKeys writes a ledger of n keys and returns its path and the keys.
func writeKeys(t *testing.T, n int) (string, []Key) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "imports.ledger")
	var keys []Key
	for i := range n {
		keys = append(keys, KeyOf("pi", fmt.Sprint(i), "", 0, ""))
	}
	if err := (&Ledger{Path: path, added: map[Key]struct{}{}}).Append(keys); err != nil {
		t.Fatal(err)
	}
	return path, keys
}

// Lookups answer the same whether they scan the keys (the first few) or
// search them sorted (the rest).
func TestHasScannedThenSorted(t *testing.T) {
	path, keys := writeKeys(t, 100)
	l, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 * scanProbes {
		if !l.Has(keys[(i*37)%len(keys)]) {
			t.Fatalf("lookup %d: key missing", i)
		}
		if l.Has(KeyOf("pi", fmt.Sprint("x", i), "", 0, "")) {
			t.Fatalf("lookup %d: a key never added", i)
		}
	}
}

// A run that changes a few files appends them to the state; a torn
// append is a torn state; many appends end in a rewrite.
func TestStateAppends(t *testing.T) {
	path := filepath.Join(t.TempDir(), "imports.state")
	s := LoadState(path, "b")
	files := map[string]Stamp{}
	for i := range 10 {
		files[fmt.Sprintf("/s%d.jsonl", i)] = Stamp{Ino: uint64(i + 1), Size: 10}
	}
	list(s, "pi", files)
	if err := s.Save(); err != nil {
		t.Fatal(err)
	}
	fi1, _ := os.Stat(path)
	// One file grew, one is gone.
	s = LoadState(path, "b")
	files["/s0.jsonl"] = Stamp{Ino: 1, Size: 20}
	delete(files, "/s9.jsonl")
	list(s, "pi", files)
	s.SetCutoff("abc", "pi", 7)
	if err := s.Save(); err != nil {
		t.Fatal(err)
	}
	fi2, _ := os.Stat(path)
	if !os.SameFile(fi1, fi2) || fi2.Size() <= fi1.Size() {
		t.Fatalf("not appended: %d then %d bytes", fi1.Size(), fi2.Size())
	}
	got := LoadState(path, "b")
	if len(got.Files["pi"]) != 9 || got.Files["pi"]["/s0.jsonl"].Offset != 20 {
		t.Fatalf("after the append: %v", got.Files["pi"])
	}
	if ms, ok := got.Cutoff("abc", "pi"); !ok || ms != 7 {
		t.Fatalf("cutoff %d %v", ms, ok)
	}
	data, _ := os.ReadFile(path)
	os.WriteFile(path, data[:len(data)-3], 0o600)
	if got := LoadState(path, "b"); len(got.Files) != 0 {
		t.Fatal("a torn append was taken")
	}
	os.WriteFile(path, data, 0o600)
	// Appends go on until the file is mostly superseded lines.
	for i := range 40 {
		s := LoadState(path, "b")
		files["/s1.jsonl"] = Stamp{Ino: 2, Size: int64(30 + i)}
		list(s, "pi", files)
		if err := s.Save(); err != nil {
			t.Fatal(err)
		}
	}
	got = LoadState(path, "b")
	if len(got.Files["pi"]) != 9 || got.Files["pi"]["/s1.jsonl"].Size != 69 {
		t.Fatalf("after the appends: %v", got.Files["pi"])
	}
	if fi, _ := os.Stat(path); os.SameFile(fi, fi1) {
		t.Error("never rewritten")
	}
}

// TestHasReadsKeysAligned: a lookup that reads through the file finds a
// key in any chunk, and not the bytes that span two keys.
func TestHasReadsKeysAligned(t *testing.T) {
	defer func(n int) { scanChunk = n }(scanChunk)
	scanChunk = 3 * len(Key{})
	path, keys := writeKeys(t, 20)
	var span Key // the second half of key 4 and the first of key 5
	copy(span[:], keys[4][8:])
	copy(span[8:], keys[5][:8])
	l, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	for i, k := range keys {
		if !l.Has(k) {
			t.Fatalf("key %d not found", i)
		}
		l.probes = 0 // every lookup reads the file
	}
	if l.Has(span) {
		t.Fatal("bytes spanning two keys count as a key")
	}
	if l.loaded {
		t.Fatal("the keys were loaded")
	}
}

// TestHasReportsAReadFailure: a ledger that can no longer be read is an
// error, not a key missing.
func TestHasReportsAReadFailure(t *testing.T) {
	path := filepath.Join(t.TempDir(), "imports.ledger")
	k := KeyOf("pi", "1", "", 0, "")
	if err := (&Ledger{Path: path, added: map[Key]struct{}{}}).Append([]Key{k}); err != nil {
		t.Fatal(err)
	}
	l, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, int64(len(header))); err != nil {
		t.Fatal(err)
	}
	if l.Has(k) || l.Err() == nil {
		t.Fatalf("a shrunk ledger: Has %v, Err %v", l.Has(k), l.Err())
	}
}
