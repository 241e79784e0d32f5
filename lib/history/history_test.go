package history

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"hist/lib/identity"
	"hist/lib/record"
	"hist/lib/store"
	"hist/lib/tombstone"
)

func mkfile(t testing.TB, dir, name, project string, recs ...record.Record) store.File {
	t.Helper()
	var b []byte
	for _, r := range recs {
		b = record.Append(b, r)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return store.File{Path: p, Project: project, Kind: store.Capture}
}

func rec(text string, ts int64) record.Record { return record.Record{Text: text, TS: ts} }

func texts(r *Result) []string {
	var out []string
	for i := range r.Len() {
		out = append(out, r.At(i).Text)
	}
	return out
}

func hiddenSet(t *testing.T, entries ...string) *tombstone.Set {
	t.Helper()
	p := filepath.Join(t.TempDir(), "hidden.json")
	data := "[" + strings.Join(func() []string {
		var q []string
		for _, e := range entries {
			q = append(q, fmt.Sprintf("%q", e))
		}
		return q
	}(), ",") + "]"
	os.WriteFile(p, []byte(data), 0o600)
	s, err := tombstone.Load(p)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestReadNewestWins(t *testing.T) {
	dir := t.TempDir()
	files := []store.File{
		mkfile(t, dir, "a.jsonl", "pa", rec("fix the test", 1000), rec("deploy", 2000), rec("same ts", 50), rec("Same TS", 50)),
		mkfile(t, dir, "b.jsonl", "pb", rec("FIX  the test\n", 3000), record.Record{Text: "deploy", TS: 1500, Src: "pi", Session: "s"}),
		mkfile(t, dir, "c.jsonl", "", record.Record{Text: " Deploy ", TS: 2500, Src: "claude", Session: "x"}),
	}
	r := Read(files, nil)
	want := []string{"FIX  the test\n", " Deploy ", "Same TS"}
	if got := texts(r); !slices.Equal(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
	e := r.At(0)
	if e.TS != 3000 || e.File != files[1].Path || e.Project != "pb" || e.Src != "" || e.Session != "" {
		t.Errorf("entry 0 = %+v", e)
	}
	// The newest copy's text and time; the provenance of the copy with a
	// project and a session (the newer one has no project).
	e = r.At(1)
	if e.Text != " Deploy " || e.TS != 2500 || e.File != files[1].Path || e.Project != "pb" || e.Src != "pi" || e.Session != "s" {
		t.Errorf("entry 1 = %+v", e)
	}
	if e := r.At(2); e.TS != 50 || e.Text != "Same TS" {
		t.Errorf("equal ts: the later line should win: %+v", e)
	}
	if r.Stats.Records != 7 || r.Stats.Malformed != 0 || r.Hidden != 0 || len(r.Failed) != 0 {
		t.Errorf("stats %+v hidden %d failed %v", r.Stats, r.Hidden, r.Failed)
	}
}

func TestReadOlderCopyLater(t *testing.T) {
	// An older copy read after the newer one does not replace it.
	dir := t.TempDir()
	files := []store.File{
		mkfile(t, dir, "a.jsonl", "p", rec("Prompt", 9000)),
		mkfile(t, dir, "b.jsonl", "p", rec("prompt", 1000), rec("other", 5000)),
	}
	r := Read(files, nil)
	if got := texts(r); !slices.Equal(got, []string{"Prompt", "other"}) || r.At(0).File != files[0].Path {
		t.Errorf("got %q", got)
	}
}

func TestReadHidden(t *testing.T) {
	dir := t.TempDir()
	long := strings.Repeat("abcdefghij", 13)
	files := []store.File{mkfile(t, dir, "a.jsonl", "p",
		rec("secret one", 1), rec("SECRET  one", 5), rec("visible", 2), rec(long+" tail", 3), rec("exact legacy", 4), rec("exact legacy and more", 6))}
	h := hiddenSet(t, identity.Key("secret one"), long[:120], "exact legacy")
	r := Read(files, h)
	if got := texts(r); !slices.Equal(got, []string{"exact legacy and more", "visible"}) {
		t.Errorf("got %q", got)
	}
	if r.Hidden != 3 {
		t.Errorf("Hidden = %d, want 3 (each prompt once)", r.Hidden)
	}
	// An empty set and nil hide nothing.
	if Read(files, hiddenSet(t)).Len() != 5 || Read(files, nil).Len() != 5 {
		t.Error("an empty set hides something")
	}
}

func TestReadFailedFiles(t *testing.T) {
	dir := t.TempDir()
	good := mkfile(t, dir, "a.jsonl", "p", rec("one", 1))
	os.Mkdir(filepath.Join(dir, "d.jsonl"), 0o700)
	files := []store.File{
		{Path: filepath.Join(dir, "d.jsonl")}, good, {Path: filepath.Join(dir, "gone.jsonl")},
		mkfile(t, dir, "b.jsonl", "p", rec("two", 2)),
	}
	r := Read(files, nil)
	if got := texts(r); !slices.Equal(got, []string{"two", "one"}) {
		t.Errorf("got %q", got)
	}
	if len(r.Failed) != 2 {
		t.Fatalf("Failed = %v, want 2", r.Failed)
	}
	if !errors.Is(r.Failed[1].Err, os.ErrNotExist) || !strings.Contains(r.Failed[0].Error(), "d.jsonl") {
		t.Errorf("Failed = %v", r.Failed)
	}
}

func TestReadMalformed(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "a.jsonl")
	os.WriteFile(p, []byte("{\"v\":1,\"text\":\"a\",\"ts\":1}\nbad\n\n{\"v\":2,\"text\":\"b\",\"ts\":2}\n{\"v\":1,\"text\":\"c\",\"ts\":3}\n{\"v\":1,\"te"), 0o600)
	r := Read([]store.File{{Path: p}}, nil)
	if got := texts(r); !slices.Equal(got, []string{"c", "a"}) {
		t.Errorf("got %q", got)
	}
	if r.Stats.Malformed != 3 || r.Stats.Records != 2 || r.Stats.Lines != 5 {
		t.Errorf("stats %+v", r.Stats)
	}
}

func TestReadLargeAndEmpty(t *testing.T) {
	dir := t.TempDir()
	big := strings.Repeat("x", 1<<20) // larger than a block
	files := []store.File{
		mkfile(t, dir, "a.jsonl", "p", rec(big, 1), rec("small", 2), rec(big+"y", 3)),
		mkfile(t, dir, "empty.jsonl", "p"),
	}
	r := Read(files, nil)
	if got := texts(r); len(got) != 3 || got[0] != big+"y" || got[1] != "small" || got[2] != big {
		t.Errorf("large texts not kept whole")
	}
	if Read(nil, nil).Len() != 0 {
		t.Error("no files, some prompts")
	}
}

// TestReadMatchesModel compares Read with a plain model over random
// stores: many files, repeats with case and space variants, equal
// timestamps, hidden prompts, provenance.
func TestReadMatchesModel(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 9))
	words := []string{"fix", "Fix", "the", "TEST", "é", "É", "日本", " ", "  ", "\n", "deploy"}
	for round := range 20 {
		dir := t.TempDir()
		type line struct {
			text, src, project string
			ts                 int64
			file               int
		}
		var all [][]line
		var files []store.File
		for f := range 1 + r.IntN(6) {
			project := []string{"p", ""}[r.IntN(2)]
			var recs []record.Record
			var ls []line
			for range r.IntN(40) {
				var b strings.Builder
				for range 1 + r.IntN(4) {
					b.WriteString(words[r.IntN(len(words))])
				}
				l := line{b.String(), []string{"", "", "pi", "claude"}[r.IntN(4)], project, int64(r.IntN(30)), f}
				if identity.IsBlank(l.text) {
					continue
				}
				ls = append(ls, l)
				session := ""
				if l.src != "" {
					session = l.src + "-s"
				}
				recs = append(recs, record.Record{Text: l.text, TS: l.ts, Src: l.src, Session: session})
			}
			all = append(all, ls)
			files = append(files, mkfile(t, dir, fmt.Sprintf("%d.jsonl", f), project, recs...))
		}
		hide := []string{identity.Key(words[r.IntN(len(words))] + words[r.IntN(len(words))])}
		h := hiddenSet(t, hide...)
		// The model: text and time from the last line in read order among
		// those with the greatest ts; provenance from the same among the
		// richest lines (project and session, project, session, neither).
		type win struct {
			line
			seq  int
			prov line
			rich int
		}
		richness := func(l line) int {
			r := 0
			if l.project != "" {
				r = 2
			}
			if l.src != "" {
				r++
			}
			return r
		}
		best := map[string]win{}
		seq := 0
		for _, ls := range all {
			for _, l := range ls {
				seq++
				n := identity.Normalize(l.text)
				w, ok := best[n]
				if !ok {
					best[n] = win{l, seq, l, richness(l)}
					continue
				}
				if l.ts >= w.ts {
					w.line, w.seq = l, seq
				}
				if rl := richness(l); rl > w.rich || rl == w.rich && l.ts >= w.prov.ts {
					w.prov, w.rich = l, rl
				}
				best[n] = w
			}
		}
		var want []win
		for n, w := range best {
			if !h.HiddenNormalized([]byte(n)) {
				want = append(want, w)
			}
		}
		slices.SortFunc(want, func(a, b win) int {
			if a.ts != b.ts {
				return int(b.ts - a.ts)
			}
			return b.seq - a.seq
		})
		res := Read(files, h)
		if res.Len() != len(want) {
			t.Fatalf("round %d: %d prompts, want %d", round, res.Len(), len(want))
		}
		for i, w := range want {
			e := res.At(i)
			if e.Text != w.text || e.TS != w.ts || e.Src != w.prov.src || (e.Session != "") != (w.prov.src != "") ||
				e.Project != w.prov.project || e.File != files[w.prov.file].Path {
				t.Fatalf("round %d, entry %d: %q@%d %q %q, want %q@%d %q %q", round, i, e.Text, e.TS, e.Src, e.File, w.text, w.ts, w.prov.src, files[w.prov.file].Path)
			}
		}
	}
}

