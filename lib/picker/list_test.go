package picker

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"hist/lib/history"
	"hist/lib/record"
	"hist/lib/store"
	"hist/lib/tombstone"
)

// loadAll loads a scope and waits until the list is done.
func loadAll(t *testing.T, st store.Store, sc store.Scope) ([]string, *list) {
	t.Helper()
	hidden, err := tombstone.Load(st.Hidden())
	if err != nil {
		t.Fatal(err)
	}
	l := load(st, sc, hidden, history.Filter{}, time.Now())
	deadline := time.Now().Add(10 * time.Second)
	for {
		if done, _ := l.status(); done {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the list never finished loading")
		}
		time.Sleep(time.Millisecond)
	}
	var texts []string
	for i := range l.ents {
		e, ok := l.at(int32(i))
		if !ok || e.File == "" {
			t.Fatalf("entry %d: %+v %v", i, e, ok)
		}
		texts = append(texts, e.Text)
	}
	return texts, l
}

func writeFile(t *testing.T, path string, recs ...record.Record) {
	t.Helper()
	var b []byte
	for _, r := range recs {
		b = record.Append(b, r)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// A prompt whose newest copy is in history-global.jsonl (no project, no
// session) lists with the provenance of its hook capture, a few ms older:
// the preview shows its project and the resume key its session, as
// hist-list --json does.
func TestListRichestProvenance(t *testing.T) {
	st := store.Store{Root: t.TempDir()}
	hash := "0123456789abcdef"
	capture := filepath.Join(st.ProjectDir(hash), "c.jsonl")
	writeFile(t, capture, record.Record{Text: "fix the build", TS: 1000, Src: "claude", Session: "s-1"})
	writeFile(t, st.Global(), record.Record{Text: "bare", TS: 900}, record.Record{Text: "fix the build", TS: 1004})
	texts, l := loadAll(t, st, store.Scope{All: true})
	if len(l.ents) != 2 {
		t.Fatalf("listed %d prompts, want 2", len(l.ents))
	}
	if e := l.ents[0]; texts[0] != "fix the build" || e.TS != 1004 || e.Src != "claude" || e.Session != "s-1" || e.File != capture || e.Project != hash {
		t.Errorf("entry 0 = %+v", e)
	}
	if e := l.ents[1]; texts[1] != "bare" || e.Src != "" || e.File != st.Global() {
		t.Errorf("entry 1 = %+v", e)
	}
}

// The selector lists what hist-list lists, in the same order: an import
// written in transcript order (not time order) is sorted as it is read,
// and two copies of a file (a store copied, a session forked) with equal
// timestamps order the same way. history.Read, which reads everything
// and sorts, is the reference.
func TestListOrderMatchesHistList(t *testing.T) {
	st := store.Store{Root: t.TempDir()}
	a, b := st.ProjectDir("aaaaaaaaaaaaaaaa"), st.ProjectDir("bbbbbbbbbbbbbbbb")
	var recs []record.Record
	for i := range 300 {
		// Transcript order: sessions interleaved, clocks a little apart.
		recs = append(recs, record.Record{Text: fmt.Sprintf("imported %d", i), TS: int64(5000 + i*10 - (i%3)*25), Src: "claude", Session: fmt.Sprint("s", i%3)})
	}
	recs = append(recs, make([]record.Record, 2000)...)
	for i := range 2000 { // past one block: read from the end, not whole
		recs[300+i] = record.Record{Text: fmt.Sprintf("later %d %s", i, strings.Repeat("x", 40)), TS: int64(9000 + i/2)}
	}
	writeFile(t, filepath.Join(a, "import-claude-1-ab.jsonl"), recs...)
	fork := []record.Record{{Text: "original", TS: 7000}, {Text: "forked A", TS: 7001}, {Text: "forked B", TS: 7001}}
	writeFile(t, filepath.Join(a, "c1.jsonl"), fork...)
	writeFile(t, filepath.Join(b, "c1.jsonl"), append(fork, record.Record{Text: "fork only", TS: 7001})...)
	got, _ := loadAll(t, st, store.Scope{All: true})
	files, err := st.Files(store.Scope{All: true})
	if err != nil {
		t.Fatal(err)
	}
	want := history.Read(files, nil)
	if len(got) != want.Len() {
		t.Fatalf("listed %d, hist-list's reference %d", len(got), want.Len())
	}
	for i, text := range got {
		if w := want.At(i).Text; text != w {
			t.Fatalf("entry %d: %q, want %q", i, text, w)
		}
	}
}
