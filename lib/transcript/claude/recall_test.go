//go:build unix

package claude

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"hist/lib/identity"
	"hist/lib/transcript"
	"hist/lib/transcript/internal/ttest"
)

// claudeHome writes history.jsonl (and paste-cache files) into a fresh
// config folder and returns its path.
func claudeHome(t *testing.T, history string, pastes map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	src := RecallPath(func(k string) string {
		if k == "CLAUDE_CONFIG_DIR" {
			return dir
		}
		return ""
	}, "/nowhere")
	if err := os.WriteFile(src, []byte(history), 0o600); err != nil {
		t.Fatal(err)
	}
	for name, body := range pastes {
		p := filepath.Join(dir, "paste-cache", name)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return src
}

func TestRecallPath(t *testing.T) {
	for _, tc := range []struct {
		dir, want string
	}{
		{"", "/home/u/.claude/history.jsonl"},
		{"/cfg", "/cfg/history.jsonl"},
		{"~/alt", "/home/u/alt/history.jsonl"},
	} {
		src := RecallPath(func(k string) string {
			if k == "CLAUDE_CONFIG_DIR" {
				return tc.dir
			}
			return ""
		}, "/home/u")
		if src != tc.want {
			t.Errorf("CLAUDE_CONFIG_DIR=%q: %+v, want %q", tc.dir, src, tc.want)
		}
	}
	if src := RecallPath(nil, "/home/u"); src != "/home/u/.claude/history.jsonl" {
		t.Errorf("nil env: %+v", src)
	}
}

// The real TUI's history.jsonl: 3 of its 4 lines are prompts; line 3's
// "[Pasted text #1 +31 lines]" resolves to paste-cache/<contentHash>.txt and
// "/greet Ada …" is skipped.
func TestClaudeRealHistory(t *testing.T) {
	b, err := os.ReadFile("testdata/recall/manifest.json")
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Harnesses map[string][]struct {
			Typed string `json:"prompt_typed"`
			Cwd   string `json:"cwd"`
		} `json:"harnesses"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	runs := m.Harnesses["claude-tui"]
	if len(runs) != 4 {
		t.Fatalf("manifest: %d runs", len(runs))
	}
	src := RecallPath(func(k string) string {
		if k == "CLAUDE_CONFIG_DIR" {
			return "testdata/recall"
		}
		return ""
	}, "/nowhere")
	got, st := ttest.Collect(t, ScanRecall, src)
	want := []string{runs[0].Typed, runs[1].Typed, runs[2].Typed}
	if g := ttest.Texts(got); !reflect.DeepEqual(g, want) {
		t.Fatalf("prompts:\n got %q\nwant %q", g, want)
	}
	for i, ts := range []int64{1796002094014, 1796002101863, 1796002107263} {
		p := got[i]
		if p.TS != ts || p.Cwd != runs[i].Cwd || p.Session != "b5ae1795-cf05-419d-bdbb-2bb89b32ac16" ||
			p.Src != transcript.SrcClaude || p.Approx || p.Key != "" {
			t.Errorf("prompt %d: %+v", i, p)
		}
	}
	fi, _ := os.Stat(src)
	if !reflect.DeepEqual(st, transcript.Stats{Files: 1, Bytes: fi.Size(), Prompts: 3}) {
		t.Errorf("stats %+v", st)
	}
}

func TestClaudeHistoryLines(t *testing.T) {
	src := claudeHome(t, strings.Join([]string{
		`{"display":"plain prompt","pastedContents":{},"timestamp":1767000000000,"project":"/w/a","sessionId":"s1"}`,
		`{"display":"review [Pasted text #1 +2 lines] and [Pasted text #2] please","pastedContents":{"1":{"id":1,"type":"text","content":"l1\nl2\nl3"},"2":{"id":2,"type":"text","contentHash":"abc123"}},"timestamp":1767000001000,"project":"/w/a","sessionId":"s1"}`,
		`{"display":"gone [Pasted text #1 +9 lines]","pastedContents":{"1":{"id":1,"type":"text","contentHash":"missing0"}},"timestamp":1767000002000,"project":"/w/a"}`,
		`{"display":"start [...Truncated text #3 +120 lines...] end","pastedContents":{"x":{"id":3,"type":"text","content":"MIDDLE"}},"timestamp":1767000003000,"project":"/w/a"}`,
		`{"display":"[Image #1] what is this","pastedContents":{"1":{"id":1,"type":"image","content":"iVBORw0KGgo="}},"timestamp":1767000004000,"project":"/w/a"}`,
		`{"display":"escape [Pasted text #1]","pastedContents":{"1":{"id":1,"type":"text","contentHash":"../../etc/passwd"}},"timestamp":1767000005000,"project":"/w/a"}`,
		`{"display":"odd [Pasted text #] [Pasted text #1 +x lines] [Pasted text #1","pastedContents":{"1":{"id":1,"content":"P"}},"timestamp":1767000006000,"project":"/w/a"}`,
		`{"display":"/model opus","pastedContents":{},"timestamp":1767000007000,"project":"/w/a"}`,
		`{"display":"  /clear","pastedContents":{},"timestamp":1767000008000,"project":"/w/a"}`,
		`{"display":"!ls -la","pastedContents":{},"timestamp":1767000009000,"project":"/w/a"}`,
		`{"display":"   ","pastedContents":{},"timestamp":1767000010000,"project":"/w/a"}`,
		`{"display":"no time","pastedContents":{},"project":"/w/b","sessionId":"s2"}`,
		`{"display":"odd paste entry","pastedContents":{"1":"code"},"timestamp":1767000011000,"project":"/w/a"}`,
		`{"display":"/tmp/out.log is empty, why","timestamp":1767000012000,"project":"/w/a"}`,
		`{"display":"[Pasted text #1]","pastedContents":{"1":{"id":1,"type":"text","content":" \n "}},"timestamp":1767000013000,"project":"/w/a"}`,
		`{"display":"[Pasted text #1 +1 lines]","pastedContents":{"1":{"id":1,"type":"text","content":"/model opus\nnow"}},"timestamp":1767000014000,"project":"/w/a"}`,
		``,
	}, "\n"), map[string]string{"abc123.txt": "FROM CACHE\n", "../passwd.txt": "no"})
	got, st := ttest.Collect(t, ScanRecall, src)
	want := []string{
		"plain prompt",
		"review l1\nl2\nl3 and FROM CACHE\n please",
		"gone [Pasted text #1 +9 lines]",
		"start MIDDLE end",
		"[Image #1] what is this",
		"escape [Pasted text #1]",
		"odd [Pasted text #] [Pasted text #1 +x lines] [Pasted text #1",
		"no time",
		"odd paste entry",
		"/tmp/out.log is empty, why",
	}
	if g := ttest.Texts(got); !reflect.DeepEqual(g, want) {
		t.Fatalf("prompts:\n got %q\nwant %q", g, want)
	}
	if p := got[0]; p != (transcript.Prompt{Text: "plain prompt", TS: 1767000000000, Cwd: "/w/a", Session: "s1", Src: "claude"}) {
		t.Errorf("prompt 0: %+v", p)
	}
	if p := got[7]; p.TS != 0 || !p.Approx || p.Cwd != "/w/b" || p.Session != "s2" {
		t.Errorf("no time: %+v", p)
	}
	if p := got[2]; p.Session != "" || p.Approx {
		t.Errorf("old line without sessionId: %+v", p)
	}
	if st.Malformed != 0 || st.Files != 1 {
		t.Errorf("stats %+v", st)
	}
}

func TestClaudeHistoryMalformed(t *testing.T) {
	content := strings.Join([]string{
		`{"display":"ok one","timestamp":1767000000000,"project":"/w"}`,
		`not json`,
		`{"display":42,"timestamp":1,"project":"/w"}`,
		`{"display":"bad paste map","pastedContents":[1,2],"timestamp":1,"project":"/w"}`,
		`{"display":"ok two","timestamp":1767000000001,"project":"/w"}`,
		`{"display":"torn`,
	}, "\n")
	got, st := ttest.Collect(t, ScanRecall, claudeHome(t, content, nil))
	if g := ttest.Texts(got); !reflect.DeepEqual(g, []string{"ok one", "ok two"}) {
		t.Errorf("prompts %q", g)
	}
	if st.Malformed != 4 || st.Bytes != int64(len(content)) {
		t.Errorf("stats %+v, want 4 malformed of %d bytes", st, len(content))
	}
}

