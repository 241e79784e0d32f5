package store

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// tree lists the files under root, relative, with their contents.
func tree(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			data, _ := os.ReadFile(p)
			rel, _ := filepath.Rel(root, p)
			out[filepath.ToSlash(rel)] = string(data)
		}
		return nil
	})
	return out
}

func write(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, data := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// TestRenameMachine: every file named with the old id, and legacy-owner's
// content, takes the new id; other machines' files and the files without
// an id stay; the id file changes last but for the journal.
func TestRenameMachine(t *testing.T) {
	root, cfg := t.TempDir(), t.TempDir()
	write(t, cfg, map[string]string{MachineFile: "old1\n"})
	write(t, root, map[string]string{
		"hidden@old1.json": "h", "registry@old1.json": `{"p1": "/a"}`, "imports@old1.ledger": "l", "imports@old1.state": "s",
		"hidden@other.json": "o", "legacy-owner": "old1\n", "history-global.jsonl": "g",
		"hidden@old1.sync-conflict-20261201-101010-ABCDEFG.json": "c",
		"projects/p1/x@old1.jsonl":                               "x", "projects/p1/seed@old1.jsonl": "seed",
		"projects/p1/x@old1.jsonl.carry-1-ab.jsonl": "carry", "projects/p1/compact-1-ab@old1.jsonl.gc-2-cd.jsonl": "claim",
		"projects/p1/y@other.jsonl": "y", "projects/p1/z.jsonl": "z", "projects/p1/.x@old1.jsonl.tmp-1-ab": "tmp",
	})
	r, err := RenameMachine(root, cfg, "new-2")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"hidden@new-2.json": "h", "registry@new-2.json": `{"p1": "/a"}`, "imports@new-2.ledger": "l", "imports@new-2.state": "s",
		"hidden@other.json": "o", "legacy-owner": "new-2\n", "history-global.jsonl": "g",
		"hidden@new-2.sync-conflict-20261201-101010-ABCDEFG.json": "c",
		"projects/p1/x@new-2.jsonl":                               "x", "projects/p1/seed@new-2.jsonl": "seed",
		"projects/p1/x@new-2.jsonl.carry-1-ab.jsonl": "carry", "projects/p1/compact-1-ab@new-2.jsonl.gc-2-cd.jsonl": "claim",
		"projects/p1/y@other.jsonl": "y", "projects/p1/z.jsonl": "z", "projects/p1/.x@old1.jsonl.tmp-1-ab": "tmp",
	}
	got := tree(t, root)
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	if len(got) != len(want) {
		t.Errorf("files: %v", got)
	}
	if r.From != "old1" || r.To != "new-2" || r.Files != 9 || len(r.Kept) != 0 {
		t.Errorf("report %+v", r)
	}
	if c := tree(t, cfg); c[MachineFile] != "new-2\n" || len(c) != 1 {
		t.Errorf("config home: %v", c)
	}
}

// TestRenameMachineTaken: a new name already taken (the machine's history
// split by an earlier HIST_MACHINE) gets a fresh name of its kind, or a
// merge; what cannot be placed stays, reported.
func TestRenameMachineTaken(t *testing.T) {
	root, cfg := t.TempDir(), t.TempDir()
	write(t, cfg, map[string]string{MachineFile: "a1b2c3d4\n"})
	write(t, root, map[string]string{
		"hidden@a1b2c3d4.json": "old", "hidden@lap.json": "new",
		"registry@a1b2c3d4.json": `{"p1": "/a"}`, "registry@lap.json": `{"p2": "/b"}`,
		"projects/p1/s@a1b2c3d4.jsonl": "old", "projects/p1/s@lap.jsonl": "new",
		"projects/p1/seed-claude@a1b2c3d4.jsonl": "old seed", "projects/p1/seed-claude@lap.jsonl": "new seed",
	})
	r, err := RenameMachine(root, cfg, "lap")
	if err != nil {
		t.Fatal(err)
	}
	got := tree(t, root)
	if got["projects/p1/s-a1b2c3d4@lap.jsonl"] != "old" || got["projects/p1/s@lap.jsonl"] != "new" {
		t.Errorf("capture files: %v", got)
	}
	var imp []string
	for k := range got {
		if strings.HasPrefix(k, "projects/p1/import-claude-") && strings.HasSuffix(k, "@lap.jsonl") && got[k] == "old seed" {
			imp = append(imp, k)
		}
	}
	if len(imp) != 1 || Classify(filepath.Base(imp[0])) != Import {
		t.Errorf("the old seed file: %v", imp)
	}
	if reg := got["registry@lap.json"]; !strings.Contains(reg, `"p1": "/a"`) || !strings.Contains(reg, `"p2": "/b"`) {
		t.Errorf("registry: %q", reg)
	}
	if _, ok := got["registry@a1b2c3d4.json"]; ok {
		t.Errorf("the old registry stayed")
	}
	if got["hidden@a1b2c3d4.json"] != "old" || !slices.Equal(r.Kept, []string{filepath.Join(root, "hidden@a1b2c3d4.json")}) {
		t.Errorf("tombstones: kept %v, %v", r.Kept, got)
	}
}

// TestRenameMachineResumes: a rename cut short (its journal left, some
// files renamed) is finished by the next one, whatever name it gives.
func TestRenameMachineResumes(t *testing.T) {
	root, cfg := t.TempDir(), t.TempDir()
	write(t, cfg, map[string]string{MachineFile: "b\n", RenameFile: "a b\n"})
	write(t, root, map[string]string{"projects/p/x@a.jsonl": "x", "projects/p/y@b.jsonl": "y", "hidden@a.json": "h"})
	if from, to, err := PendingRename(cfg); from != "a" || to != "b" || err != nil {
		t.Fatalf("PendingRename = %q, %q, %v", from, to, err)
	}
	if _, err := RenameMachine(root, cfg, "c"); err != nil {
		t.Fatal(err)
	}
	got := tree(t, root)
	for _, k := range []string{"projects/p/x@c.jsonl", "projects/p/y@c.jsonl", "hidden@c.json"} {
		if _, ok := got[k]; !ok {
			t.Errorf("%s missing: %v", k, got)
		}
	}
	if c := tree(t, cfg); c[MachineFile] != "c\n" || len(c) != 1 {
		t.Errorf("config home: %v", c)
	}
	// No id yet: the name is recorded, nothing renamed.
	cfg2 := t.TempDir()
	if r, err := RenameMachine(t.TempDir(), cfg2, "d"); err != nil || r.From != "" || tree(t, cfg2)[MachineFile] != "d\n" {
		t.Errorf("without an id: %+v, %v", r, err)
	}
	if _, err := RenameMachine(root, cfg, "a.b"); err == nil {
		t.Errorf("a bad name was taken")
	}
}
