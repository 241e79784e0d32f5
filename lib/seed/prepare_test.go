package seed

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"hist/lib/store"
	"hist/lib/tombstone"
	"hist/lib/transcript"
)

// manyPrompts is a stream that fills many batches (by count and by size)
// and holds every case the collector tells apart: duplicates, prompts that
// are command-like or blank, blank only once redacted, hidden (as typed or
// redacted), without a cwd, approximate times, and texts that need escapes.
func manyPrompts() []transcript.Prompt {
	var ps []transcript.Prompt
	big := strings.Repeat("a long pasted log line with \"quotes\"\tand\\slashes\n", 2000)
	for i := range 3000 {
		cwd := fmt.Sprintf("/proj/p%02d", i%7)
		p := transcript.Prompt{Text: fmt.Sprintf("prompt %d of the run", i), TS: int64(1000 + i), Cwd: cwd, Session: "s", Src: "codex"}
		switch i % 13 {
		case 1:
			p.Text = fmt.Sprintf("PROMPT %d  of the run", i-1) // same identity and time as the one before
			p.TS--
			p.Cwd = fmt.Sprintf("/proj/p%02d", (i-1)%7)
		case 2:
			p.Text = "/model gpt"
		case 3:
			p.Text = "hidden prompt " + fmt.Sprint(i%3)
		case 4:
			p.Text = fmt.Sprintf("use key AKIAIOSFODNN7EXAMP%02d please", i%10)
		case 5:
			p.Cwd = ""
		case 6:
			p.Approx = true
		case 7:
			p.Text = fmt.Sprintf("%d: %s", i, big) // ~100 KB: batches fill by size too
		case 8:
			p.Text = "ghp_" + strings.Repeat("A", 36) // only a secret: "[REDACTED:…]" is kept
		case 9:
			p.Text = fmt.Sprintf("控制\x00字符 %d \x7f", i)
		}
		ps = append(ps, p)
	}
	return ps
}

// TestPrepareParallelEqualsSerial seeds the same stream with one CPU (every
// batch prepared inline) and with several (batches prepared by workers),
// spilling often, and asserts that the seed files and the report agree
// byte for byte.
func TestPrepareParallelEqualsSerial(t *testing.T) {
	defer func(old int64) { spillAt = old }(spillAt)
	spillAt = 64 << 10
	ps := manyPrompts()
	run := func(procs int, dryRun bool) (map[string]string, *Report) {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
		st := store.Store{Root: t.TempDir()}
		if err := os.MkdirAll(st.Root, 0o700); err != nil {
			t.Fatal(err)
		}
		hidden, err := tombstone.Load(st.Hidden())
		if err != nil {
			t.Fatal(err)
		}
		hidden.Add("hidden prompt 1")
		hidden.Add("use key AKIAIOSFODNN7EXAMP03 please") // deleted as typed
		if err := hidden.Save(); err != nil {
			t.Fatal(err)
		}
		rep, err := New(Options{Store: st, DryRun: dryRun}).Bootstrap([]Source{emitting(t, "codex", ps)})
		if err != nil {
			t.Fatal(err)
		}
		files := map[string]string{}
		filepath.WalkDir(filepath.Join(st.Root, "projects"), func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				b, _ := os.ReadFile(p)
				rel, _ := filepath.Rel(st.Root, p)
				files[rel] = string(b)
			}
			return nil
		})
		// Only the temp folders may differ.
		for i := range rep.Sources {
			rep.Sources[i].Elapsed, rep.Sources[i].Root = 0, ""
		}
		for i := range rep.Files {
			rep.Files[i].Path = strings.TrimPrefix(rep.Files[i].Path, st.Root)
		}
		return files, rep
	}
	for _, dry := range []bool{false, true} {
		serial, srep := run(1, dry)
		if !dry {
			if len(serial) != 7 {
				t.Fatalf("%d seed files, want 7", len(serial))
			}
			all := strings.Join(mapValues(serial), "")
			for _, bad := range []string{"hidden prompt 1", "AKIAIOSFODNN7EXAMP", "/model", "ghp_"} {
				if strings.Contains(all, bad) {
					t.Fatalf("a seed holds %q", bad)
				}
			}
			if !strings.Contains(all, "[REDACTED:") || !strings.Contains(all, "hidden prompt 0") {
				t.Fatal("redacted or ordinary prompts are missing")
			}
		}
		if srep.Sources[0].NoCwd == 0 || srep.Sources[0].Approx == 0 || srep.Files[0].Dupes == 0 || srep.Files[0].Hidden == 0 || srep.Files[1].Dupes == 0 {
			t.Fatalf("the stream does not exercise every case: %+v %+v", srep.Sources[0], srep.Files[0])
		}
		for _, procs := range []int{2, 4} {
			got, rep := run(procs, dry)
			if !reflect.DeepEqual(got, serial) {
				t.Fatalf("dry-run %v, %d CPUs: the seed files differ from one CPU's", dry, procs)
			}
			if !reflect.DeepEqual(rep, srep) {
				t.Fatalf("dry-run %v, %d CPUs: report\n%+v\nwant\n%+v", dry, procs, rep, srep)
			}
		}
	}
}

func mapValues(m map[string]string) []string {
	var out []string
	for _, v := range m {
		out = append(out, v)
	}
	return out
}
