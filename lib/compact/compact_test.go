package compact

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"hist/lib/history"
	"hist/lib/record"
	"hist/lib/store"
	"hist/lib/tombstone"
)

const hash = "0123456789abcdef"

func newStore(t *testing.T) (store.Store, string) {
	t.Helper()
	st := store.Store{Root: t.TempDir()}
	dir := st.ProjectDir(hash)
	if err := store.EnsureDir(dir); err != nil {
		t.Fatal(err)
	}
	return st, dir
}

// writeRecs writes a file of records "<name> <i>" with ts ts0+i.
func writeRecs(t *testing.T, path string, n int, ts0 int64) {
	t.Helper()
	var b []byte
	base := filepath.Base(path)
	for i := range n {
		b = record.Append(b, record.Record{Text: fmt.Sprintf("%s %d", base, i), TS: ts0 + int64(i)})
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

func opts(maxFiles, maxEntries, keep int) Options {
	return Options{MaxFiles: maxFiles, MaxEntries: maxEntries, Keep: keep}
}

func names(fs []FileInfo) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Name)
	}
	return out
}

// visible returns the sorted "ts text" lines that readers show.
func visible(t *testing.T, st store.Store, hidden *tombstone.Set) []string {
	t.Helper()
	files, err := st.ProjectFiles(hash)
	if err != nil {
		t.Fatal(err)
	}
	res := history.Read(files, hidden)
	if len(res.Failed) > 0 {
		t.Fatalf("unreadable: %v", res.Failed)
	}
	var out []string
	for i := range res.Len() {
		e := res.At(i)
		out = append(out, fmt.Sprintf("%d %s", e.TS, e.Text))
	}
	slices.Sort(out)
	return out
}

func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}

func TestThresholds(t *testing.T) {
	st, dir := newStore(t)
	for i := range 5 {
		writeRecs(t, filepath.Join(dir, fmt.Sprintf("f%d.jsonl", i)), 2, int64(i*100))
	}
	// 5 files, 10 entries: not above 5 files or 10 entries.
	p, err := PlanProject(st, hash, opts(5, 10, 2))
	if err != nil || p.Runs() {
		t.Fatalf("plan runs at the thresholds: %+v %v", p, err)
	}
	if p.Files != 5 || p.Entries != 10 {
		t.Fatalf("counted %d files, %d entries", p.Files, p.Entries)
	}
	// One more file: above the file threshold.
	writeRecs(t, filepath.Join(dir, "f5.jsonl"), 0, 0)
	if p, _ := PlanProject(st, hash, opts(5, 10, 2)); !p.Runs() {
		t.Fatalf("6 files > 5 does not run: %s", p.Reason)
	}
	// Above the entry threshold only.
	os.Remove(filepath.Join(dir, "f5.jsonl"))
	if p, _ := PlanProject(st, hash, opts(5, 9, 2)); !p.Runs() || len(p.Merge) != 3 {
		t.Fatalf("10 entries > 9 does not merge 3 files: %+v", p)
	}
}

func TestNewestByEntryNotMtime(t *testing.T) {
	st, dir := newStore(t)
	// old.jsonl has the oldest entries but the newest mtime (a delete
	// rewrote it): it must still be merged first.
	writeRecs(t, filepath.Join(dir, "a.jsonl"), 1, 2000)
	writeRecs(t, filepath.Join(dir, "b.jsonl"), 1, 3000)
	writeRecs(t, filepath.Join(dir, "c.jsonl"), 1, 4000)
	writeRecs(t, filepath.Join(dir, "old.jsonl"), 1, 1000)
	// empty.jsonl has no entry: its mtime (ms) decides; set it between b and c.
	os.WriteFile(filepath.Join(dir, "empty.jsonl"), nil, 0o600)
	mt := time.UnixMilli(3500)
	os.Chtimes(filepath.Join(dir, "empty.jsonl"), mt, mt)
	for _, n := range []string{"a", "b", "c"} {
		old := time.UnixMilli(1)
		os.Chtimes(filepath.Join(dir, n+".jsonl"), old, old)
	}
	p, err := PlanProject(st, hash, opts(0, 0, 2))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := names(p.Merge), []string{"old.jsonl", "a.jsonl", "b.jsonl"}; !slices.Equal(got, want) {
		t.Fatalf("merge %v, want %v (oldest first, newest by entry ts)", got, want)
	}
	if p.Kept != 2 {
		t.Fatalf("kept %d, want 2", p.Kept)
	}
}

