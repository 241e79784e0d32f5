package opencode

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"hist/lib/identity"
	"hist/lib/transcript"
	"hist/lib/transcript/internal/ttest"
)

func TestRecallPath(t *testing.T) {
	env := func(m map[string]string) transcript.Env { return func(k string) string { return m[k] } }
	for _, c := range []struct {
		env  map[string]string
		want string
	}{
		{nil, "/h/.local/state/opencode/prompt-history.jsonl"},
		{map[string]string{"XDG_STATE_HOME": "/s"}, "/s/opencode/prompt-history.jsonl"},
		{map[string]string{"XDG_STATE_HOME": "rel"}, "/h/.local/state/opencode/prompt-history.jsonl"},
	} {
		if got := RecallPath(env(c.env), "/h"); got != c.want {
			t.Errorf("%v: got %+v", c.env, got)
		}
	}
}

func TestOpencodeRealHistory(t *testing.T) {
	typed := ttest.TypedRuns(t, "testdata/recall/manifest.json", "opencode-tui")
	// A copy, to give it a known time.
	path := filepath.Join(t.TempDir(), "prompt-history.jsonl")
	data, err := os.ReadFile("testdata/recall/prompt-history.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	ttest.WriteFile(t, path, string(data))
	mt := time.Date(2026, 11, 30, 1, 30, 0, 0, time.UTC)
	os.Chtimes(path, mt, mt)
	got, st := ttest.Collect(t, ScanRecall, path)
	if len(got) != 3 {
		t.Fatalf("got %d: %q", len(got), ttest.Texts(got))
	}
	ttest.WantTexts(t, got[:2], typed[0], typed[1])
	// The paste: "[Pasted ~31 lines] " with the text in parts[0].
	if !identity.Same(got[2].Text, typed[2]) || !strings.HasPrefix(got[2].Text, "[oc-tui-03] a bracketed paste") {
		t.Errorf("the paste: %q", got[2].Text)
	}
	for _, p := range got {
		if p.TS != mt.UnixMilli() || !p.Approx || p.Cwd != "" || p.Session != "" || p.Src != transcript.SrcOpencode {
			t.Errorf("got %+v", p)
		}
	}
	if st.Files != 1 || st.Malformed != 0 {
		t.Errorf("stats %+v", st)
	}
}

func TestOpencodeExpand(t *testing.T) {
	paste := func(start, end int, value, text string) opencodePart {
		p := opencodePart{Type: "text", Text: text}
		p.Source = &struct {
			Text *struct {
				Start int    `json:"start"`
				End   int    `json:"end"`
				Value string `json:"value"`
			} `json:"text"`
		}{Text: &struct {
			Start int    `json:"start"`
			End   int    `json:"end"`
			Value string `json:"value"`
		}{start, end, value}}
		return p
	}
	for _, c := range []struct {
		input string
		parts []opencodePart
		want  string
	}{
		{"look: [Pasted ~3 lines] ok", []opencodePart{paste(6, 23, "[Pasted ~3 lines]", "a\nb\nc")}, "look: a\nb\nc ok"},
		// Offsets count UTF-16 units: "🚀" is two.
		{"🚀 [Pasted ~2 lines]", []opencodePart{paste(3, 20, "[Pasted ~2 lines]", "x\ny")}, "🚀 x\ny"},
		// Two pastes.
		{"[Pasted ~2 lines] and [Pasted ~3 lines]", []opencodePart{paste(0, 17, "[Pasted ~2 lines]", "1\n2"), paste(22, 39, "[Pasted ~3 lines]", "3\n4\n5")}, "1\n2 and 3\n4\n5"},
		// Offsets that do not fit: found by value.
		{"x [Pasted ~2 lines]", []opencodePart{paste(40, 57, "[Pasted ~2 lines]", "p\nq")}, "x p\nq"},
		// A file mention is in the input already.
		{"see @a.go", []opencodePart{{Type: "file", Text: "ignored"}}, "see @a.go"},
		// A placeholder whose text is gone stays.
		{"[Pasted ~2 lines]", []opencodePart{paste(0, 17, "[Pasted ~9 lines]", "zz")}, "[Pasted ~2 lines]"},
		{"  ", []opencodePart{{Type: "text", Text: "bare part"}}, "bare part"},
	} {
		if got := opencodeExpand(c.input, c.parts); got != c.want {
			t.Errorf("%q: got %q, want %q", c.input, got, c.want)
		}
	}
}

func TestOpencodeHistoryLines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "prompt-history.jsonl")
	ttest.WriteFile(t, path, strings.Join([]string{
		`{"input":"kept","parts":[],"mode":"normal"}`,
		`{"input":"ls -la","parts":[],"mode":"shell"}`,
		`{"input":"/greet Ada","parts":[]}`,
		`{"input":"   ","parts":[]}`,
		`{"parts":[]}`,
		`{broken`,
		`{"input":"no mode"}`,
	}, "\n"))
	got, st := ttest.Collect(t, ScanRecall, path)
	ttest.WantTexts(t, got, "kept", "no mode")
	if st.Malformed != 2 {
		t.Errorf("stats %+v", st)
	}
	stop := errors.New("stop")
	if _, err := ScanRecall(path, func(transcript.Prompt) error { return stop }); err != stop {
		t.Errorf("err %v", err)
	}
	got, st = ttest.Collect(t, ScanRecall, path+".missing")
	if len(got) != 0 || !reflect.DeepEqual(st, transcript.Stats{}) {
		t.Errorf("missing: %v %+v", got, st)
	}
}

// FuzzOpencodeHistoryLines: any content parses without panic and yields
// only capturable prompts.
func FuzzOpencodeHistoryLines(f *testing.F) {
	if data, err := os.ReadFile("testdata/recall/prompt-history.jsonl"); err == nil {
		for _, l := range bytes.Split(data, []byte("\n")) {
			f.Add(l)
		}
	}
	f.Add([]byte(`{"input":"🚀 [Pasted ~2 lines]","parts":[{"type":"text","text":"a\nb","source":{"text":{"start":3,"end":20,"value":"[Pasted ~2 lines]"}}}]}`))
	f.Add([]byte(`{"input":"ab","parts":[{"type":"text","text":"x","source":{"text":{"start":2,"end":1,"value":""}}},{"type":"text","text":"y","source":{"text":{"start":-5,"end":99,"value":"b"}}}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var st transcript.Stats
		err := parseOpencodeHistory(bytes.NewReader(data), "fuzz", &st, func(text string) error {
			if !identity.Capturable(text) {
				t.Fatalf("emitted %q", text)
			}
			return nil
		})
		if err != nil || st.Bytes != int64(len(data)) {
			t.Fatalf("n=%d err=%v", st.Bytes, err)
		}
	})
}
