package history

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"hist/lib/record"
	"hist/lib/store"
	"hist/lib/tombstone"
)

func writeFile(t *testing.T, path string, data string) store.File {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	return store.File{Path: path, Project: "p", Kind: store.Capture}
}

// streamAll collects what Stream sends, a Richer call replacing the
// provenance of the prompt it names.
func streamAll(files []store.File, hidden *tombstone.Set) ([]Entry, *StreamResult) {
	var got []Entry
	contents := map[string][]byte{}
	seen := NewSeen()
	sum := seen.Sum()
	res := StreamWith(files, hidden, StreamOptions{Seen: seen, Provenance: true}, func(e Entry) bool {
		if e.Settled {
			return true
		}
		if e.Richer {
			g := &got[e.N]
			g.Src, g.Session, g.File, g.Project = e.Src, e.Session, e.File, e.Project
			return true
		}
		if e.N != len(got) {
			panic(fmt.Sprintf("entry %d sent as N=%d", len(got), e.N))
		}
		// Off and Len locate a line that holds the text sent.
		b, ok := contents[e.File]
		var err error
		if !ok {
			b, err = os.ReadFile(e.File)
			contents[e.File] = b
		}
		if err != nil || e.Off < 0 || e.Off+int64(e.Len) > int64(len(b)) {
			panic(fmt.Sprintf("entry %d %.40q: %v, at %d+%d", e.N, e.Text, err, e.Off, e.Len))
		}
		var v record.View
		if err := record.ParseView(b[e.Off:e.Off+int64(e.Len)], &v); err != nil || string(v.Text) != e.Text || v.TS != e.TS {
			panic(fmt.Sprintf("entry %d %.40q: the line at %d+%d holds %.40q (%v)", e.N, e.Text, e.Off, e.Len, v.Text, err))
		}
		// Sum is the seen-set's, for this text and any of its spellings.
		if e.Sum != sum(e.Text) || e.Sum != sum(" "+strings.ToUpper(e.Text)+"  ") {
			panic(fmt.Sprintf("entry %d %.40q: sum %x, the seen-set's %x", e.N, e.Text, e.Sum, sum(e.Text)))
		}
		got = append(got, e)
		return true
	})
	return got, res
}

// Files whose lines are in time order stream exactly what Read returns,
// in the same order, whatever the block boundaries.
func TestStreamMatchesRead(t *testing.T) {
	dir := t.TempDir()
	r := rand.New(rand.NewPCG(1, 2))
	var bufs [7][]byte
	ts := int64(1000)
	texts := []string{"alpha", "Beta  gamma", "beta gamma", "multi\nline\nprompt", "x"}
	for i := 0; i < 3000; i++ {
		ts += int64(r.IntN(3))
		var text string
		switch r.IntN(10) {
		case 0:
			text = texts[r.IntN(len(texts))]
		case 1:
			text = strings.Repeat("long ", 20000+r.IntN(70000)) + fmt.Sprint(i) // crosses maxBlock
		default:
			text = fmt.Sprintf("prompt %d %s", i, strings.Repeat("z", r.IntN(300)))
		}
		f := r.IntN(len(bufs))
		rec := record.Record{Text: text, TS: ts}
		if r.IntN(3) > 0 {
			rec.Src, rec.Session = "claude", fmt.Sprint("s", f)
		}
		bufs[f] = record.Append(bufs[f], rec)
		if r.IntN(50) == 0 {
			bufs[f] = append(bufs[f], "not json\n\n"...)
		}
	}
	var files []store.File
	for i, b := range bufs {
		files = append(files, writeFile(t, filepath.Join(dir, fmt.Sprintf("f%d.jsonl", i)), string(b)))
		if i%3 == 0 {
			files[i].Project = "" // a global file: copies there are the poorest
		}
	}
	files = append(files, writeFile(t, filepath.Join(dir, "empty.jsonl"), ""))
	hidden, err := tombstone.Load(filepath.Join(dir, "hidden.json"))
	if err != nil {
		t.Fatal(err)
	}
	hidden.Add("BETA GAMMA")

	want := Read(files, hidden)
	got, res := streamAll(files, hidden)
	if len(got) != want.Len() || res.Sent != want.Len() {
		t.Fatalf("stream sent %d (%d), read has %d", len(got), res.Sent, want.Len())
	}
	for i, e := range got {
		w := want.At(i)
		if e.TS != w.TS || e.Text != w.Text {
			t.Fatalf("entry %d: stream %d %.40q, read %d %.40q", i, e.TS, e.Text, w.TS, w.Text)
		}
		if e.Src != w.Src || e.Session != w.Session || e.File != w.File || e.Project != w.Project {
			t.Fatalf("entry %d %.40q: stream's provenance %q %q %s %q, read's %q %q %s %q", i, e.Text,
				e.Src, e.Session, e.File, e.Project, w.Src, w.Session, w.File, w.Project)
		}
	}
	if res.Hidden != 1 || want.Hidden != 1 {
		t.Errorf("hidden: stream %d, read %d, want 1", res.Hidden, want.Hidden)
	}
	if res.Stats.Malformed != want.Stats.Malformed || res.Stats.Records != want.Stats.Records {
		t.Errorf("stats: stream %+v, read %+v", res.Stats, want.Stats)
	}
	if res.Unordered != 0 {
		t.Errorf("unordered = %d, want 0", res.Unordered)
	}
}

