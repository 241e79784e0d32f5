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

	"hist/lib/identity"
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

// held streams files as the selector does (Options.Hold).
func held(files []store.File, hidden *tombstone.Set) ([]Entry, *StreamResult) {
	var got []Entry
	res := streamFiles(files, hidden, seenSet{}, 0, Options{Hold: true}, func(e Entry) bool {
		got = append(got, e)
		return true
	})
	return got, res
}

// plain streams files without options: each prompt at its newest copy,
// with that copy's provenance.
func plain(files []store.File, hidden *tombstone.Set) ([]Entry, *StreamResult) {
	var got []Entry
	res := streamFiles(files, hidden, seenSet{}, 0, Options{}, func(e Entry) bool {
		got = append(got, e)
		return true
	})
	return got, res
}

func textsOf(es []Entry) string {
	var out []string
	for _, e := range es {
		out = append(out, e.Text)
	}
	return strings.Join(out, "|")
}

// Read (Hold) and a stream without options agree on every prompt, its
// order and its time, whatever the block boundaries; Read gives a
// prompt the provenance of its richest copy.
func TestStreamModesAgree(t *testing.T) {
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
			text = strings.Repeat("long ", 20000+r.IntN(70000)) + fmt.Sprint(i) // crosses the largest block
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
	hidden := hiddenSet(t, "BETA GAMMA")

	want := Read(files, hidden)
	got, res := plain(files, hidden)
	if len(got) != want.Len() {
		t.Fatalf("stream sent %d, read has %d", len(got), want.Len())
	}
	richer := 0
	for i, e := range got {
		w := want.At(i)
		if e.Text != w.Text || e.TS != w.TS || rank([]byte(w.Src), []byte(w.Session), w.Project) < rank([]byte(e.Src), []byte(e.Session), e.Project) {
			t.Fatalf("entry %d: stream %d %.40q %q %q %s %q, read %d %.40q %q %q %s %q", i,
				e.TS, e.Text, e.Src, e.Session, e.File, e.Project, w.TS, w.Text, w.Src, w.Session, w.File, w.Project)
		}
		if e != w {
			richer++
		}
	}
	if richer == 0 {
		t.Errorf("no prompt got an older copy's provenance")
	}
	if res.Hidden != 1 || want.Hidden != 1 {
		t.Errorf("hidden: stream %d, read %d, want 1", res.Hidden, want.Hidden)
	}
	if res.Stats != want.Stats || res.Stats.Malformed == 0 {
		t.Errorf("stats: stream %+v, read %+v", res.Stats, want.Stats)
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
	got, res := held(files, nil)
	if s := textsOf(got); s != "OLD   copy|first" {
		t.Fatalf("got %q", s)
	}
	if res.Stats.Malformed != 2 {
		t.Errorf("malformed = %d, want 2 (two torn last lines)", res.Stats.Malformed)
	}
}

// A large file (read from its end, not indexed) ending in a torn line:
// the torn line is counted once, every record before it is read.
func TestStreamTornLargeFile(t *testing.T) {
	dir := t.TempDir()
	var b []byte
	for i := range 2000 {
		b = record.Append(b, record.Record{Text: fmt.Sprintf("prompt %d %s", i, strings.Repeat("w", 100)), TS: int64(i)})
	}
	b = append(b, `{"v":1,"text":"torn`...)
	got, res := held([]store.File{writeFile(t, filepath.Join(dir, "big.jsonl"), string(b))}, nil)
	if len(got) != 2000 || got[0].Text != "prompt 1999 "+strings.Repeat("w", 100) {
		t.Fatalf("%d prompts, first %.20q", len(got), got[0].Text)
	}
	if res.Stats != (record.Stats{Lines: 2000, Records: 2000, Malformed: 1, Bytes: int64(len(b))}) {
		t.Errorf("stats %+v", res.Stats)
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
	res := streamFiles(files, nil, seenSet{}, 0, Options{}, func(e Entry) bool {
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
// order: each prompt is still sent once.
func TestStreamUnordered(t *testing.T) {
	dir := t.TempDir()
	var b []byte
	for _, r := range []record.Record{{Text: "a", TS: 5}, {Text: "b", TS: 1}, {Text: "A", TS: 9}, {Text: "c", TS: 2}} {
		b = record.Append(b, r)
	}
	got, _ := held([]store.File{writeFile(t, filepath.Join(dir, "m.jsonl"), string(b))}, nil)
	if s := textsOf(got); s != "A|c|b" {
		t.Fatalf("got %q; want A|c|b", s)
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
	got, res := held(files[:3], nil)
	if n := distinct(t, files[:3]); len(got) != n || res.Stats.Records != 3*6000 {
		t.Fatalf("sent %d of %d prompts, read %d records", len(got), n, res.Stats.Records)
	}
	for i := 1; i < len(got); i++ {
		if got[i].TS > got[i-1].TS {
			t.Fatalf("entry %d (%d) is newer than entry %d (%d)", i, got[i].TS, i-1, got[i-1].TS)
		}
	}
	if got, _ = held(files[3:], nil); len(got) != distinct(t, files[3:]) {
		t.Fatalf("large capture file: sent %d, want %d", len(got), distinct(t, files[3:]))
	}
}

// distinct counts the prompts of files.
func distinct(t *testing.T, files []store.File) int {
	ids := map[string]bool{}
	for _, f := range files {
		fh, err := os.Open(f.Path)
		if err != nil {
			t.Fatal(err)
		}
		record.Scan(fh, func(l *record.Line) error {
			ids[identity.Normalize(string(l.Text))] = true
			return nil
		})
		fh.Close()
	}
	return len(ids)
}

// A stream reaches the newest prompts without reading a file from its
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
		done <- streamFiles([]store.File{{Path: path, Kind: store.Capture}}, nil, seenSet{}, 0, Options{}, func(e Entry) bool {
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
		t.Fatal("the stream did not reach the end of the file's records in 10 s")
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
	got, res := held([]store.File{{Path: path, Kind: store.Capture}}, nil)
	if s := textsOf(got); s != "after|before" || res.Stats.Malformed != 1 {
		t.Errorf("got %q, malformed %d; want after|before and 1", s, res.Stats.Malformed)
	}
}

// A stream keeps no file open between blocks; a file replaced meanwhile
// (a rewrite renamed another over it) is not read further: its failure
// wraps fs.ErrNotExist, so the caller reads the store again, and nothing
// of the new file shows up at old offsets.
func TestStreamFileReplacedBetweenBlocks(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	const n = 8000 // about 400 KB: several blocks
	for i := range n {
		b.Write(record.Marshal(record.Record{Text: fmt.Sprintf("old prompt number %d", i), TS: int64(1000 + i)}))
	}
	f := writeFile(t, filepath.Join(dir, "a.jsonl"), b.String())
	replaced := false
	var got []Entry
	res := streamFiles([]store.File{f}, nil, seenSet{}, 0, Options{}, func(e Entry) bool {
		got = append(got, e)
		if !replaced {
			replaced = true
			var nb strings.Builder
			for i := range n {
				nb.Write(record.Marshal(record.Record{Text: fmt.Sprintf("NEW %d", i), TS: int64(50000 + i)}))
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
	if len(got) == 0 || len(got) >= n {
		t.Fatalf("%d prompts before the replaced file stopped", len(got))
	}
	for i, e := range got {
		if want := fmt.Sprintf("old prompt number %d", n-1-i); e.Text != want {
			t.Fatalf("prompt %d = %q, want %q", i, e.Text, want)
		}
	}
}

// A stream never holds more than a few files open, whatever their number.
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
	streamFiles(files, nil, seenSet{}, 0, Options{}, func(Entry) bool {
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

// A prompt whose newest copy is a bare one (the recall-file migration's,
// in history-global.jsonl) shows at that copy's time and text with the
// provenance of its richest copy: a hook capture with a project and a
// session beats an import with a project only, which beats the bare
// copy. A stream sends it so with Options.Hold.
func TestRichestProvenance(t *testing.T) {
	dir := t.TempDir()
	files := []store.File{
		mkfile(t, dir, "capture.jsonl", "p1", record.Record{Text: "fix the build", TS: 1000, Src: "claude", Session: "s-1"}, rec("other", 1500)),
		mkfile(t, dir, "seed.jsonl", "p2", rec("Fix the build", 1002)),
		mkfile(t, dir, "history-global.jsonl", "", rec("fix  the build", 1005), record.Record{Text: "other", TS: 2000, Src: "codex", Session: "s-2"}),
	}
	want := []Entry{
		{Text: "other", TS: 2000, Src: "", Session: "", File: files[0].Path, Project: "p1"},
		{Text: "fix  the build", TS: 1005, Src: "claude", Session: "s-1", File: files[0].Path, Project: "p1"},
	}
	res := Read(files, nil)
	got, _ := held(files, nil)
	if res.Len() != len(want) || len(got) != len(want) {
		t.Fatalf("read %d prompts, streamed %d, want %d", res.Len(), len(got), len(want))
	}
	for i, w := range want {
		if e := res.At(i); e != w {
			t.Errorf("read entry %d = %+v, want %+v", i, e, w)
		}
		if got[i] != w {
			t.Errorf("stream entry %d = %+v, want %+v", i, got[i], w)
		}
	}
}

// A richer copy gives its provenance only within richerWindow of the
// prompt's newest copy. Hold sends each prompt once that is settled, in
// the order met: "bare" waits for "near" before it, "rich" is settled by
// its full copy at once, "far"'s full copy is out of the window.
func TestStreamHold(t *testing.T) {
	dir := t.TempDir()
	const h = richerWindow
	full := func(text string, ts int64) record.Record {
		return record.Record{Text: text, TS: ts, Src: "claude", Session: "s"}
	}
	files := []store.File{
		mkfile(t, dir, "cap.jsonl", "p", full("near", 10*h-5), full("far", 7*h), full("rich", 9*h)),
		mkfile(t, dir, "history-global.jsonl", "", rec("far", 9*h), rec("near", 10*h), rec("rich", 9*h+1), rec("bare", 9*h+2)),
	}
	var out []string
	streamFiles(files, nil, seenSet{}, 0, Options{Hold: true}, func(e Entry) bool {
		out = append(out, e.Text+":"+e.Session)
		return true
	})
	if s := strings.Join(out, " "); s != "near:s bare: rich:s far:" {
		t.Errorf("held: %s; want near:s bare: rich:s far:", s)
	}
}

// Stream over a scope: a compaction that moves prompts while it reads
// (here, between the listing of the files and their reading: the capture
// files are merged into a compact file and removed) must not leave them
// out: it reads the scope again once it sees that files moved, sending
// only what it had missed, and a prompt deleted meanwhile stays hidden.
func TestStreamRereadsAfterRewrite(t *testing.T) {
	st := store.Store{Root: t.TempDir()}
	dir := st.ProjectDir("0123456789abcdef")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	var all []record.Record
	for i := range 3 {
		var recs []record.Record
		for j := range 4 {
			recs = append(recs, record.Record{Text: fmt.Sprintf("prompt %d.%d", i, j), TS: int64(1000 + 10*j + i)})
		}
		mkfile(t, dir, fmt.Sprintf("c%d.jsonl", i), "", recs...)
		all = append(all, recs...)
	}
	deleted := "prompt 1.2"
	rewrites := 0
	defer func() { afterList = nil }()
	afterList = func() {
		if rewrites++; rewrites > 1 {
			return
		}
		var keep []record.Record
		for _, r := range all {
			if r.Text != deleted {
				keep = append(keep, r)
			}
		}
		mkfile(t, dir, "compact-1-aa.jsonl", "", keep...)
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
	var got []string
	res := Stream(st, store.Scope{All: true}, nil, Options{}, func(e Entry) bool {
		got = append(got, e.Text)
		return true
	})
	if rewrites != 2 || len(res.Failed) != 0 {
		t.Errorf("%d reads, failures left %v; want 2 reads and none", rewrites, res.Failed)
	}
	var want []string
	for _, r := range all {
		if r.Text != deleted {
			want = append(want, r.Text)
		}
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("listed %q\nwant %q", got, want)
	}

	// Without a rewrite, one read.
	rewrites = 1
	got = nil
	Stream(st, store.Scope{All: true}, nil, Options{}, func(e Entry) bool { got = append(got, e.Text); return true })
	if rewrites != 2 || len(got) != len(want) {
		t.Fatalf("%d reads, %d prompts; want 1 read of %d", rewrites-1, len(got), len(want))
	}
}

// Uses calls name prompts across the reads of a scope: the second read's
// first prompt is the n-th sent in all; a held prompt still gets its
// richer copy's provenance.
func TestStreamUsesAcrossReads(t *testing.T) {
	dir := t.TempDir()
	a := mkfile(t, dir, "a.jsonl", "p", rec("one", 1), rec("two", 2))
	b := mkfile(t, dir, "history-global.jsonl", "", rec("three", 10*useGap))
	c := mkfile(t, dir, "c.jsonl", "p", record.Record{Text: "three", TS: 9, Src: "pi", Session: "s"})
	seen := seenSet{}
	var got []Entry
	uses := map[int]int{}
	opt := Options{Hold: true, Uses: func(n int, e Entry) { uses[n]++ }}
	fn := func(e Entry) bool { got = append(got, e); return true }
	res := streamFiles([]store.File{a}, nil, seen, 0, opt, fn)
	streamFiles([]store.File{a, b, c}, nil, seen, res.sent, opt, fn)
	if textsOf(got) != "two|one|three" || got[2].Session != "s" || fmt.Sprint(uses) != "map[0:1 1:1 2:2]" {
		t.Errorf("got %+v, uses %v", got, uses)
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
		files = append(files, store.File{Path: p, Kind: store.Capture})
	}
	for b.Loop() {
		streamFiles(files, nil, seenSet{}, 0, Options{}, func(Entry) bool { return true })
	}
}
