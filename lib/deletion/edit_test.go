//go:build unix

package deletion

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"hist/lib/tombstone"
)

// upper replaces a record whose line holds "secret" with one holding
// "SECRET", keeping every other line.
func upper(line []byte) ([]byte, bool) {
	if !bytes.Contains(line, []byte("secret")) {
		return nil, false
	}
	out := bytes.ReplaceAll(line, []byte("secret"), []byte("SECRET"))
	return append(out, '\n'), true
}

// EditFile replaces the lines its edit changes, also among lines appended
// at every point of the rewrite, and keeps every other byte.
func TestEditFileReplacesLinesAppendedMeanwhile(t *testing.T) {
	f := newFixture(t)
	p := f.write("a.jsonl", rec("x", 1)+"not json\n"+rec("a secret", 2)+rec("y", 3))
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
		appendOld(rec("secret after scan", 4))
	}
	hookBeforeRename = func(string) { appendOld(rec("before rename", 5)) }
	hookAfterRename = func(string) { appendOld(rec("secret after rename", 6)) }
	defer func() { hookScanned, hookBeforeRename, hookAfterRename = nil, nil, nil }()
	res := EditFile(p, upper, false)
	w.Close()
	if res.Err != nil || !res.Rewritten || res.Changed != 3 || res.Carry != "" {
		t.Fatalf("result %+v", res)
	}
	want := rec("x", 1) + "not json\n" + rec("a SECRET", 2) + rec("y", 3) + rec("SECRET after scan", 4) +
		rec("before rename", 5) + rec("SECRET after rename", 6)
	if got := read(t, p); got != want {
		t.Errorf("file:\n%s\nwant:\n%s", got, want)
	}
	fi, err := os.Stat(p)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, %v", fi.Mode(), err)
	}
}

// A file the edit does not change is never opened for writing: same
// bytes, same mtime, no temp file; a dry run changes nothing either.
func TestEditFileUnchangedAndDryRun(t *testing.T) {
	f := newFixture(t)
	p := f.write("a.jsonl", rec("x", 1)+rec("y", 2))
	old := time.Unix(1_000_000_000, 0)
	if err := os.Chtimes(p, old, old); err != nil {
		t.Fatal(err)
	}
	res := EditFile(p, upper, false)
	if res.Err != nil || res.Rewritten || res.Changed != 0 {
		t.Fatalf("result %+v", res)
	}
	q := f.write("b.jsonl", rec("secret", 1))
	if err := os.Chtimes(q, old, old); err != nil {
		t.Fatal(err)
	}
	res = EditFile(q, upper, true)
	if res.Err != nil || !res.Rewritten || res.Changed != 1 {
		t.Fatalf("dry run result %+v", res)
	}
	for _, path := range []string{p, q} {
		fi, err := os.Stat(path)
		if err != nil || !fi.ModTime().Equal(old) {
			t.Errorf("%s: mtime %v, %v", path, fi.ModTime(), err)
		}
	}
	if got := read(t, q); got != rec("secret", 1) {
		t.Errorf("dry run changed the file: %q", got)
	}
	ents, _ := os.ReadDir(filepath.Dir(p))
	if len(ents) != 2 {
		t.Errorf("folder holds %d entries, want 2", len(ents))
	}
	if res := EditFile(filepath.Join(filepath.Dir(p), "missing.jsonl"), upper, false); res.Err != nil || res.Rewritten {
		t.Errorf("missing file: %+v", res)
	}
}

// A prompt given with its secret also deletes and hides its redacted
// form, the one capture stored.
func TestDeleteWithSecretRemovesRedactedCopy(t *testing.T) {
	f := newFixture(t)
	tok := "ghp_" + strings.Repeat("a1B2", 9)
	p := f.write("a.jsonl", rec("push with [REDACTED:github-token] now", 1)+rec("kept", 2))
	res := Delete(f.st, f.scope(), []string{"push with " + tok + " now"}, Options{})
	if res.Outcome != Clean || res.Copies != 1 || res.Tombstones != 1 { // one prompt, two entries
		t.Fatalf("result %+v", res)
	}
	if got := read(t, p); got != rec("kept", 2) {
		t.Errorf("file holds %q", got)
	}
	h, err := tombstone.Load(f.st.Hidden())
	if err != nil {
		t.Fatal(err)
	}
	if !h.Hidden("push with [REDACTED:github-token] now") || !h.Hidden("push with "+tok+" now") {
		t.Errorf("tombstones %v", h.Entries)
	}
}
