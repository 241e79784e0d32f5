// Package ttest holds test helpers the transcript readers' tests share.
// Only tests import it.
package ttest

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"hist/lib/transcript"
)

// ScanFunc is a reader's scan of the transcripts under root.
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

// CheckOrderAndStop checks that scan over root emits want in order,
// reading files files, and that an error returned by emit (at the 10th
// prompt: want must hold more) stops the scan at once.
func CheckOrderAndStop(t *testing.T, scan ScanFunc, root string, want []string, files int) {
	t.Helper()
	got, st := Collect(t, scan, root)
	WantTexts(t, got, want...)
	if st.Files != files || st.Prompts != len(want) {
		t.Errorf("stats %+v", st)
	}
	stop := errors.New("enough")
	n := 0
	st, err := scan(root, func(p transcript.Prompt) error {
		if n++; n == 10 {
			return stop
		}
		return nil
	})
	if err != stop || n != 10 || st.Prompts != 9 {
		t.Errorf("emit error: err %v, %d calls, stats %+v", err, n, st)
	}
}

// CheckReadErrorStop checks that scan over root stops with a
// *transcript.ReadError for bad, after emitting want (in order) from files
// files.
func CheckReadErrorStop(t *testing.T, scan ScanFunc, root, bad string, want []string, files int) {
	t.Helper()
	var got []string
	st, err := scan(root, func(p transcript.Prompt) error {
		got = append(got, p.Text)
		return nil
	})
	if re, ok := errors.AsType[*transcript.ReadError](err); !ok || re.Path != bad {
		t.Fatalf("err = %v", err)
	}
	if !reflect.DeepEqual(got, want) || st.Prompts != len(want) || st.Files != files {
		t.Errorf("before the error: %d prompts %q, stats %+v", len(got), got, st)
	}
}

// TypedRuns reads the prompts as typed, run by run, of one harness from a
// fixture manifest (testdata/manifest.json).
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