func TestStreamTornAndNewest(t *testing.T) {
	dir := t.TempDir()
	a := record.Append(nil, record.Record{Text: "old copy", TS: 1}) // older copy, other file
	b := record.Append(nil, record.Record{Text: "first", TS: 2})
	b = record.Append(b, record.Record{Text: "OLD   copy", TS: 3})
	b = append(b, `{"v":1,"text":"torn","ts":9`...) // no newline: a writer is still at it
	files := []store.File{
		writeFile(t, filepath.Join(dir, "a.jsonl"), string(a)),
		writeFile(t, filepath.Join(dir, "b.jsonl"), string(b)),
		writeFile(t, filepath.Join(dir, "c.jsonl"), `{"v":1,"text":"only torn","ts":5}`),
	}
	got, res := streamAll(files, nil)
	var texts []string
	for _, e := range got {
		texts = append(texts, e.Text)
	}
	if strings.Join(texts, "|") != "OLD   copy|first" {
		t.Fatalf("got %q", texts)
	}
	if res.Stats.Malformed != 2 {
		t.Errorf("malformed = %d, want 2 (two torn last lines)", res.Stats.Malformed)
	}
}

func TestStreamStopAndFailures(t *testing.T) {
	dir := t.TempDir()
	var b []byte
	for i := range 100 {
		b = record.Append(b, record.Record{Text: fmt.Sprint("p", i), TS: int64(i)})
	}
	files := []store.File{
		writeFile(t, filepath.Join(dir, "a.jsonl"), string(b)),
		{Path: filepath.Join(dir, "missing.jsonl")},
		{Path: dir}, // a folder
	}
	var n int
	res := Stream(files, nil, func(e Entry) bool {
		if n == 0 && e.Text != "p99" {
			t.Errorf("first = %q, want p99", e.Text)
		}
		n++
		return n < 3
	})
	if n != 3 || !res.Stopped {
		t.Errorf("sent %d, stopped %v; want 3, true", n, res.Stopped)
	}
	if len(res.Failed) != 2 {
		t.Errorf("failed = %v, want the missing file and the folder", res.Failed)
	}
}

