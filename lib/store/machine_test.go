package store

import (
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

func TestMachineNames(t *testing.T) {
	for _, c := range []struct {
		name, machine string
		kind          Kind
	}{
		{"0f3c@a.jsonl", "a", Capture},
		{"0f3c.jsonl", "", Capture},
		{"my.id@lap-1.jsonl", "lap-1", Capture},
		{"seed@a.jsonl", "a", Seed},
		{"seed-claude@b_2.jsonl", "b_2", Seed},
		{"seed.jsonl", "", Seed},
		{"import-pi-1-ab12@a.jsonl", "a", Import},
		{"compact-1-ab12@a.jsonl", "a", Compact},
		{"x@a.jsonl.carry-1-ab.jsonl", "a", Carry},
		{"x@a.jsonl.gc-1-ab.jsonl", "a", Claim},
		{"x@a.sync-conflict-20261201-101010-ABCDEFG.jsonl", "a", Capture},
		{"seed.sync-conflict-20261201-101010-ABCDEFG.jsonl", "", Seed},
		{"compact-1-ab@b.sync-conflict-20261201-101010-Z9Z9Z9Z.jsonl", "b", Compact},
		{"x@a.jsonl.gc-1-ab.sync-conflict-20261201-101010-ABCDEFG.jsonl", "a", Claim},
		{"history-global.sync-conflict-20261201-101010-ABCDEFG.jsonl", "", GlobalFile},
		{".syncthing.x@a.jsonl.tmp", "", NotStore},
		{"x@a.sync-conflict-2026-101010-ABCDEFG.jsonl", "", Capture}, // not Syncthing's shape: a plain name
	} {
		if k := Classify(c.name); k != c.kind {
			t.Errorf("Classify(%q) = %v, want %v", c.name, k, c.kind)
		}
		if c.kind != NotStore {
			if m := MachineOf(c.name); m != c.machine {
				t.Errorf("MachineOf(%q) = %q, want %q", c.name, m, c.machine)
			}
		}
	}
	for name, m := range map[string]string{
		"hidden@a.json": "a", "hidden.json": "", "registry@x-1.json": "x-1",
		"hidden@a.sync-conflict-20261201-101010-ABCDEFG.json": "a",
		"imports@a.ledger": "a",
	} {
		if got := MachineOf(name); got != m {
			t.Errorf("MachineOf(%q) = %q, want %q", name, got, m)
		}
	}
	if got := Origin("x@a.jsonl.carry-1-ab.sync-conflict-20261201-101010-ABCDEFG.jsonl"); got != "x@a.jsonl" {
		t.Errorf("Origin of a carry's conflict copy = %q", got)
	}
	if got := Named("seed.jsonl", "m1"); got != "seed@m1.jsonl" {
		t.Errorf("Named = %q", got)
	}
	if got := Named("hidden.json", ""); got != "hidden.json" {
		t.Errorf("Named without machine = %q", got)
	}
	if got := TempOrigin(".x@a.jsonl.tmp-123-abcd"); got != "x@a.jsonl" {
		t.Errorf("TempOrigin = %q", got)
	}
	for _, n := range []string{".stfolder", ".stignore", ".stversions", ".syncthing.seed@a.jsonl.tmp"} {
		if !IsSyncthing(n) {
			t.Errorf("IsSyncthing(%q) = false", n)
		}
	}
}

func TestValidMachine(t *testing.T) {
	for _, ok := range []string{"a", "lap-1", "B_2", "0123456789abcdef0123456789abcdef"} {
		if !ValidMachine(ok) {
			t.Errorf("ValidMachine(%q) = false", ok)
		}
	}
	for _, bad := range []string{"", "a.b", "a@b", "a/b", "a b", "é", "0123456789abcdef0123456789abcdef0"} {
		if ValidMachine(bad) {
			t.Errorf("ValidMachine(%q) = true", bad)
		}
	}
}

func TestMachineIDOnceConcurrent(t *testing.T) {
	home := filepath.Join(t.TempDir(), "cfg")
	none := func(string) string { return "" }
	if _, err := MachineID(none, home, false); !os.IsNotExist(err) {
		t.Fatalf("without create: %v, want not exist", err)
	}
	ids := make([]string, 8)
	var wg sync.WaitGroup
	for i := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id, err := MachineID(none, home, true)
			if err != nil {
				t.Error(err)
			}
			ids[i] = id
		}()
	}
	wg.Wait()
	for _, id := range ids {
		if id != ids[0] || !ValidMachine(id) {
			t.Fatalf("concurrent first runs disagree: %q", ids)
		}
	}
	fi, err := os.Stat(filepath.Join(home, MachineFile))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("machine-id: %v %v", fi, err)
	}
	if di, _ := os.Stat(home); di.Mode().Perm() != 0o700 {
		t.Fatalf("config home is %v", di.Mode())
	}
	ents, _ := os.ReadDir(home)
	if len(ents) != 1 {
		t.Fatalf("temp files left: %v", ents)
	}
	// A HIST_MACHINE set after the first write names another machine:
	// the recorded id comes back, with the mismatch.
	env := func(k string) string {
		if k == MachineEnv {
			return "over-ride"
		}
		return ""
	}
	id, err := MachineID(env, home, true)
	var mm *MismatchError
	if id != ids[0] || !errors.As(err, &mm) || mm.Env != "over-ride" || mm.Recorded != ids[0] {
		t.Fatalf("HIST_MACHINE after the first write: %q, %v", id, err)
	}
	bad := func(string) string { return "a.b" }
	if _, err := MachineID(bad, home, true); err == nil {
		t.Fatal("a bad HIST_MACHINE was taken")
	}
}

