package tombstone

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"hist/lib/identity"
	"hist/lib/store/storetest"
)

func writeSet(t *testing.T, path string, texts ...string) {
	t.Helper()
	s := &Set{Path: path}
	for _, x := range texts {
		s.Add(x)
	}
	if err := s.Save(); err != nil {
		t.Fatal(err)
	}
}

func TestUnionOfMachines(t *testing.T) {
	dir := t.TempDir()
	writeSet(t, filepath.Join(dir, "hidden.json"), "legacy")
	writeSet(t, filepath.Join(dir, "hidden@b.json"), "from b")
	writeSet(t, filepath.Join(dir, "other.json"), "not a tombstone file")
	a, err := Load(filepath.Join(dir, "hidden@a.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !a.Hidden("legacy") || !a.Hidden("from b") || a.Hidden("not a tombstone file") || a.Exists || len(a.Entries) != 0 {
		t.Fatalf("union: exists %v entries %v", a.Exists, a.Entries)
	}
	if o := a.HidesOthers(); o == nil || !o.Hidden("from b") || !o.Hidden("legacy") {
		t.Fatal("HidesOthers misses the others' entries")
	}
	a.Add("from a")
	if err := a.Save(); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(filepath.Join(dir, "hidden@a.json"))
	if want := `["` + identity.Key("from a") + `"]` + "\n"; string(data) != want {
		t.Fatalf("a's file holds %s: only its own entries belong there", data)
	}
	b, _ := Load(filepath.Join(dir, "hidden@b.json"))
	if !b.Hidden("from a") || len(b.Entries) != 1 {
		t.Fatalf("b sees %v", b.Entries)
	}
	// What a hides too is not for a's rewriters to sweep again.
	a.Add("from b")
	a.Add("legacy")
	if a.HidesOthers() != nil {
		t.Fatal("HidesOthers holds entries a has")
	}
}

func TestUntrustedOtherMachineStops(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "hidden@b.json"), []byte("garbage"), 0o600)
	_, err := Load(filepath.Join(dir, "hidden@a.json"))
	var u *UntrustedError
	if !errors.As(err, &u) || filepath.Base(u.Path) != "hidden@b.json" {
		t.Fatalf("err = %v", err)
	}
	os.Remove(filepath.Join(dir, "hidden@b.json"))
	os.WriteFile(filepath.Join(dir, "hidden@a.sync-conflict-20261201-101010-ABCDEFG.json"), []byte("[1]"), 0o600)
	if _, err := Load(filepath.Join(dir, "hidden.json")); !errors.As(err, &u) {
		t.Fatalf("an untrusted conflict copy was trusted: %v", err)
	}
}

func TestConflictCopyMerged(t *testing.T) {
	dir := t.TempDir()
	own := filepath.Join(dir, "hidden@a.json")
	writeSet(t, own, "kept")
	cp := filepath.Join(dir, "hidden@a.sync-conflict-20261201-101010-ABCDEFG.json")
	writeSet(t, cp, "lost side")
	other := filepath.Join(dir, "hidden@b.sync-conflict-20261201-101010-ABCDEFG.json")
	writeSet(t, other, "b's copy")
	s, err := Load(own)
	if err != nil {
		t.Fatal(err)
	}
	if !s.Hidden("lost side") || !s.Hidden("b's copy") || len(s.Entries) != 2 {
		t.Fatalf("entries %v", s.Entries)
	}
	s.Add("new")
	if err := s.Save(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(cp); err == nil {
		t.Fatal("own conflict copy kept after the merge")
	}
	if _, err := os.Stat(other); err != nil {
		t.Fatal("another machine's conflict copy removed")
	}
	again, _ := Load(own)
	if len(again.Entries) != 3 || !again.Hidden("lost side") {
		t.Fatalf("after save %v", again.Entries)
	}
}

// Another machine's tombstone file that Syncthing replaces (its temp file
// written, the old file removed, the temp renamed into place a moment
// later) is missing for that moment: Load waits for it, and never returns
// a set that shows what it hides.
func TestOtherMachineFileBeingReplaced(t *testing.T) {
	dir := t.TempDir()
	theirs := filepath.Join(dir, "hidden@b.json")
	writeSet(t, theirs, "deleted on b")
	data, err := os.ReadFile(theirs)
	if err != nil {
		t.Fatal(err)
	}
	storetest.Replace(t, theirs, data)
	n := 30
	if os.Getenv("HIST_LONG") != "" {
		n = 300
	}
	shown := 0
	for range n {
		a, err := Load(filepath.Join(dir, "hidden@a.json"))
		if err != nil {
			t.Fatal(err)
		}
		if !a.Hidden("deleted on b") {
			shown++
		}
	}
	if shown > 0 {
		t.Fatalf("%d of %d loads missed b's tombstone file while it was being replaced", shown, n)
	}
}

// A temp file of Syncthing's for a tombstone file that is not there says
// Syncthing is writing it: Load waits. One left more than a minute ago
// (a transfer that stopped) does not.
func TestStaleSyncthingTempNotWaitedFor(t *testing.T) {
	dir := t.TempDir()
	tmp := filepath.Join(dir, ".syncthing.hidden@b.json.tmp")
	os.WriteFile(tmp, []byte(`["sha256:`), 0o600)
	s := &Set{Path: filepath.Join(dir, "hidden@a.json")}
	if settled, err := s.loadOthers(s.Path); err != nil || settled {
		t.Fatalf("a fresh temp file: settled %v, %v", settled, err)
	}
	old := time.Now().Add(-2 * time.Minute)
	os.Chtimes(tmp, old, old)
	if settled, err := s.loadOthers(s.Path); err != nil || !settled {
		t.Fatalf("a stale temp file: settled %v, %v", settled, err)
	}
}
