package store

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"hist/lib/store/storetest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"hist/lib/record"
)

func TestDefaultRoot(t *testing.T) {
	get := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	cases := []struct {
		env  map[string]string
		want string
	}{
		{nil, "/home/u/.pi/agent/history"},
		{map[string]string{"PI_CODING_AGENT_DIR": "/agent"}, "/agent/history"},
		{map[string]string{"PI_CODING_AGENT_DIR": "~/a"}, "/home/u/a/history"},
		{map[string]string{"PI_CODING_AGENT_DIR": "~"}, "/home/u/history"},
		{map[string]string{"PI_CODING_AGENT_DIR": ""}, "/home/u/.pi/agent/history"},
	}
	for _, c := range cases {
		if got := DefaultRoot(get(c.env), "/home/u"); got != c.want {
			t.Errorf("DefaultRoot(%v) = %s, want %s", c.env, got, c.want)
		}
	}
	if got := DefaultConfigHome(get(nil), "/home/u"); got != "/home/u/.pi/gentle-ai" {
		t.Errorf("DefaultConfigHome = %s", got)
	}
	if got := DefaultConfigHome(get(map[string]string{"GENTLE_PI_CONFIG_HOME": "~/cfg"}), "/home/u"); got != "/home/u/cfg" {
		t.Errorf("DefaultConfigHome(~/cfg) = %s", got)
	}
}

func TestCanonicalAndHash(t *testing.T) {
	dir := t.TempDir()
	real, _ := filepath.EvalSymlinks(dir)
	os.Mkdir(filepath.Join(real, "app"), 0o700)
	os.Symlink(filepath.Join(real, "app"), filepath.Join(real, "link"))
	for _, in := range []string{filepath.Join(dir, "app"), filepath.Join(dir, "link"), filepath.Join(dir, "link", "."), filepath.Join(dir, "x", "..", "app") + "/"} {
		got, err := Canonical(in)
		if err != nil || got != filepath.Join(real, "app") {
			t.Errorf("Canonical(%s) = %s, %v", in, got, err)
		}
	}
	if got, _ := Canonical(filepath.Join(real, "nope", "..", "gone")); got != filepath.Join(real, "gone") {
		t.Errorf("Canonical of a missing folder = %s", got)
	}
	wd, _ := os.Getwd()
	if got, _ := Canonical("."); got != mustEval(wd) {
		t.Errorf("Canonical(.) = %s", got)
	}
	sum := sha256.Sum256([]byte("/home/u/src/app"))
	if h := Hash("/home/u/src/app"); h != hex.EncodeToString(sum[:])[:16] || len(h) != 16 {
		t.Errorf("Hash = %s", h)
	}
}

func mustEval(p string) string {
	r, err := filepath.EvalSymlinks(p)
	if err != nil {
		return p
	}
	return r
}

func TestClassifyAndOrigin(t *testing.T) {
	cases := []struct {
		name   string
		kind   Kind
		origin string
	}{
		{"0b1c2d3e-aaaa.jsonl", Capture, "0b1c2d3e-aaaa.jsonl"},
		{"seed.jsonl", Seed, "seed.jsonl"},
		{"seed-claude.jsonl", Seed, "seed-claude.jsonl"},
		{"compact-1700000000000-ab12.jsonl", Compact, "compact-1700000000000-ab12.jsonl"},
		{"x.jsonl.carry-1700000000000-ab12.jsonl", Carry, "x.jsonl"},
		{"x.carry-1700000000000-ab12.jsonl", Carry, "x.jsonl"},
		{"seed.jsonl.carry-1-2.jsonl", Carry, "seed.jsonl"},
		{"x.jsonl.gc-1700000000000-ab12.jsonl", Claim, "x.jsonl"},
		{"x.jsonl.gc-1-a.jsonl.carry-2-b.jsonl", Carry, "x.jsonl"},
		{"x.jsonl.carry-1-a.jsonl.gc-2-b.jsonl", Claim, "x.jsonl"}, // a claim of a carry
		{"seed.jsonl.carry-1-a.jsonl.gc-2-b.jsonl", Claim, "seed.jsonl"},
		{"history-global.jsonl", GlobalFile, "history-global.jsonl"},
		{"history-global.jsonl.carry-1-2.jsonl", Carry, "history-global.jsonl"},
		{".x.jsonl.tmp-123-abcd", NotStore, ""},
		{".hidden.jsonl", NotStore, ""},
		{"notes.txt", NotStore, ""},
		{"x.jsonl.bak", NotStore, ""},
		{"hidden.json", NotStore, ""},
		{"registry.json", NotStore, ""},
	}
	for _, c := range cases {
		if k := Classify(c.name); k != c.kind {
			t.Errorf("Classify(%s) = %v, want %v", c.name, k, c.kind)
		}
		if c.origin != "" {
			if o := Origin(c.name); o != c.origin {
				t.Errorf("Origin(%s) = %s, want %s", c.name, o, c.origin)
			}
		}
	}
	if !IsSeed("seed.jsonl.carry-1-2.jsonl") || !IsSeed("seed-pi.jsonl") || IsSeed("x.jsonl") {
		t.Error("IsSeed")
	}
}

