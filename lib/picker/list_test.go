package picker

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
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
	l := load(st, sc, hidden)
	deadline := time.Now().Add(10 * time.Second)
	for {
		l.mu.Lock()
		done := l.done
		l.mu.Unlock()
		if done {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the list never finished loading")
		}
		time.Sleep(time.Millisecond)
	}
	// As the first pass shows them (from the backlog), then as a later
	// pass, the preview or a pick reads them (from the store files).
	var texts []string
	for i, e := range l.ents {
		text, ok := l.text(int32(i), true)
		if !ok {
			t.Fatalf("entry %d: no text", i)
		}
		texts = append(texts, text)
		if f := l.file(e); f.Path == "" {
			t.Errorf("%q has no file", text)
		}
	}
	if len(l.texts) != 0 {
		t.Errorf("%d texts left in the backlog", len(l.texts))
	}
	for i := range l.ents {
		if text, ok := l.text(int32(i), false); !ok || text != texts[i] {
			t.Errorf("entry %d read again: %q %v, want %q", i, text, ok, texts[i])
		}
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

// A compaction that moves prompts while the list is read (here, between
// the listing of the files and their reading: the capture files are
// merged into a compact file and removed) must not leave them out: the
// list reads the scope again once it sees that files moved.
func TestListSettlesAfterRewrite(t *testing.T) {
	st := store.Store{Root: t.TempDir()}
	dir := st.ProjectDir("0123456789abcdef")
	var all []record.Record
	for i := range 3 {
		var recs []record.Record
		for j := range 4 {
			recs = append(recs, record.Record{Text: fmt.Sprintf("prompt %d.%d", i, j), TS: int64(1000 + 10*j + i)})
		}
		writeFile(t, filepath.Join(dir, fmt.Sprintf("c%d.jsonl", i)), recs...)
		all = append(all, recs...)
	}
	// A prompt deleted during the compaction: its tombstone is written
	// then, so the second read must not bring it back.
	deleted := "prompt 1.2"
	defer func() { afterList = nil }()
	afterList = func() {
		var keep []record.Record
		for _, r := range all {
			if r.Text != deleted {
				keep = append(keep, r)
			}
		}
		writeFile(t, filepath.Join(dir, "compact-1-aa.jsonl"), keep...)
		h, err := tombstone.Load(st.Hidden())
		if err != nil {
			t.Error(err)
		}
		h.Add(deleted)
		if err := h.Save(); err != nil {
			t.Error(err)
		}
		for i := range 3 {
			os.Remove(filepath.Join(dir, fmt.Sprintf("c%d.jsonl", i)))
		}
	}
	got, l := loadAll(t, st, store.Scope{All: true})
	// The files the stream found gone were read again: no failure is
	// left to report (the footer would say their prompts are missing).
	if len(l.res.Failed) != 0 {
		t.Errorf("failures left after the second read: %v", l.res.Failed)
	}
	slices.Sort(got)
	var want []string
	for _, r := range all {
		if r.Text != deleted {
			want = append(want, r.Text)
		}
	}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("listed %q\nwant %q", got, want)
	}

	// Without a rewrite, one read.
	afterList = nil
	got, _ = loadAll(t, st, store.Scope{All: true})
	if len(got) != len(want) {
		t.Fatalf("listed %d prompts, want %d", len(got), len(want))
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
	e := l.ents[0]
	if f, pv := l.file(e), l.provOf(e); texts[0] != "fix the build" || e.ts != 1004 || pv.src != "claude" || pv.session != "s-1" || f.Path != capture || f.Project != hash {
		t.Errorf("entry 0 = %+v %+v in %+v", e, pv, f)
	}
	if e := l.ents[1]; texts[1] != "bare" || l.provOf(e).src != "" || l.file(e).Path != st.Global() {
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

// The list keeps no text once a pass has shown it: it reads it again from
// the store file. When a rewrite (a compaction, a delete by another
// process) replaced that file, the prompt is found where it is now; a
// prompt deleted meanwhile reads as gone.
func TestListTextAfterRewrite(t *testing.T) {
	st := store.Store{Root: t.TempDir()}
	dir := st.ProjectDir("aaaaaaaaaaaaaaaa")
	var recs []record.Record
	for i := range 50 {
		recs = append(recs, record.Record{Text: fmt.Sprintf("prompt %d %s", i, strings.Repeat("y", i)), TS: int64(1000 + i)})
	}
	writeFile(t, filepath.Join(dir, "c1.jsonl"), recs...)
	texts, l := loadAll(t, st, store.Scope{Project: "aaaaaaaaaaaaaaaa"})
	// The file is replaced by one that holds its prompts at other places
	// (a longer first line), without prompt 7, plus a second file.
	var again []record.Record
	again = append(again, record.Record{Text: "new " + strings.Repeat("z", 300), TS: 500})
	for _, r := range recs {
		if r.Text != texts[len(texts)-1-7] {
			again = append(again, r)
		}
	}
	writeFile(t, filepath.Join(dir, "c1.jsonl"), again...)
	for i := range l.ents {
		text, ok := l.text(int32(i), false)
		if i == len(texts)-1-7 {
			if ok {
				t.Errorf("deleted prompt %q still reads as %q", texts[i], text)
			}
			continue
		}
		if !ok || text != texts[i] {
			t.Errorf("entry %d after the rewrite: %q %v, want %q", i, text, ok, texts[i])
		}
	}
	if l.relocated != 1 {
		t.Errorf("the list looked for its prompts %d times, want once", l.relocated)
	}
}

// Texts wait in the list only until a pass shows them: with no pass
// taking them, the loading stops at maxBacklog, and goes on once they are
// taken.
func TestListBacklogBounded(t *testing.T) {
	st := store.Store{Root: t.TempDir()}
	n := maxBacklog + maxBacklog/2
	recs := make([]record.Record, n)
	for i := range recs {
		recs[i] = record.Record{Text: fmt.Sprint("p", i), TS: int64(1000 + i)}
	}
	writeFile(t, filepath.Join(st.ProjectDir("aaaaaaaaaaaaaaaa"), "c1.jsonl"), recs...)
	l := load(st, store.Scope{All: true}, nil)
	defer l.close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		l.mu.Lock()
		have, done := len(l.ents), l.done
		l.mu.Unlock()
		if done {
			t.Fatalf("loaded all %d prompts with none taken", have)
		}
		if have >= maxBacklog {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("loaded %d prompts, want %d", have, maxBacklog)
		}
		time.Sleep(time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond)
	l.mu.Lock()
	have := len(l.ents)
	l.mu.Unlock()
	if have > maxBacklog+4096 { // at most one batch past the bound
		t.Fatalf("loaded %d prompts with none taken, bound %d", have, maxBacklog)
	}
	for i := 0; ; i++ {
		m, done := l.snapshot(i, &quitter{ch: make(chan struct{})})
		if i >= m && done {
			if i != n {
				t.Fatalf("took %d prompts, want %d", i, n)
			}
			break
		}
		if want := fmt.Sprint("p", n-1-i); i < m {
			if text, ok := l.text(int32(i), true); !ok || text != want {
				t.Fatalf("prompt %d = %q, want %q", i, text, want)
			}
		}
	}
}
