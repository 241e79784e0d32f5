// Package ttest holds test helpers the transcript readers' tests share.
// Only tests import it.
package ttest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"testing"
	"time"

	"hist/lib/transcript"
)

// ScanFunc is a reader's Scan: it reads the transcripts under root.
type ScanFunc = func(root string, emit func(transcript.Prompt) error) (transcript.Stats, error)

// Collect runs scan over src and returns the prompts it emitted. A scan
// error fails the test, and so does a Stats.Prompts that is not the number
// of prompts emitted.
func Collect[S any](t testing.TB, scan func(S, func(transcript.Prompt) error) (transcript.Stats, error), src S) ([]transcript.Prompt, transcript.Stats) {
	t.Helper()
	var got []transcript.Prompt
	st, err := scan(src, func(p transcript.Prompt) error {
		got = append(got, p)
		return nil
	})
	if err != nil {
		t.Fatalf("scan: %v", err)
	}
	if st.Prompts != len(got) {
		t.Errorf("Stats.Prompts = %d, emitted %d", st.Prompts, len(got))
	}
	return got, st
}

// Texts returns the prompts' texts (empty, not nil, for none).
func Texts(ps []transcript.Prompt) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.Text
	}
	return out
}

// WantTexts fails the test unless the prompts' texts are want, in order.
func WantTexts(t testing.TB, got []transcript.Prompt, want ...string) {
	t.Helper()
	if want == nil {
		want = []string{}
	}
	if g := Texts(got); !reflect.DeepEqual(g, want) {
		t.Errorf("prompts:\n got %q\nwant %q", g, want)
	}
}

// WriteFile writes content to path (0600), making its folders (0700).
func WriteFile(t testing.TB, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// FailingReader reads R, then fails with Err where R ends.
type FailingReader struct {
	R   io.Reader
	Err error
}

func (f *FailingReader) Read(p []byte) (int, error) {
	n, err := f.R.Read(p)
	if err == io.EOF {
		return n, f.Err
	}
	return n, err
}

// WithProcs runs fn with GOMAXPROCS set to each of 1 (files read one by
// one) and 4 (read ahead by several goroutines), and panics if fn has not
// returned after 30 seconds.
func WithProcs(t *testing.T, fn func(t *testing.T)) {
	for _, n := range []int{1, 4} {
		t.Run(fmt.Sprintf("procs=%d", n), func(t *testing.T) {
			old := runtime.GOMAXPROCS(n)
			defer runtime.GOMAXPROCS(old)
			done := make(chan struct{})
			go func() {
				defer close(done)
				fn(t)
			}()
			select {
			case <-done:
			case <-time.After(30 * time.Second):
				panic("scan deadlocked")
			}
		})
	}
}

// CheckOrderAndStop checks, with GOMAXPROCS 1 and 4, that scan over root
// emits want in order, reading files files, and that an error returned by
// emit (at the 10th prompt: want must hold more) stops the scan at once.
func CheckOrderAndStop(t *testing.T, scan ScanFunc, root string, want []string, files int) {
	WithProcs(t, func(t *testing.T) {
		got, st := Collect(t, scan, root)
		WantTexts(t, got, want...)
		if st.Files != files || st.Prompts != len(want) {
			t.Errorf("stats %+v", st)
		}
		stop := errors.New("enough")
		n := 0
		st, err := scan(root, func(p transcript.Prompt) error {
			n++
			if n == 10 {
				return stop
			}
			return nil
		})
		if err != stop || n != 10 || st.Prompts != 9 {
			t.Errorf("emit error: err %v, %d calls, stats %+v", err, n, st)
		}
	})
}

// CheckReadErrorStop checks, with GOMAXPROCS 1 and 4, that scan over root
// stops with a *transcript.ReadError for bad, after emitting want (in
// order) from files files.
func CheckReadErrorStop(t *testing.T, scan ScanFunc, root, bad string, want []string, files int) {
	WithProcs(t, func(t *testing.T) {
		var got []string
		st, err := scan(root, func(p transcript.Prompt) error {
			got = append(got, p.Text)
			return nil
		})
		var re *transcript.ReadError
		if !errors.As(err, &re) || re.Path != bad {
			t.Fatalf("err = %v", err)
		}
		if !reflect.DeepEqual(got, want) || st.Prompts != len(want) || st.Files != files {
			t.Errorf("before the error: %d prompts %q, stats %+v", len(got), got, st)
		}
	})
}

// BenchCorpus writes copies of the files pattern matches until about size
// bytes: copy i of file j is written where file(i, j, data) says, with the
// content it returns (given the original). It returns the folder and the
// bytes written. HIST_BENCH_DIR keeps the corpus in a named folder, to
// compare with other tools (grep -c) over the same files.
func BenchCorpus(b *testing.B, size int, pattern string, file func(i, j int, data []byte) (rel string, out []byte)) (string, int64) {
	b.Helper()
	root := os.Getenv("HIST_BENCH_DIR")
	if root == "" {
		root = b.TempDir()
	}
	files, _ := filepath.Glob(pattern)
	if len(files) == 0 {
		b.Fatalf("no files %s", pattern)
	}
	var src [][]byte
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		src = append(src, data)
	}
	var total int64
	for i := 0; total < int64(size); i++ {
		for j, data := range src {
			rel, data := file(i, j, bytes.Clone(data))
			name := filepath.Join(root, rel)
			if err := os.MkdirAll(filepath.Dir(name), 0o700); err != nil {
				b.Fatal(err)
			}
			if err := os.WriteFile(name, data, 0o600); err != nil {
				b.Fatal(err)
			}
			total += int64(len(data))
		}
	}
	return root, total
}

// BenchScan measures scan over root, which holds size bytes: every pass
// must read them all and find prompts.
func BenchScan(b *testing.B, scan ScanFunc, root string, size int64) {
	b.SetBytes(size)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		st, err := scan(root, func(transcript.Prompt) error { return nil })
		if err != nil || st.Bytes != size || st.Prompts == 0 {
			b.Fatalf("%+v %v", st, err)
		}
	}
}

// Respace returns data with JSON white space (spaces and tabs, never a
// newline: each line stays one line) after every '{', '[', ':' and ','
// and before every '}' and ']' that stand outside strings; seed picks how
// much goes where. A reader must read the result as it reads data. A
// string is taken to end at its line's end, as no JSON string spans lines.
func Respace(data []byte, seed uint64) []byte {
	pads := [...]string{"", " ", "\t", "  ", " \t "}
	out := make([]byte, 0, len(data)*2)
	inStr, esc := false, false
	pad := func() {
		seed = seed*6364136223846793005 + 1442695040888963407
		out = append(out, pads[seed>>61%uint64(len(pads))]...)
	}
	for _, c := range data {
		switch {
		case c == '\n':
			inStr, esc = false, false
		case inStr:
			switch {
			case esc:
				esc = false
			case c == '\\':
				esc = true
			case c == '"':
				inStr = false
			}
		case c == '"':
			inStr = true
		case c == '}' || c == ']':
			pad()
		}
		out = append(out, c)
		if !inStr && (c == '{' || c == '[' || c == ':' || c == ',') {
			pad()
		}
	}
	return out
}

// TypedRuns reads the prompts as typed from a testdata manifest.
func TypedRuns(t testing.TB, path, harness string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Harnesses map[string]struct {
			Runs []struct {
				Typed string `json:"prompt_typed"`
			} `json:"runs"`
		} `json:"harnesses"`
	}
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range m.Harnesses[harness].Runs {
		out = append(out, r.Typed)
	}
	return out
}