func TestNeverMerged(t *testing.T) {
	st, dir := newStore(t)
	for _, n := range []string{"seed.jsonl", "seed-claude.jsonl", "seed.jsonl.gc-1-aa.jsonl", "seed-codex.jsonl.carry-1-bb.jsonl", "cur.jsonl", "x.jsonl", "y.jsonl"} {
		writeRecs(t, filepath.Join(dir, n), 1, 10)
	}
	writeRecs(t, filepath.Join(dir, "new.jsonl"), 1, 99)
	// A store file that is a symbolic link (to a file kept elsewhere).
	elsewhere := filepath.Join(t.TempDir(), "elsewhere.jsonl")
	writeRecs(t, elsewhere, 1, 10)
	if err := os.Symlink(elsewhere, filepath.Join(dir, "linked.jsonl")); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(st.Root, store.GlobalName), record.Marshal(record.Record{Text: "g", TS: 1}), 0o600)
	p, err := PlanProject(st, hash, Options{Keep: 1, Current: CurrentName("/some/where/cur.jsonl")})
	if err != nil {
		t.Fatal(err)
	}
	if got := names(p.Merge); !slices.Equal(got, []string{"x.jsonl", "y.jsonl"}) {
		t.Fatalf("merge %v, want only x and y", got)
	}
	if p.Files != 9 || p.Kept != 7 {
		t.Fatalf("files %d, kept %d: want 9 and 7 (the link is counted and kept)", p.Files, p.Kept)
	}
	// Only one mergeable file: nothing runs.
	os.Remove(filepath.Join(dir, "x.jsonl"))
	p, _ = PlanProject(st, hash, Options{Keep: 1, Current: CurrentName("cur")})
	if p.Runs() || len(p.Merge) != 0 {
		t.Fatalf("ran with one mergeable file: %+v", p)
	}
	if !strings.Contains(p.Reason, "only 1 file can be merged") {
		t.Fatalf("reason %q", p.Reason)
	}
}