// A file whose lines are out of time order streams in time order when it
// is not a capture file, or a capture file of one block: it is indexed
// and sorted as it is read. A large capture file is trusted to be in
// order: each prompt is still sent once, and its lines out of order are
// counted.
func TestStreamUnordered(t *testing.T) {
	dir := t.TempDir()
	var b []byte
	for _, r := range []record.Record{{Text: "a", TS: 5}, {Text: "b", TS: 1}, {Text: "A", TS: 9}, {Text: "c", TS: 2}} {
		b = record.Append(b, r)
	}
	got, res := streamAll([]store.File{writeFile(t, filepath.Join(dir, "m.jsonl"), string(b))}, nil)
	var texts []string
	for _, e := range got {
		texts = append(texts, e.Text)
	}
	if strings.Join(texts, "|") != "A|c|b" || res.Unordered != 2 {
		t.Fatalf("got %q unordered %d; want A|c|b and 2", texts, res.Unordered)
	}

	// Large files, lines in transcript order: mostly rising, a few
	// sessions interleaved, some copies of one prompt far apart.
	r := rand.New(rand.NewPCG(3, 4))
	big := func(name string, kind store.Kind, seed int) store.File {
		var b []byte
		ts := int64(10000)
		for i := range 6000 {
			ts += int64(r.IntN(5))
			rec := record.Record{Text: fmt.Sprintf("prompt %d %d %s", seed, i%4000, strings.Repeat("w", r.IntN(200))), TS: ts - int64(r.IntN(3))*1000}
			if i%4000 != i {
				rec.Text = fmt.Sprintf("prompt %d %d", seed, i%4000)
			}
			b = record.Append(b, rec)
		}
		f := writeFile(t, filepath.Join(dir, name), string(b))
		f.Kind = kind
		return f
	}
	files := []store.File{
		big("import-claude-1-ab.jsonl", store.Import, 1),
		big("compact-1-cd.jsonl", store.Compact, 2),
		big("seed.jsonl", store.Seed, 1),
		big("cap.jsonl", store.Capture, 3),
	}
	sorted := files[:3]
	want := Read(sorted, nil)
	got, res = streamAll(sorted, nil)
	if len(got) != want.Len() || res.Unordered == 0 {
		t.Fatalf("stream sent %d, read has %d; unordered %d", len(got), want.Len(), res.Unordered)
	}
	for i, e := range got {
		if w := want.At(i); e.Text != w.Text || e.TS != w.TS || e.File != w.File {
			t.Fatalf("entry %d: stream %d %q %s, read %d %q %s", i, e.TS, e.Text, e.File, w.TS, w.Text, w.File)
		}
	}
	if res.Stats != want.Stats {
		t.Errorf("stats: stream %+v, read %+v", res.Stats, want.Stats)
	}
	got, res = streamAll(files[3:], nil)
	if n := Read(files[3:], nil).Len(); len(got) != n || res.Unordered == 0 {
		t.Fatalf("large capture file: sent %d, read %d, unordered %d", len(got), n, res.Unordered)
	}
}

func BenchmarkStream(b *testing.B) {
	dir := b.TempDir()
	var files []store.File
	var bufs [50][]byte
	for i := range 200000 {
		f := i % len(bufs)
		bufs[f] = record.Append(bufs[f], record.Record{Text: fmt.Sprintf("prompt number %d with some words in it", i), TS: int64(i)})
	}
	for i, buf := range bufs {
		p := filepath.Join(dir, fmt.Sprint(i, ".jsonl"))
		os.WriteFile(p, buf, 0o600)
		files = append(files, store.File{Path: p})
	}
	b.ResetTimer()
	for range b.N {
		Stream(files, nil, func(Entry) bool { return true })
	}
}

// Stream reaches the newest prompts without reading a file from its
// start: the file below is a terabyte hole with two records at its end,
// which a front-to-back reader could not get through.
func TestStreamReadsFromTheEnd(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "huge.jsonl")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	tail := "\n" + string(record.Append(record.Append(nil, record.Record{Text: "older", TS: 1}), record.Record{Text: "newest", TS: 2}))
	if _, err := f.WriteAt([]byte(tail), 1<<40); err != nil {
		f.Close()
		t.Skipf("no sparse terabyte file here: %v", err)
	}
	f.Close()
	var got []string
	done := make(chan *StreamResult)
	go func() {
		done <- Stream([]store.File{{Path: path}}, nil, func(e Entry) bool {
			got = append(got, e.Text)
			return len(got) < 2
		})
	}()
	select {
	case res := <-done:
		if strings.Join(got, "|") != "newest|older" || !res.Stopped {
			t.Errorf("got %q (stopped %v)", got, res.Stopped)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Stream did not reach the end of the file's records in 10 s")
	}
}

// A line longer than maxLine (here: 80 MB of zeros, as a crash can leave)
// is skipped and counted, without being held in memory whole; the records
// on both sides of it are read.
func TestStreamSkipsOverlongLine(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "zeros.jsonl")
	head := record.Append(nil, record.Record{Text: "before", TS: 1})
	tail := append([]byte("\n"), record.Append(nil, record.Record{Text: "after", TS: 2})...)
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	f.Write(head)
	if _, err := f.WriteAt(tail, int64(len(head))+80<<20); err != nil {
		t.Fatal(err)
	}
	f.Close()
	got, res := streamAll([]store.File{{Path: path}}, nil)
	var texts []string
	for _, e := range got {
		texts = append(texts, e.Text)
	}
	if strings.Join(texts, "|") != "after|before" || res.Stats.Malformed != 1 {
		t.Errorf("got %q, malformed %d; want after|before and 1", texts, res.Stats.Malformed)
	}
}