// BenchmarkRead reads a generated store of 100k prompts in 50 files.
func BenchmarkRead(b *testing.B) {
	dir := b.TempDir()
	r := rand.New(rand.NewPCG(1, 1))
	words := strings.Fields("the a to of fix test error build store file read write parse café 日本語 Größe")
	var files []store.File
	bufs := make([][]byte, 50)
	var pool []string
	var size int64
	for i := range 100000 {
		var text string
		if len(pool) > 0 && r.IntN(100) < 15 {
			text = pool[r.IntN(len(pool))]
		} else {
			var sb strings.Builder
			for range 3 + r.IntN(40) {
				sb.WriteString(words[r.IntN(len(words))])
				sb.WriteByte(' ')
			}
			text = sb.String()
			if len(pool) < 5000 {
				pool = append(pool, text)
			}
		}
		f := r.IntN(len(bufs))
		bufs[f] = record.Append(bufs[f], rec(text, int64(1700000000000+i)))
	}
	for i, buf := range bufs {
		p := filepath.Join(dir, fmt.Sprintf("%d.jsonl", i))
		os.WriteFile(p, buf, 0o600)
		size += int64(len(buf))
		files = append(files, store.File{Path: p, Project: "p"})
	}
	b.SetBytes(size)
	b.ReportAllocs()
	for b.Loop() {
		res := Read(files, nil)
		if res.Len() == 0 {
			b.Fatal("nothing read")
		}
	}
}
