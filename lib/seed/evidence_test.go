package seed

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"hist/lib/record"
	"hist/lib/store"
	"hist/lib/transcript"
)

// runPi imports ps (one source, pi) into st and fails the test on an
// error.
func runPi(t *testing.T, st store.Store, ps []transcript.Prompt) *Report {
	t.Helper()
	rep, err := New(Options{Store: st}).Bootstrap([]Source{emitting(t, "pi", ps)})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// texts lists the records of the project's store files as "text ts",
// sorted.
func texts(t *testing.T, st store.Store, cwd string) []string {
	t.Helper()
	files, err := st.ProjectFiles(store.Hash(cwd))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range files {
		for _, r := range readRecords(t, f.Path) {
			out = append(out, fmt.Sprint(r.Text, " ", r.TS))
		}
	}
	slices.Sort(out)
	return out
}

// A live capture stands for one prompt event: the one closest in time,
// of its session; a prompt typed again seconds later is imported,
// whether a run meets the two together or one after the other (as a
// transcript holds them: the first one first).
func TestLiveByEvidence(t *testing.T) {
	p := func(text string, ts int64, session, key string) transcript.Prompt {
		return transcript.Prompt{Text: text, TS: ts, Cwd: "/p/a", Session: session, Src: "pi", Key: key}
	}
	first, again := p("yes", 10_000, "s1", "k1"), p("Yes ", 13_000, "s1", "k2")
	other := p("yes", 30_000, "s2", "k3") // another session: not s1's capture's
	live := []record.Record{{Text: "yes", TS: 10_200, Session: "s1"}, {Text: "yes", TS: 30_100, Session: "s1"}}
	want := []string{"Yes  13000", "yes 10200", "yes 30000", "yes 30100"}
	for _, runs := range [][][]transcript.Prompt{
		{{first, again, other}},
		{{first}, {first, again}, {first, again, other}},
		{{first, again}, {first, again, other}},
	} {
		st := store.Store{Root: t.TempDir()}
		path := filepath.Join(st.ProjectDir(store.Hash("/p/a")), store.CaptureFile("live", ""))
		for _, r := range live {
			if err := store.Append(path, record.Marshal(r)); err != nil {
				t.Fatal(err)
			}
		}
		live := 0
		for _, ps := range runs {
			for _, f := range runPi(t, st, ps).Files {
				live += f.Live
			}
		}
		if got := texts(t, st, "/p/a"); !slices.Equal(got, want) || live != 1 {
			t.Errorf("%d runs: %q (%d captured live), want %q (1)", len(runs), got, live, want)
		}
	}
}

// Imports after the first append to one file per agent: a hundred runs
// of one new prompt each leave the seed file and one import file.
func TestOneImportFile(t *testing.T) {
	st := store.Store{Root: t.TempDir(), Machine: "m1"}
	var ps []transcript.Prompt
	for i := range 100 {
		ps = append(ps, transcript.Prompt{Text: fmt.Sprint("prompt ", i), TS: int64(1000 * (i + 1)), Cwd: "/p/a", Src: "pi", Key: fmt.Sprint(i)})
		runPi(t, st, ps)
	}
	ents, err := os.ReadDir(st.ProjectDir(store.Hash("/p/a")))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if !slices.Equal(names, []string{"import-pi@m1.jsonl", "seed@m1.jsonl"}) {
		t.Fatalf("project folder: %q", names)
	}
	if got := texts(t, st, "/p/a"); len(got) != 100 {
		t.Errorf("%d records, want 100", len(got))
	}
}

// A run killed after its records are in place and before their keys
// reach the ledger: the next run finds the records and adds the keys,
// importing nothing twice.
func TestRecordsBeforeLedger(t *testing.T) {
	st := store.Store{Root: t.TempDir(), Machine: "m1"}
	ps := []transcript.Prompt{{Text: "one", TS: 1000, Cwd: "/p/a", Session: "s", Src: "pi", Key: "1"}}
	runPi(t, st, ps)
	ps = append(ps, transcript.Prompt{Text: "two", TS: 2000, Cwd: "/p/a", Session: "s", Src: "pi", Key: "2"})
	before, _ := os.ReadFile(st.Ledger())
	runPi(t, st, ps)
	if err := os.WriteFile(st.Ledger(), before, 0o600); err != nil { // the keys lost
		t.Fatal(err)
	}
	os.Remove(st.State())
	rep := runPi(t, st, ps)
	if f := rep.Files[0]; f.Status != FileNone || f.Live != 1 {
		t.Errorf("after the lost keys: %+v", f)
	}
	if got := texts(t, st, "/p/a"); !slices.Equal(got, []string{"one 1000", "two 2000"}) {
		t.Errorf("records %q", got)
	}
	if rep := runPi(t, st, ps); rep.Files[0].Known != 2 {
		t.Errorf("the keys were not added: %+v", rep.Files[0])
	}
}