// Stream keeps no file open between blocks (hundreds of open files cost a
// file-table resize before the first prompt); a file replaced meanwhile
// (a rewrite renamed another over it) is not read further: its failure
// wraps fs.ErrNotExist, so the caller reads the store again, and nothing
// of the new file shows up at old offsets.
func TestStreamFileReplacedBetweenBlocks(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	for i := range 400 { // about 20 KB: several blocks
		b.Write(record.Marshal(record.Record{Text: fmt.Sprintf("old prompt number %d", i), TS: int64(1000 + i)}))
	}
	f := writeFile(t, filepath.Join(dir, "a.jsonl"), b.String())
	replaced := false
	var got []Entry
	res := Stream([]store.File{f}, nil, func(e Entry) bool {
		got = append(got, e)
		if !replaced {
			replaced = true
			var nb strings.Builder
			for i := range 400 {
				nb.Write(record.Marshal(record.Record{Text: fmt.Sprintf("NEW %d", i), TS: int64(5000 + i)}))
			}
			tmp := filepath.Join(dir, ".a.tmp")
			if err := os.WriteFile(tmp, []byte(nb.String()), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(tmp, f.Path); err != nil {
				t.Fatal(err)
			}
		}
		return true
	})
	if len(res.Failed) != 1 || !errors.Is(res.Failed[0].Err, fs.ErrNotExist) {
		t.Fatalf("failed = %v, want the replaced file", res.Failed)
	}
	if len(got) == 0 || len(got) >= 400 {
		t.Fatalf("%d prompts before the replaced file stopped", len(got))
	}
	for i, e := range got {
		if want := fmt.Sprintf("old prompt number %d", 399-i); e.Text != want {
			t.Fatalf("prompt %d = %q, want %q", i, e.Text, want)
		}
	}
}

// Stream never holds more than a few files open, whatever their number.
func TestStreamOpenFilesBounded(t *testing.T) {
	dir := t.TempDir()
	var files []store.File
	for i := range 300 {
		files = append(files, writeFile(t, filepath.Join(dir, fmt.Sprintf("%03d.jsonl", i)),
			string(record.Marshal(record.Record{Text: fmt.Sprintf("p%d", i), TS: int64(i)}))))
	}
	before := openFDs(t)
	most := 0
	n := 0
	Stream(files, nil, func(Entry) bool {
		if n%50 == 0 {
			most = max(most, openFDs(t)-before)
		}
		n++
		return true
	})
	if n != 300 || most > 8 {
		t.Fatalf("%d prompts, up to %d more files open", n, most)
	}
}

func openFDs(t *testing.T) int {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd")
	}
	return len(ents)
}

// TestRichestProvenance: a prompt whose newest copy is a bare one (the
// recall-file migration's, in history-global.jsonl) shows at that copy's
// time and text with the provenance of its richest copy: a hook capture
// with a project and a session beats an import with a project only,
// which beats the bare copy. Read and Stream agree, the second only
// through Richer calls. A copy with a project outranks one with a
// session but no project.
func TestRichestProvenance(t *testing.T) {
	dir := t.TempDir()
	files := []store.File{
		mkfile(t, dir, "capture.jsonl", "p1", record.Record{Text: "fix the build", TS: 1000, Src: "claude", Session: "s-1"}, rec("other", 1500)),
		mkfile(t, dir, "seed.jsonl", "p2", rec("Fix the build", 1002)),
		mkfile(t, dir, "history-global.jsonl", "", rec("fix  the build", 1005), record.Record{Text: "other", TS: 2000, Src: "codex", Session: "s-2"}),
	}
	want := []Entry{
		{Text: "other", TS: 2000, Src: "", Session: "", File: files[0].Path, Project: "p1"},
		{Text: "fix  the build", TS: 1005, Src: "claude", Session: "s-1", File: files[0].Path, Project: "p1", N: 1},
	}
	res := Read(files, nil)
	if res.Len() != len(want) {
		t.Fatalf("read %d prompts, want %d", res.Len(), len(want))
	}
	for i, w := range want {
		w.N = 0
		if e := res.At(i); e != w {
			t.Errorf("read entry %d = %+v, want %+v", i, e, w)
		}
	}
	var richer int
	got, sres := streamAll(files, nil)
	Stream(files, nil, func(e Entry) bool {
		if e.Richer {
			richer++
		}
		return true
	})
	if len(got) != len(want) || sres.Sent != len(want) || richer != 3 {
		t.Fatalf("stream sent %d (%d), %d richer calls: %+v", len(got), sres.Sent, richer, got)
	}
	for i, w := range want {
		g := got[i]
		g.Off, g.Len, g.Sum = 0, 0, 0 // streamAll checked where the line is, and the sum
		if g != w {
			t.Errorf("stream entry %d = %+v, want %+v", i, got[i], w)
		}
	}
}