func TestCurrentName(t *testing.T) {
	for in, want := range map[string]string{"abc": "abc.jsonl", "abc.jsonl": "abc.jsonl", "/x/y/abc.jsonl": "abc.jsonl", "": ""} {
		if got := CurrentName(in); got != want {
			t.Errorf("CurrentName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestRunContent(t *testing.T) {
	st, dir := newStore(t)
	var a []byte
	a = record.Append(a, record.Record{Text: "keep me", TS: 1})
	a = record.Append(a, record.Record{Text: "Secret  TOKEN", TS: 2})
	a = append(a, "\n   \n"...)
	a = append(a, `{"v":2,"text":"future","ts":3}`+"\n"...)
	a = record.Append(a, record.Record{Text: "twice", TS: 4, Src: "claude", Session: "s1"})
	os.WriteFile(filepath.Join(dir, "a.jsonl"), a, 0o600)
	var b []byte
	b = record.Append(b, record.Record{Text: "twice", TS: 4, Src: "claude", Session: "s1"})
	b = record.Append(b, record.Record{Text: "from b", TS: 5})
	b = append(b, `{"v":1,"text":"torn`...) // a write that never finished
	os.WriteFile(filepath.Join(dir, "b.jsonl"), b, 0o600)
	writeRecs(t, filepath.Join(dir, "new.jsonl"), 1, 100)

	hidden := &tombstone.Set{Path: filepath.Join(st.Root, "hidden.json")}
	hidden.Add("secret token")
	before := visible(t, st, hidden)
	p, err := PlanProject(st, hash, Options{Keep: 1, Hidden: hidden})
	if err != nil || !p.Runs() {
		t.Fatalf("%+v %v", p, err)
	}
	rep := Run(p, Options{Keep: 1, Hidden: hidden})
	if rep.Failed() {
		t.Fatalf("errors: %+v", rep.Errors)
	}
	if rep.Merged != 2 || rep.Written != 3 || rep.Hidden != 1 || rep.Duplicates != 1 || rep.Malformed != 1 || rep.Torn != 1 {
		t.Fatalf("report %+v", rep)
	}
	got, err := os.ReadFile(rep.Compact)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"v":1,"text":"keep me","ts":1}
{"v":2,"text":"future","ts":3}
{"v":1,"text":"twice","ts":4,"src":"claude","session":"s1"}
{"v":1,"text":"from b","ts":5}
`
	if string(got) != want {
		t.Fatalf("compact file:\n%s\nwant:\n%s", got, want)
	}
	if bytes.Contains(got, []byte("TOKEN")) {
		t.Fatal("hidden prompt copied")
	}
	if names := dirNames(t, dir); !slices.Equal(names, []string{filepath.Base(rep.Compact), "new.jsonl"}) {
		t.Fatalf("folder holds %v", names)
	}
	fi, _ := os.Stat(rep.Compact)
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("compact file mode %v", fi.Mode())
	}
	if after := visible(t, st, hidden); !slices.Equal(before, after) {
		t.Fatalf("visible changed:\n%v\n%v", before, after)
	}
}

// TestRerunDoesNotGrow: a kill between commit and removal leaves the
// compact file and every claim; the next run must not double the lines.
func TestRerunDoesNotGrow(t *testing.T) {
	st, dir := newStore(t)
	for i := range 4 {
		writeRecs(t, filepath.Join(dir, fmt.Sprintf("f%d.jsonl", i)), 50, int64(i*1000))
	}
	before := visible(t, st, nil)
	p, _ := PlanProject(st, hash, Options{Keep: 1})
	// Simulate a kill after the commit: put back a copy of every claim.
	hookAfterCommit = func(claims []string) {
		for _, c := range claims {
			data, _ := os.ReadFile(c)
			os.WriteFile(c+".keep", data, 0o600)
		}
	}
	Run(p, Options{Keep: 1})
	hookAfterCommit = nil
	for _, n := range dirNames(t, dir) {
		if strings.HasSuffix(n, ".keep") {
			os.Rename(filepath.Join(dir, n), filepath.Join(dir, strings.TrimSuffix(n, ".keep")))
		}
	}
	if len(dirNames(t, dir)) != 5 { // compact + 3 claims + f3
		t.Fatalf("setup: %v", dirNames(t, dir))
	}
	p, _ = PlanProject(st, hash, Options{Keep: 1})
	rep := Run(p, Options{Keep: 1})
	if rep.Failed() || rep.Written != 150 || rep.Duplicates != 150 {
		t.Fatalf("second run %+v", rep)
	}
	if after := visible(t, st, nil); !slices.Equal(before, after) {
		t.Fatal("visible changed")
	}
	if n := len(dirNames(t, dir)); n != 2 {
		t.Fatalf("folder holds %v", dirNames(t, dir))
	}
}

func appendTo(t *testing.T, path string, b []byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(b); err != nil {
		t.Fatal(err)
	}
}

func TestLateLines(t *testing.T) {
	st, dir := newStore(t)
	for i := range 3 {
		writeRecs(t, filepath.Join(dir, fmt.Sprintf("f%d.jsonl", i)), 2, int64(i*1000))
	}
	late := record.Marshal(record.Record{Text: "late one", TS: 7})
	inBetween := record.Marshal(record.Record{Text: "in between", TS: 8})
	var held *os.File
	hookAfterCommit = func(claims []string) {
		// A writer appends a complete line and half of another to the
		// oldest claim, and keeps it open.
		appendTo(t, claims[0], append(late, inBetween[:5]...))
		var err error
		held, err = os.OpenFile(claims[0], os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			t.Fatal(err)
		}
	}
	hookAfterRemove = func(claim string) {
		if held != nil { // it finishes its line after the removal
			held.Write(inBetween[5:])
			held.Close()
			held = nil
		}
	}
	defer func() { hookAfterCommit, hookAfterRemove = nil, nil }()
	p, _ := PlanProject(st, hash, Options{Keep: 1})
	rep := Run(p, Options{Keep: 1})
	if rep.Failed() || rep.Late != 2 || rep.Merged != 2 || rep.Torn != 0 {
		t.Fatalf("report %+v", rep)
	}
	got, _ := os.ReadFile(rep.Compact)
	if !bytes.Contains(got, late) || !bytes.Contains(got, inBetween) || !bytes.HasSuffix(got, inBetween) {
		t.Fatalf("compact file lacks the late lines:\n%s", got)
	}
}

func TestLateAppendFailsClaimStays(t *testing.T) {
	st, dir := newStore(t)
	for i := range 3 {
		writeRecs(t, filepath.Join(dir, fmt.Sprintf("f%d.jsonl", i)), 2, int64(i*1000))
	}
	late := record.Marshal(record.Record{Text: "late one", TS: 7})
	var claim0 string
	var want []byte
	hookAfterCommit = func(claims []string) {
		claim0 = claims[0]
		appendTo(t, claim0, late)
		want, _ = os.ReadFile(claim0)
	}
	hookAppend = func(path string, b []byte) error { return errors.New("no space left on device") }
	defer func() { hookAfterCommit, hookAppend = nil, nil }()
	before := visible(t, st, nil)
	p, _ := PlanProject(st, hash, Options{Keep: 1})
	rep := Run(p, Options{Keep: 1})
	if !rep.Failed() || rep.Merged != 1 || !slices.Equal(rep.ClaimsLeft, []string{claim0}) {
		t.Fatalf("report %+v", rep)
	}
	got, err := os.ReadFile(claim0)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("the claim lost bytes: %v\n%q\nwant\n%q", err, got, want)
	}
	c, _ := os.ReadFile(rep.Compact)
	if bytes.Contains(c, late) || !bytes.HasSuffix(c, []byte("\n")) {
		t.Fatalf("compact file:\n%s", c)
	}
	after := visible(t, st, nil)
	if !slices.Contains(after, "7 late one") || len(after) != len(before)+1 {
		t.Fatalf("visible after: %v", after)
	}
}

func TestAppendAfterRemovalFailsGoesToCarry(t *testing.T) {
	st, dir := newStore(t)
	for i := range 3 {
		writeRecs(t, filepath.Join(dir, fmt.Sprintf("f%d.jsonl", i)), 2, int64(i*1000))
	}
	line := record.Marshal(record.Record{Text: "during removal", TS: 9})
	var held *os.File
	hookAfterCommit = func(claims []string) {
		held, _ = os.OpenFile(claims[0], os.O_WRONLY|os.O_APPEND, 0)
	}
	hookAfterRemove = func(string) {
		if held != nil {
			held.Write(line)
			held.Close()
			held = nil
			hookAppend = func(string, []byte) error { return errors.New("input/output error") }
		}
	}
	defer func() { hookAfterCommit, hookAfterRemove, hookAppend = nil, nil, nil }()
	p, _ := PlanProject(st, hash, Options{Keep: 1})
	rep := Run(p, Options{Keep: 1})
	if len(rep.Carries) != 1 || rep.Failed() {
		t.Fatalf("report %+v", rep)
	}
	if !strings.HasPrefix(filepath.Base(rep.Carries[0]), "f0.jsonl.carry-") || store.Classify(filepath.Base(rep.Carries[0])) != store.Carry {
		t.Fatalf("carry file %s", rep.Carries[0])
	}
	got, _ := os.ReadFile(rep.Carries[0])
	if !bytes.Equal(got, line) {
		t.Fatalf("carry holds %q", got)
	}
	if !slices.Contains(visible(t, st, nil), "9 during removal") {
		t.Fatal("line lost")
	}
}

func TestLeftoverClaimAndStaleTemp(t *testing.T) {
	st, dir := newStore(t)
	leftover := filepath.Join(dir, "f0.jsonl.gc-1-abcdef01.jsonl")
	writeRecs(t, leftover, 3, 0)
	writeRecs(t, filepath.Join(dir, "f1.jsonl"), 3, 1000)
	writeRecs(t, filepath.Join(dir, "f2.jsonl"), 3, 2000)
	// A temp file of a dead process, and one of a live one (this test).
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skip("no 'true' to get a dead pid:", err)
	}
	dead := filepath.Join(dir, ".compact-1-aa.jsonl.tmp-"+strconv.Itoa(cmd.Process.Pid)+"-00ff")
	live := filepath.Join(dir, ".compact-1-bb.jsonl.tmp-"+strconv.Itoa(os.Getppid())+"-00ff")
	os.WriteFile(dead, []byte("x"), 0o600)
	os.WriteFile(live, []byte("x"), 0o600)
	before := visible(t, st, nil)
	p, _ := PlanProject(st, hash, Options{Keep: 1})
	if got := names(p.Merge); !slices.Equal(got, []string{"f0.jsonl.gc-1-abcdef01.jsonl", "f1.jsonl"}) {
		t.Fatalf("merge %v", got)
	}
	rep := Run(p, Options{Keep: 1})
	if rep.Failed() || rep.Stale != 1 || rep.Merged != 2 {
		t.Fatalf("report %+v", rep)
	}
	if _, err := os.Stat(dead); err == nil {
		t.Fatal("stale temp file kept")
	}
	if _, err := os.Stat(live); err != nil {
		t.Fatal("temp file of a live process removed")
	}
	for _, n := range dirNames(t, dir) {
		if strings.Contains(n, ".gc-") {
			t.Fatalf("claim left: %s", n)
		}
	}
	if after := visible(t, st, nil); !slices.Equal(before, after) {
		t.Fatal("visible changed")
	}
}

func TestUnreadableLeftAlone(t *testing.T) {
	st, dir := newStore(t)
	for i := range 3 {
		writeRecs(t, filepath.Join(dir, fmt.Sprintf("f%d.jsonl", i)), 2, int64(i*1000))
	}
	os.Mkdir(filepath.Join(dir, "d.jsonl"), 0o700)
	p, _ := PlanProject(st, hash, Options{Keep: 1})
	if p.Files != 4 || len(p.Unreadable) != 1 || len(p.Merge) != 2 {
		t.Fatalf("plan %+v", p)
	}
	rep := Run(p, Options{Keep: 1})
	if !rep.Failed() || rep.Merged != 2 {
		t.Fatalf("report %+v", rep)
	}
	if fi, err := os.Stat(filepath.Join(dir, "d.jsonl")); err != nil || !fi.IsDir() {
		t.Fatal("the folder named like a store file was touched")
	}
}

func TestDryRunChangesNothing(t *testing.T) {
	st, dir := newStore(t)
	for i := range 4 {
		writeRecs(t, filepath.Join(dir, fmt.Sprintf("f%d.jsonl", i)), 2, int64(i*1000))
	}
	before := dirNames(t, dir)
	p, _ := PlanProject(st, hash, Options{Keep: 1})
	rep := DryRun(p, Options{Keep: 1})
	if rep.Merged != 3 || rep.Written != 6 || rep.Compact != "" {
		t.Fatalf("report %+v", rep)
	}
	if after := dirNames(t, dir); !slices.Equal(before, after) {
		t.Fatalf("dry run changed the folder: %v", after)
	}
}

// A claim left by a killed run is merged even when its entries are the
// newest: its original name already serves a fresh file.
func TestLeftoverClaimAlwaysMerged(t *testing.T) {
	st, dir := newStore(t)
	for i := range 5 {
		writeRecs(t, filepath.Join(dir, fmt.Sprintf("f%d.jsonl", i)), 2, int64(i*100))
	}
	claim := "live.jsonl.gc-1700000000000-0a1b2c3d.jsonl"
	writeRecs(t, filepath.Join(dir, claim), 2, 10_000)
	p, err := PlanProject(st, hash, opts(5, 100, 2))
	if err != nil || !p.Runs() {
		t.Fatalf("plan does not run: %+v %v", p, err)
	}
	got := names(p.Merge)
	want := []string{"f0.jsonl", "f1.jsonl", "f2.jsonl", claim}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("merge %v, want %v (oldest first; the two newest plain files kept)", got, want)
	}
	before := visible(t, st, nil)
	if rep := Run(p, Options{}); len(rep.Errors) > 0 {
		t.Fatalf("run: %v", rep.Errors)
	}
	if after := visible(t, st, nil); strings.Join(after, "\n") != strings.Join(before, "\n") {
		t.Fatalf("visible changed:\n%v\n%v", before, after)
	}
	if _, err := os.Stat(filepath.Join(dir, claim)); !os.IsNotExist(err) {
		t.Fatalf("the leftover claim is still there: %v", err)
	}
}

func TestMachinesOwnFilesOnly(t *testing.T) {
	st, dir := newStore(t)
	st.Machine = "a"
	for _, n := range []string{"x@a.jsonl", "y@a.jsonl", "cur@a.jsonl", "x@b.jsonl", "y@b.jsonl", "z@b.jsonl",
		"x@a.sync-conflict-20261201-101010-ABCDEFG.jsonl", "x@b.sync-conflict-20261201-101010-ABCDEFG.jsonl", "old.jsonl"} {
		writeRecs(t, filepath.Join(dir, n), 1, 10)
	}
	// b has files at the root: the files without a machine id are not a's.
	os.WriteFile(filepath.Join(st.Root, "hidden@b.json"), []byte("[]"), 0o600)
	p, err := PlanProject(st, hash, Options{Keep: 0, Current: CurrentName("cur")})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"x@a.jsonl", "x@a.sync-conflict-20261201-101010-ABCDEFG.jsonl", "y@a.jsonl"}
	if got := names(p.Merge); !slices.Equal(slices.Sorted(slices.Values(got)), want) {
		t.Fatalf("merge %v, want %v", got, want)
	}
	if p.Foreign != 5 || p.Files != 4 {
		t.Fatalf("foreign %d, files %d: want 5 and 4", p.Foreign, p.Files)
	}
	rep := Run(p, Options{})
	if rep.Failed() || !strings.HasSuffix(rep.Compact, "@a.jsonl") || store.MachineOf(filepath.Base(rep.Compact)) != "a" {
		t.Fatalf("report %+v", rep)
	}
	for _, n := range []string{"x@b.jsonl", "y@b.jsonl", "z@b.jsonl", "x@b.sync-conflict-20261201-101010-ABCDEFG.jsonl", "old.jsonl", "cur@a.jsonl"} {
		if _, err := os.Stat(filepath.Join(dir, n)); err != nil {
			t.Errorf("%s: %v", n, err)
		}
	}
}

// A claim left by a killed run is merged by the next run even below the
// thresholds, and alone: nothing else is merged then.
func TestLeftoverClaimBelowThresholds(t *testing.T) {
	st, dir := newStore(t)
	for i := range 2 {
		writeRecs(t, filepath.Join(dir, fmt.Sprintf("f%d.jsonl", i)), 2, int64(i*100))
	}
	claim := "f9.jsonl.gc-1700000000000-0a1b2c3d.jsonl"
	writeRecs(t, filepath.Join(dir, claim), 2, 50)
	p, err := PlanProject(st, hash, opts(5, 100, 0))
	if err != nil || !p.Runs() || strings.Join(names(p.Merge), " ") != claim {
		t.Fatalf("plan merges %v (%v), want the claim alone", names(p.Merge), err)
	}
	before := visible(t, st, nil)
	if rep := Run(p, Options{}); len(rep.Errors) > 0 {
		t.Fatalf("run: %v", rep.Errors)
	}
	if after := visible(t, st, nil); strings.Join(after, "\n") != strings.Join(before, "\n") {
		t.Fatalf("visible changed:\n%v\n%v", before, after)
	}
	for _, n := range dirNames(t, dir) {
		if strings.Contains(n, ".gc-") {
			t.Fatalf("claim left: %s", n)
		}
	}
	for _, n := range []string{"f0.jsonl", "f1.jsonl"} {
		if _, err := os.Stat(filepath.Join(dir, n)); err != nil {
			t.Errorf("%s merged below the thresholds: %v", n, err)
		}
	}
}