// TestMachineIDFromEnv: HIST_MACHINE names the machine at its first write,
// and is recorded; before it, a read without create gives it as it is.
func TestMachineIDFromEnv(t *testing.T) {
	home := filepath.Join(t.TempDir(), "cfg")
	env := func(k string) string {
		if k == MachineEnv {
			return "laptop"
		}
		return ""
	}
	if id, err := MachineID(env, home, false); id != "laptop" || err != nil {
		t.Fatalf("before the first write: %q, %v", id, err)
	}
	if _, err := os.Stat(home); !os.IsNotExist(err) {
		t.Fatalf("a read made the config home: %v", err)
	}
	if id, err := MachineID(env, home, true); id != "laptop" || err != nil {
		t.Fatalf("the first write: %q, %v", id, err)
	}
	if data, _ := os.ReadFile(filepath.Join(home, MachineFile)); string(data) != "laptop\n" {
		t.Fatalf("machine-id holds %q", data)
	}
	if id, err := MachineID(func(string) string { return "" }, home, true); id != "laptop" || err != nil {
		t.Fatalf("without HIST_MACHINE after: %q, %v", id, err)
	}
}

func TestOwnsAndLegacyOwner(t *testing.T) {
	root := t.TempDir()
	a := Store{Root: root, Machine: "a"}
	b := Store{Root: root, Machine: "b"}
	if !a.Owns("x@a.jsonl", false) || a.Owns("x@b.jsonl", true) || a.Owns("x.jsonl", false) || !a.Owns("x.jsonl", true) {
		t.Fatal("Owns")
	}
	if !(Store{Root: root}).Owns("x@b.jsonl", false) {
		t.Fatal("a store without machine owns everything")
	}
	// b has written at the root first: a may not claim the legacy files.
	os.WriteFile(filepath.Join(root, "registry@b.json"), []byte("{}"), 0o600)
	if a.OwnsLegacy(true) {
		t.Fatal("a claimed legacy files beside b's")
	}
	if _, err := os.Stat(filepath.Join(root, LegacyOwnerName)); err == nil {
		t.Fatal("legacy-owner written")
	}
	if !b.OwnsLegacy(false) {
		t.Fatal("b, alone at the root, would not own the legacy files")
	}
	if _, err := os.Stat(filepath.Join(root, LegacyOwnerName)); err == nil {
		t.Fatal("claim false claimed")
	}
	if !b.OwnsLegacy(true) || !b.OwnsLegacy(false) || a.OwnsLegacy(true) {
		t.Fatal("b claims once, a never")
	}
	if got := a.Hidden(); filepath.Base(got) != "hidden@a.json" {
		t.Fatalf("a's tombstones %q", got)
	}
	if got := a.Ledger(); filepath.Base(got) != "imports@a.ledger" {
		t.Fatalf("a's ledger %q", got)
	}
	os.WriteFile(filepath.Join(root, LedgerName), nil, 0o600)
	if got := b.Ledger(); filepath.Base(got) != LedgerName {
		t.Fatalf("the legacy owner's ledger %q, want the existing imports.ledger", got)
	}
}

func TestRegistryUnion(t *testing.T) {
	root := t.TempDir()
	a := Store{Root: root, Machine: "a"}
	b := Store{Root: root, Machine: "b"}
	os.WriteFile(filepath.Join(root, RegistryName), []byte(`{"h0":"/old"}`), 0o600)
	if err := a.Register("h1", "/one"); err != nil {
		t.Fatal(err)
	}
	if err := b.Register("h2", "/two"); err != nil {
		t.Fatal(err)
	}
	conflict := filepath.Join(root, "registry@a.sync-conflict-20261201-101010-ABCDEFG.json")
	os.WriteFile(conflict, []byte(`{"h3":"/three"}`), 0o600)
	r := b.LoadRegistry()
	if r["h0"] != "/old" || r["h1"] != "/one" || r["h2"] != "/two" || r["h3"] != "/three" {
		t.Fatalf("union: %v", r)
	}
	if data, _ := os.ReadFile(filepath.Join(root, "registry@b.json")); string(data) != "{\n  \"h2\": \"/two\"\n}\n" {
		t.Fatalf("b's file holds %q", data)
	}
	// a's next write merges its conflict copy and removes it.
	if err := a.Register("h4", "/four"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(conflict); err == nil {
		t.Fatal("conflict copy kept")
	}
	if r := (Store{Root: root, Machine: "c"}).LoadRegistry(); r["h3"] != "/three" || r["h4"] != "/four" {
		t.Fatalf("after the merge: %v", r)
	}
}
