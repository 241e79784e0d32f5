package testscripts

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"hist/lib/agent"
	"hist/lib/record"
	"hist/lib/seed"
	"hist/lib/store"
)

// TestImportCutAnywhere: importing a transcript in two pieces, cut at
// any line boundary or in the middle of any line (as an agent writing it
// leaves it between two runs), gives the store that importing it whole
// gives: every prompt once, with its time, source and session, in its
// project. Each agent's real transcripts (testdata/seed) are cut, one file
// at a time, at every such point; so are transcripts that hold the cases
// that a piecewise import gets wrong most easily: prompts that get their
// cwd from a later record, and a prompt typed again seconds later in the
// same session (which an import must not take for a live copy of the
// first).
func TestImportCutAnywhere(t *testing.T) {
	for _, fx := range []struct{ name, from, dest string }{
		{"pi", "pi", ".pi/agent"},
		{"claude", "claude", ".claude"},
		{"claude-tui", "claude", ".claude"},
		{"codex", "codex", ".codex"},
		{"codex-tui", "codex", ".codex"},
	} {
		t.Run(fx.name, func(t *testing.T) {
			cutEverywhere(t, fx.from, fx.dest, readTree(t, filepath.Join("testdata", "seed", fx.name)))
		})
	}
	for name, tc := range cutCases {
		t.Run(name, func(t *testing.T) {
			cutEverywhere(t, tc.from, "", tc.files)
		})
	}
}

// cutCases are the hand-made transcripts of TestImportCutAnywhere (paths
// under HOME).
var cutCases = map[string]struct {
	from  string
	files map[string]string
}{
	"claude cwd later": {"claude", map[string]string{".claude/projects/p/s1.jsonl": `{"type":"user","uuid":"u1","sessionId":"s1","timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"typed before any cwd"}}
{"type":"assistant","uuid":"a1","sessionId":"s1","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"assistant","content":"ok"}}
{"type":"user","uuid":"u2","sessionId":"s1","timestamp":"2026-01-01T00:00:03.000Z","message":{"role":"user","content":"also before it"}}
{"type":"system","uuid":"x1","sessionId":"s1","cwd":"/p/late","timestamp":"2026-01-01T00:00:04.000Z"}
{"type":"user","uuid":"u3","sessionId":"s1","timestamp":"2026-01-01T00:00:05.000Z","message":{"role":"user","content":"after it"}}
`}},
	"pi typed again": {"pi", map[string]string{".pi/agent/sessions/x/s1.jsonl": `{"type":"session","version":3,"id":"s1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p/again"}
{"type":"message","id":"a1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"yes","timestamp":1767225601000}}
{"type":"message","id":"a2","parentId":"a1","timestamp":"2026-01-01T00:00:03.000Z","message":{"role":"user","content":"Yes ","timestamp":1767225603000}}
{"type":"message","id":"a3","parentId":"a2","timestamp":"2026-01-01T00:00:04.000Z","message":{"role":"user","content":"yes","timestamp":1767225604000}}
`}},
	"claude typed again": {"claude", map[string]string{".claude/projects/p/s2.jsonl": `{"type":"user","uuid":"v1","sessionId":"s2","cwd":"/p/claude","timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"run the tests"}}
{"type":"user","uuid":"v2","sessionId":"s2","cwd":"/p/claude","timestamp":"2026-01-01T00:00:02.500Z","message":{"role":"user","content":"run the tests"}}
`}},
}

// cutEverywhere checks, for every file of files (path under HOME ->
// content) and every point to cut it at, that importing the tree with the
// file cut there, then whole, gives the store importing it whole gives.
func cutEverywhere(t *testing.T, from, dest string, files map[string]string) {
	whole := importTree(t, from, dest, files, "", 0)
	if len(whole) == 0 {
		t.Fatal("the whole import found no prompt")
	}
	cuts := 0
	for _, path := range slices.Sorted(mapKeys(files)) {
		for _, at := range cutPoints(files[path]) {
			got := importTree(t, from, dest, files, path, at)
			cuts++
			if !slices.Equal(got, whole) {
				t.Fatalf("%s cut at byte %d, then whole:\n%s\nwhole at once:\n%s", path, at, short(got), short(whole))
			}
		}
	}
	t.Logf("%d records, the same after each of %d cuts", len(whole), cuts)
}

// short is records, each cut to 100 bytes, one a line.
func short(records []string) string {
	var b strings.Builder
	for _, r := range records {
		b.WriteString(r[:min(len(r), 100)] + "\n")
	}
	return b.String()
}

func mapKeys(m map[string]string) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// cutPoints are the offsets after each line and in the middle of each.
func cutPoints(data string) []int {
	var at []int
	for start := 0; start < len(data); {
		end := strings.IndexByte(data[start:], '\n')
		if end < 0 {
			end = len(data) - start - 1
		}
		at = append(at, start+(end+1)/2, start+end+1)
		start += end + 1
	}
	return at
}

// importTree writes files (with cut's content cut at byte at, when cut is
// not "") under a fresh HOME and store, imports, and, after a cut, writes
// the file whole and imports again. It returns the store's records as
// "project text ts src session", sorted.
func importTree(t *testing.T, from, dest string, files map[string]string, cut string, at int) []string {
	t.Helper()
	dir := memDir(t)
	home := filepath.Join(dir, "home")
	st := store.Store{Root: filepath.Join(dir, "store"), Machine: "m1"}
	write := func(whole bool) {
		for path, data := range files {
			if path == cut && !whole {
				data = data[:at]
			}
			p := filepath.Join(home, dest, path)
			if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
	write(cut == "")
	runImport(t, st, from, home)
	if cut != "" {
		write(true)
		runImport(t, st, from, home)
	}
	return storeRecords(t, st)
}

// runImport imports from's transcripts under home into st, as hist-seed
// --all-projects does, at a time long after every prompt.
func runImport(t *testing.T, st store.Store, from, home string) {
	t.Helper()
	a, _ := agent.Lookup(from)
	src := seed.Source{Name: from, Root: a.Root(func(string) string { return "" }, home), Scan: a.Scan}
	r := seed.New(seed.Options{Store: st, Now: func() time.Time { return time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC) }})
	rep, err := r.Bootstrap([]seed.Source{src})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range rep.Sources {
		if s.Status != seed.SourceRead && s.Status != seed.SourceMissing {
			t.Fatalf("%s: %s %s", s.Name, s.Status, s.Err)
		}
	}
}

// storeRecords lists every record of the store's project files as
// "project text ts src session", sorted.
func storeRecords(t *testing.T, st store.Store) []string {
	t.Helper()
	var out []string
	root := st.Projects()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if os.IsNotExist(err) {
			return nil
		}
		if err != nil || d.IsDir() || store.Classify(d.Name()) == store.NotStore {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		project := filepath.Base(filepath.Dir(path))
		_, err = record.Scan(bytes.NewReader(data), func(l *record.Line) error {
			r := l.Record()
			out = append(out, fmt.Sprintf("%s %q %d %s %s", project, r.Text, r.TS, r.Src, r.Session))
			return nil
		})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

// memDir is a new temp folder, in memory (/dev/shm) where there is one:
// a cut is two imports, each fsyncing what it writes.
func memDir(t *testing.T) string {
	dir, err := os.MkdirTemp("/dev/shm", "hist-cut-")
	if err != nil {
		return t.TempDir()
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// readTree reads the files under dir: path under dir -> content.
func readTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		rel, _ := filepath.Rel(dir, path)
		out[rel] = string(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