// kindName names a Kind in the tests' listings.
func kindName(k Kind) string {
	return [...]string{"other", "capture", "seed", "import", "compact", "carry", "claim", "global"}[k]
}

func touch(t *testing.T, p string) {
	t.Helper()
	os.MkdirAll(filepath.Dir(p), 0o700)
	if err := os.WriteFile(p, nil, 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestFiles(t *testing.T) {
	s := Store{Root: t.TempDir()}
	for _, p := range []string{
		"projects/aaaa/1.jsonl", "projects/aaaa/seed.jsonl", "projects/aaaa/compact-1-x.jsonl",
		"projects/aaaa/1.jsonl.carry-1-x.jsonl", "projects/aaaa/2.jsonl.gc-1-x.jsonl",
		"projects/aaaa/.1.jsonl.tmp-1-ab", "projects/aaaa/notes.txt",
		"projects/bbbb/2.jsonl", "projects/.trash/3.jsonl",
		"history-global.jsonl", "history-global.jsonl.carry-1-x.jsonl", "other.jsonl", ".history-global.jsonl.tmp-1-ab",
	} {
		touch(t, filepath.Join(s.Root, p))
	}
	os.WriteFile(filepath.Join(s.Root, "projects", "file-not-dir"), nil, 0o600)
	names := func(fs []File) string {
		var out []string
		for _, f := range fs {
			rel, _ := filepath.Rel(s.Root, f.Path)
			out = append(out, rel+":"+f.Project+":"+kindName(f.Kind))
		}
		sort.Strings(out)
		return strings.Join(out, " ")
	}
	got, err := s.Files(Scope{Project: "aaaa"})
	want := "projects/aaaa/1.jsonl.carry-1-x.jsonl:aaaa:carry projects/aaaa/1.jsonl:aaaa:capture projects/aaaa/2.jsonl.gc-1-x.jsonl:aaaa:claim " +
		"projects/aaaa/compact-1-x.jsonl:aaaa:compact projects/aaaa/seed.jsonl:aaaa:seed"
	if err != nil || names(got) != want {
		t.Errorf("project files:\n got %s\nwant %s (%v)", names(got), want, err)
	}
	got, err = s.Files(Scope{All: true})
	want2 := "history-global.jsonl.carry-1-x.jsonl::carry history-global.jsonl::global " + want + " projects/bbbb/2.jsonl:bbbb:capture"
	if err != nil || names(got) != want2 {
		t.Errorf("all files:\n got %s\nwant %s (%v)", names(got), want2, err)
	}
	if got, err := s.Files(Scope{Project: "none"}); err != nil || len(got) != 0 {
		t.Errorf("missing project: %v, %v", got, err)
	}
	if got, err := (Store{Root: filepath.Join(s.Root, "nope")}).Files(Scope{All: true}); err != nil || len(got) != 0 {
		t.Errorf("missing store: %v, %v", got, err)
	}
	if h, _ := s.ProjectHashes(); strings.Join(h, ",") != "aaaa,bbbb" {
		t.Errorf("ProjectHashes = %v", h)
	}
}

func TestPaths(t *testing.T) {
	s := Store{Root: "/r"}
	for got, want := range map[string]string{
		s.Projects(): "/r/projects", s.ProjectDir("h"): "/r/projects/h", s.Global(): "/r/history-global.jsonl",
		s.Hidden(): "/r/hidden.json", s.Registry(): "/r/registry.json", s.Lock(): "/r/.rewrite.lock",
	} {
		if got != want {
			t.Errorf("%s != %s", got, want)
		}
	}
}

func TestAppend(t *testing.T) {
	root := t.TempDir()
	p := filepath.Join(root, "projects", "h", "a.jsonl")
	if err := Append(p, []byte("one\n")); err != nil {
		t.Fatal(err)
	}
	for path, mode := range map[string]os.FileMode{filepath.Join(root, "projects"): 0o700, filepath.Dir(p): 0o700, p: 0o600} {
		if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != mode {
			t.Errorf("%s: %v %v", path, fi.Mode(), err)
		}
	}
	Append(p, []byte("two\n"))
	// A torn last line: the next record starts on a fresh line.
	f, _ := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString("tor")
	f.Close()
	Append(p, []byte("three\n"))
	if data, _ := os.ReadFile(p); string(data) != "one\ntwo\ntor\nthree\n" {
		t.Errorf("file = %q", data)
	}
	// Not a regular file: refused.
	dir := filepath.Join(root, "projects", "h", "d.jsonl")
	os.Mkdir(dir, 0o700)
	if err := Append(dir, []byte("x\n")); err == nil {
		t.Error("appended to a folder")
	}
	fifo := filepath.Join(root, "projects", "h", "f.jsonl")
	if storetest.Mkfifo(fifo) == nil {
		if err := Append(fifo, []byte("x\n")); err == nil {
			t.Error("appended to a FIFO")
		}
	}
	// A file where a folder is expected.
	os.WriteFile(filepath.Join(root, "projects", "file"), nil, 0o600)
	if err := Append(filepath.Join(root, "projects", "file", "a.jsonl"), []byte("x\n")); err == nil {
		t.Error("appended under a file")
	}
}

// TestAppendConcurrent: many writers, each line whole and on its own line.
func TestAppendConcurrent(t *testing.T) {
	p := filepath.Join(t.TempDir(), "a.jsonl")
	const writers, each = 8, 50
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			line := []byte(strings.Repeat(string(rune('a'+w)), 3000) + "\n")
			for range each {
				if err := Append(p, line); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	data, _ := os.ReadFile(p)
	lines := bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n"))
	if len(lines) != writers*each {
		t.Fatalf("%d lines, want %d", len(lines), writers*each)
	}
	for _, l := range lines {
		if len(l) != 3000 || bytes.Count(l, l[:1]) != 3000 {
			t.Fatalf("a line was interleaved or torn: %.20q (len %d)", l, len(l))
		}
	}
}

func TestRegistry(t *testing.T) {
	s := Store{Root: filepath.Join(t.TempDir(), "store")}
	if r := s.LoadRegistry(); len(r) != 0 {
		t.Errorf("missing registry = %v", r)
	}
	if err := s.Register("aaaa", "/home/u/a"); err != nil {
		t.Fatal(err)
	}
	if err := s.Register("bbbb", "/home/u/b <&>"); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(s.Registry())
	if string(data) != "{\n  \"aaaa\": \"/home/u/a\",\n  \"bbbb\": \"/home/u/b <&>\"\n}\n" {
		t.Errorf("registry.json = %q", data)
	}
	fi, _ := os.Stat(s.Registry())
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", fi.Mode())
	}
	// Already right: not rewritten.
	s.Register("aaaa", "/home/u/a")
	fi2, _ := os.Stat(s.Registry())
	if !os.SameFile(fi, fi2) {
		t.Error("registry rewritten though already right")
	}
	// Garbage reads as empty and is rebuilt.
	for _, g := range []string{"{", "null", "[]", `{"a":1}`} {
		os.WriteFile(s.Registry(), []byte(g), 0o600)
		if r := s.LoadRegistry(); len(r) != 0 {
			t.Errorf("garbage %q read as %v", g, r)
		}
	}
	s.Register("cccc", "/c")
	if r := s.LoadRegistry(); len(r) != 1 || r["cccc"] != "/c" {
		t.Errorf("rebuilt registry = %v", r)
	}
}

func BenchmarkAppend(b *testing.B) {
	p := filepath.Join(b.TempDir(), "projects", "h", "a.jsonl")
	line := []byte(`{"v":1,"text":"refactor the store reader so that it streams every file once","ts":1700000000000}` + "\n")
	for b.Loop() {
		if err := Append(p, line); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCaptureAppend is hist-capture's work for one prompt once the
// policy said yes: encode the record, append it to the project's file.
func BenchmarkCaptureAppend(b *testing.B) {
	p := filepath.Join(b.TempDir(), "projects", "h", "a.jsonl")
	rec := record.Record{Text: "fix the flaky test in lib/store/store_test.go and explain the race", TS: 1700000000000}
	for b.Loop() {
		if err := Append(p, record.Marshal(rec)); err != nil {
			b.Fatal(err)
		}
	}
}

// A project folder that is a symbolic link to a folder is a project in
// every scope (the project scope follows it by path); a link to a file or
// a dangling link is not.
func TestProjectHashesFollowsLinkedFolders(t *testing.T) {
	s := Store{Root: t.TempDir()}
	elsewhere := t.TempDir()
	os.MkdirAll(filepath.Join(s.Projects(), "aaaa"), 0o700)
	os.WriteFile(filepath.Join(elsewhere, "a.jsonl"), []byte(`{"v":1,"text":"x","ts":1}`+"\n"), 0o600)
	if err := os.Symlink(elsewhere, filepath.Join(s.Projects(), "bbbb")); err != nil {
		t.Fatal(err)
	}
	os.Symlink(filepath.Join(elsewhere, "a.jsonl"), filepath.Join(s.Projects(), "cccc"))
	os.Symlink(filepath.Join(elsewhere, "gone"), filepath.Join(s.Projects(), "dddd"))
	if h, err := s.ProjectHashes(); err != nil || strings.Join(h, ",") != "aaaa,bbbb" {
		t.Errorf("ProjectHashes = %v, %v", h, err)
	}
	got, err := s.Files(Scope{All: true})
	if err != nil || len(got) != 1 || got[0].Project != "bbbb" {
		t.Errorf("Files(All) = %+v, %v", got, err)
	}
}