// With Provenance, a richer copy gives its provenance only within
// RicherWindow of the prompt's newest copy; every prompt is settled once:
// at once (Final) when its copy was as rich as a copy gets, else by a
// Settled call after its Richer calls (at once when one is as rich as a
// copy gets, else when the stream has passed the window).
func TestStreamSettled(t *testing.T) {
	dir := t.TempDir()
	const h = RicherWindow
	full := func(text string, ts int64) record.Record {
		return record.Record{Text: text, TS: ts, Src: "claude", Session: "s"}
	}
	files := []store.File{
		mkfile(t, dir, "cap.jsonl", "p", full("near", 10*h-5), full("far", 7*h), full("rich", 9*h)),
		mkfile(t, dir, "history-global.jsonl", "", rec("far", 9*h), rec("near", 10*h), rec("rich", 9*h+1), rec("bare", 9*h+2)),
	}
	var got []Entry
	var settled []int
	StreamWith(files, nil, StreamOptions{Provenance: true}, func(e Entry) bool {
		switch {
		case e.Richer:
			g := &got[e.N]
			g.Src, g.Session, g.File, g.Project = e.Src, e.Session, e.File, e.Project
		case e.Settled:
			if e.N >= len(got) || got[e.N].Final {
				t.Errorf("settled %d twice", e.N)
			}
			got[e.N].Final = true
			settled = append(settled, e.N)
		default:
			got = append(got, e)
		}
		return true
	})
	var out []string
	for _, e := range got {
		if !e.Final {
			t.Errorf("%q never settled", e.Text)
		}
		out = append(out, fmt.Sprintf("%s:%s", e.Text, e.Session))
	}
	if s := strings.Join(out, " "); s != "near:s bare: rich:s far:" {
		t.Errorf("got %s; want near:s bare: rich:s far: (far's rich copy is out of the window)", s)
	}
	if !slices.Equal(settled, []int{0, 2, 1, 3}) { // rich's full copy settles it at once
		t.Errorf("settled in order %v, want 0 2 1 3", settled)
	}
}

// A Seen set shared by two streams: the second sends only what the first
// did not (hist-list's second read after a rewrite), and View sends text
// that is only valid during the call.
func TestStreamSeenShared(t *testing.T) {
	dir := t.TempDir()
	a := mkfile(t, dir, "a.jsonl", "p", rec("one", 1), rec("two", 2))
	b := mkfile(t, dir, "b.jsonl", "p", rec("TWO", 3), rec("three", 4))
	seen := NewSeen()
	var got []string
	opt := StreamOptions{Seen: seen, View: true}
	fn := func(e Entry) bool { got = append(got, strings.Clone(e.Text)); return true }
	StreamWith([]store.File{a}, nil, opt, fn)
	res := StreamWith([]store.File{a, b}, nil, opt, fn)
	if s := strings.Join(got, "|"); s != "two|one|three" || res.Sent != 1 || seen.Len() != 3 {
		t.Errorf("got %s, second sent %d, seen %d; want two|one|three, 1, 3", s, res.Sent, seen.Len())
	}
}

// The identity set grows past its first table and finds every key.
func TestSeenGrows(t *testing.T) {
	s := NewSeen()
	for i := range 100000 {
		if !s.add(s.key(fmt.Append(nil, i))) {
			t.Fatalf("key %d met twice", i)
		}
	}
	for i := range 100000 {
		if s.add(s.key(fmt.Append(nil, i))) {
			t.Fatalf("key %d lost", i)
		}
	}
	if s.Len() != 100000 {
		t.Fatalf("len %d", s.Len())
	}
}