func TestClaudeHistoryFiles(t *testing.T) {
	t.Run("missing", func(t *testing.T) {
		got, st := ttest.Collect(t, ScanRecall, filepath.Join(t.TempDir(), "history.jsonl"))
		if len(got) != 0 || !reflect.DeepEqual(st, transcript.Stats{}) {
			t.Errorf("%v %+v", got, st)
		}
	})
	t.Run("directory in place of the file", func(t *testing.T) {
		p := filepath.Join(t.TempDir(), "history.jsonl")
		if err := os.Mkdir(p, 0o700); err != nil {
			t.Fatal(err)
		}
		_, err := ScanRecall(p, func(transcript.Prompt) error { return nil })
		var re *transcript.ReadError
		if !errors.As(err, &re) || re.Path != p || !errors.Is(err, syscall.EISDIR) {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("directory in place of a paste", func(t *testing.T) {
		src := claudeHome(t, `{"display":"[Pasted text #1 +3 lines]","pastedContents":{"1":{"id":1,"type":"text","contentHash":"beef"}},"timestamp":1,"project":"/w"}`+"\n", nil)
		p := filepath.Join(filepath.Dir(src), "paste-cache", "beef.txt")
		if err := os.MkdirAll(p, 0o700); err != nil {
			t.Fatal(err)
		}
		n := 0
		_, err := ScanRecall(src, func(transcript.Prompt) error { n++; return nil })
		var re *transcript.ReadError
		if !errors.As(err, &re) || re.Path != p || n != 0 {
			t.Errorf("err = %v, emitted %d", err, n)
		}
	})
	t.Run("FIFO", func(t *testing.T) {
		p := filepath.Join(t.TempDir(), "history.jsonl")
		if err := syscall.Mkfifo(p, 0o600); err != nil {
			t.Fatal(err)
		}
		done := make(chan struct{})
		go func() {
			defer close(done)
			got, st := ttest.Collect(t, ScanRecall, p)
			if len(got) != 0 || st.Skipped != 1 {
				t.Errorf("%v %+v", got, st)
			}
		}()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatal("blocked on a FIFO")
		}
	})
	t.Run("emit error", func(t *testing.T) {
		stop := errors.New("stop")
		src := claudeHome(t, `{"display":"a","timestamp":1,"project":"/w"}`+"\n"+`{"display":"b","timestamp":2,"project":"/w"}`+"\n", nil)
		n := 0
		st, err := ScanRecall(src, func(transcript.Prompt) error { n++; return stop })
		if err != stop || n != 1 || st.Prompts != 0 {
			t.Errorf("err %v n %d st %+v", err, n, st)
		}
	})
}

// FuzzClaudeHistoryLine: no line makes the history parser panic; what it
// accepts is capturable-looking text.
func FuzzClaudeHistoryLine(f *testing.F) {
	b, err := os.ReadFile("testdata/recall/history.jsonl")
	if err != nil {
		f.Fatal(err)
	}
	for _, l := range bytes.Split(b, []byte("\n")) {
		f.Add(l)
	}
	f.Add([]byte(`{"display":"a [Pasted text #7 +1 lines] [...Truncated text #8 +2 lines...]","pastedContents":{"7":{"id":7,"contentHash":"h"},"k":{"id":8,"content":"c"}},"timestamp":1.5e12}`))
	read := func(hash string) (string, bool, error) {
		if hash == "h" {
			return "cached", true, nil
		}
		return "", false, nil
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		p, ok, bad, err := claudeHistoryPrompt(line, read)
		if err != nil || (ok && bad) {
			t.Fatalf("err %v ok %v bad %v", err, ok, bad)
		}
		if ok && (identity.IsBlank(p.Text) || p.Src != transcript.SrcClaude) {
			t.Fatalf("accepted %+v", p)
		}
	})
}
