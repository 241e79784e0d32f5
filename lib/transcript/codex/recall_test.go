//go:build unix

package codex

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"

	"hist/lib/identity"
	"hist/lib/transcript"
	"hist/lib/transcript/internal/ttest"
)

func TestRecallPath(t *testing.T) {
	env := func(m map[string]string) transcript.Env { return func(k string) string { return m[k] } }
	if got := RecallPath(env(nil), "/h"); got != "/h/.codex/history.jsonl" {
		t.Errorf("got %+v", got)
	}
	if got := RecallPath(env(map[string]string{"CODEX_HOME": "/c"}), "/h"); got != "/c/history.jsonl" {
		t.Errorf("got %+v", got)
	}
}

func TestCodexRealHistory(t *testing.T) {
	typed := ttest.TypedRuns(t, "testdata/recall/manifest.json", "codex-tui")
	got, st := ttest.Collect(t, ScanRecall, "testdata/recall/history.jsonl")
	if len(got) != 3 {
		t.Fatalf("got %d prompts", len(got))
	}
	ttest.WantTexts(t, got[:2], typed[0], typed[1])
	if !identity.Same(got[2].Text, typed[2]) || !strings.Contains(got[2].Text, "pasted line 30") {
		t.Errorf("the paste: %q", got[2].Text)
	}
	for i, ts := range []int64{1796002130000, 1796002136000, 1796002141000} {
		p := got[i]
		if p.TS != ts || p.Approx || p.Session != "01a22a11-9138-7f11-aa24-336db67b2278" || p.Src != transcript.SrcCodex || p.Key != "" {
			t.Errorf("prompt %d: %+v", i, p)
		}
		// Joined to the session's rollout.
		if p.Cwd != "/tmp/lab/wd/codex-tui/tui_proj" {
			t.Errorf("prompt %d: cwd %q", i, p.Cwd)
		}
	}
	if st.Files != 1 || st.Malformed != 0 || st.Bytes != 2596 {
		t.Errorf("stats %+v", st)
	}
}

func TestCodexHistoryLines(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "history.jsonl")
	ttest.WriteFile(t, path, strings.Join([]string{
		`{"session_id":"s1","ts":1700000000,"text":"seconds"}`,
		`{"conversation_id":"s2","ts":1700000001,"text":"older builds"}`,
		`{"session_id":"s1","ts":1700000002000,"text":"already milliseconds"}`,
		`{"session_id":"s1","text":"no time"}`,
		`{"session_id":"s1","ts":1700000003,"text":"/prompts:greet Ada"}`,
		`{"session_id":"s1","ts":1700000004,"text":"!ls -la"}`,
		`{"session_id":"s1","ts":1700000005,"text":"  \n"}`,
		`{"session_id":"s1","ts":1700000006}`,
		`not json`,
		``,
		`{"session_id":"s3","ts":1700000007,"text":"multi\nline \"quoted\""}`,
	}, "\n"))
	mt := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	os.Chtimes(path, mt, mt)
	// A compressed rollout gives s3's cwd.
	enc, _ := zstd.NewWriter(nil)
	meta := `{"timestamp":"2026-01-02T03:04:05.000Z","type":"session_meta","payload":{"id":"s3","cwd":"/from/zst"}}` + "\n"
	id := "0199aaaa-0000-7000-8000-000000000003"
	ttest.WriteFile(t, filepath.Join(dir, "archived_sessions", "rollout-2026-01-02T03-04-05-"+id+".jsonl.zst"), string(enc.EncodeAll([]byte(strings.ReplaceAll(meta, `"s3"`, `"`+id+`"`)), nil)))
	data, _ := os.ReadFile(path)
	ttest.WriteFile(t, path, strings.ReplaceAll(string(data), `"s3"`, `"`+id+`"`))
	os.Chtimes(path, mt, mt)

	got, st := ttest.Collect(t, ScanRecall, path)
	ttest.WantTexts(t, got, "seconds", "older builds", "already milliseconds", "no time", "multi\nline \"quoted\"")
	if got[0].TS != 1700000000000 || got[1].Session != "s2" || got[2].TS != 1700000002000 {
		t.Errorf("got %+v", got[:3])
	}
	if got[3].TS != mt.UnixMilli() || !got[3].Approx {
		t.Errorf("no time: %+v", got[3])
	}
	if got[4].Cwd != "/from/zst" || got[0].Cwd != "" {
		t.Errorf("cwd: %+v", got)
	}
	if st.Malformed != 2 {
		t.Errorf("stats %+v", st)
	}
}

func TestCodexHistoryFiles(t *testing.T) {
	dir := t.TempDir()
	t.Run("missing", func(t *testing.T) {
		got, st := ttest.Collect(t, ScanRecall, filepath.Join(dir, "none.jsonl"))
		if len(got) != 0 || !reflect.DeepEqual(st, transcript.Stats{}) {
			t.Errorf("%v %+v", got, st)
		}
	})
	t.Run("a folder", func(t *testing.T) {
		os.Mkdir(filepath.Join(dir, "d.jsonl"), 0o700)
		_, st := ttest.Collect(t, ScanRecall, filepath.Join(dir, "d.jsonl"))
		if st.Skipped != 1 {
			t.Errorf("%+v", st)
		}
	})
	t.Run("a fifo does not block", func(t *testing.T) {
		p := filepath.Join(dir, "fifo.jsonl")
		if err := syscall.Mkfifo(p, 0o600); err != nil {
			t.Skip("mkfifo:", err)
		}
		done := make(chan transcript.Stats, 1)
		go func() {
			st, _ := ScanRecall(p, func(transcript.Prompt) error { return nil })
			done <- st
		}()
		select {
		case st := <-done:
			if st.Skipped != 1 {
				t.Errorf("%+v", st)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("blocked on a FIFO")
		}
	})
	t.Run("emit error", func(t *testing.T) {
		stop := errors.New("stop")
		_, err := ScanRecall("testdata/recall/history.jsonl", func(transcript.Prompt) error { return stop })
		if err != stop {
			t.Errorf("err %v", err)
		}
	})
}

// FuzzCodexHistoryLines: any content parses without panic, and what comes
// out is capturable and not a shell command.
func FuzzCodexHistoryLines(f *testing.F) {
	if data, err := os.ReadFile("testdata/recall/history.jsonl"); err == nil {
		for _, l := range bytes.Split(data, []byte("\n")) {
			f.Add(l)
		}
	}
	f.Add([]byte(`{"conversation_id":"c","ts":1.5e9,"text":"x"}` + "\n" + `{"ts":"12","text":"y"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var st transcript.Stats
		err := parseCodexHistory(bytes.NewReader(data), "fuzz", &st, func(l codexLine) error {
			if !identity.Capturable(l.text) || strings.HasPrefix(l.text, "!") || l.ts < 0 {
				t.Fatalf("emitted %+v", l)
			}
			return nil
		})
		if err != nil || st.Bytes != int64(len(data)) {
			t.Fatalf("n=%d err=%v", st.Bytes, err)
		}
	})
}
