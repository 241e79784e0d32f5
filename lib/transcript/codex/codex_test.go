package codex

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"

	"hist/lib/identity"
	"hist/lib/transcript"
	"hist/lib/transcript/internal/ttest"
)

// manifestRun is one prompt sent to the real agent (testdata/manifest.json,
// copied from the shared fixtures).
type manifestRun struct {
	Seq    int    `json:"seq"`
	Cwd    string `json:"cwd"`
	Argv   string `json:"prompt_argv"`
	Typed  string `json:"prompt_typed"`
	Label  string `json:"label"`
	Answer bool   `json:"answered"`
}

func manifest(t *testing.T, harness string) map[int]manifestRun {
	t.Helper()
	b, err := os.ReadFile("testdata/manifest.json")
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Harnesses map[string]struct {
			Cwd  string        `json:"cwd"`
			Runs []manifestRun `json:"runs"`
		} `json:"harnesses"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	out := map[int]manifestRun{}
	h := m.Harnesses[harness]
	for _, r := range h.Runs {
		if r.Cwd == "" {
			r.Cwd = h.Cwd
		}
		out[r.Seq] = r
	}
	if len(out) == 0 {
		t.Fatalf("no runs for %s", harness)
	}
	return out
}

func ms(iso string) int64 {
	t, err := time.Parse(time.RFC3339Nano, iso)
	if err != nil {
		panic(err)
	}
	return t.UnixMilli()
}

func TestRealCodexExec(t *testing.T) {
	runs := manifest(t, "codex")
	got, st := ttest.Collect(t, scanAll, "testdata/codex")
	want := []int{1, 2, 3, 4, 6, 7, 8, 9} // cx-05 and cx-10 are commands
	if len(got) != len(want) {
		for _, p := range got {
			t.Logf("got %q", p.Text)
		}
		t.Fatalf("got %d prompts, want %d", len(got), len(want))
	}
	sessions := map[string]bool{}
	for i, seq := range want {
		p, r := got[i], runs[seq]
		if p.Text != r.Argv {
			t.Errorf("prompt %d: got %q, want %q", seq, p.Text, r.Argv)
		}
		if p.Cwd != r.Cwd {
			t.Errorf("prompt %d: cwd %q, want %q", seq, p.Cwd, r.Cwd)
		}
		if p.Src != transcript.SrcCodex || p.Approx || p.Key == "" {
			t.Errorf("prompt %d: %+v", seq, p)
		}
		sessions[p.Session] = true
	}
	if got[0].TS != ms("2026-11-30T01:27:06.807Z") {
		t.Errorf("first prompt TS = %d", got[0].TS)
	}
	if got[0].Session != "01a22a10-14d3-7202-9166-9bdba41085bf" {
		t.Errorf("first prompt session = %q", got[0].Session)
	}
	if len(sessions) != 3 {
		t.Errorf("sessions = %v, want 3", sessions)
	}
	if st.Files != 3 || st.Malformed != 0 || st.Skipped != 0 || st.Bytes != 49486+59271+89203 {
		t.Errorf("stats = %+v", st)
	}
}

func TestRealCodexTUI(t *testing.T) {
	runs := manifest(t, "codex-tui")
	got, st := ttest.Collect(t, scanAll, "testdata/codex-tui")
	if len(got) != 3 {
		t.Fatalf("got %d prompts, want 3: %+v", len(got), got)
	}
	for i, seq := range []int{1, 2, 3} {
		p, r := got[i], runs[seq]
		if seq < 3 && p.Text != r.Typed {
			t.Errorf("prompt %d: got %q, want %q", seq, p.Text, r.Typed)
		}
		// The paste: compared by identity (the TUI drops the final newline).
		if !identity.Same(p.Text, r.Typed) {
			t.Errorf("prompt %d: not the same prompt: %q", seq, p.Text)
		}
		if p.Cwd != "/tmp/lab/wd/codex-tui/tui_proj" || p.Session != "01a22a11-9138-7f11-aa24-336db67b2278" {
			t.Errorf("prompt %d: %+v", seq, p)
		}
	}
	if st.Files != 1 || st.Malformed != 0 {
		t.Errorf("stats = %+v", st)
	}
}

// --- hand-made rollouts ---

const sess = "0199aaaa-0000-7000-8000-000000000001"

type rb struct{ lines []string }

func (b *rb) add(ts, typ string, payload any) *rb {
	pj, err := json.Marshal(payload)
	if err != nil {
		panic(err)
	}
	b.lines = append(b.lines, fmt.Sprintf(`{"timestamp":%q,"type":%q,"payload":%s}`, ts, typ, pj))
	return b
}

func (b *rb) raw(line string) *rb { b.lines = append(b.lines, line); return b }

func (b *rb) meta(id, cwd string, extra map[string]any) *rb {
	p := map[string]any{"id": id, "timestamp": "2026-01-02T03:04:05.000Z", "cwd": cwd, "originator": "codex_cli_rs", "cli_version": "0.50.0", "source": "cli", "base_instructions": map[string]any{"text": "You are Codex."}}
	for k, v := range extra {
		p[k] = v
	}
	return b.add("2026-01-02T03:04:05.001Z", "session_meta", p)
}

func (b *rb) turn(ts, cwd string) *rb {
	return b.add(ts, "turn_context", map[string]any{"cwd": cwd, "approval_policy": "never", "model": "m"})
}

func (b *rb) userMsg(ts, text string, extra map[string]any) *rb {
	p := map[string]any{"type": "user_message", "message": text, "images": []string{}}
	for k, v := range extra {
		p[k] = v
	}
	return b.add(ts, "event_msg", p)
}

func (b *rb) item(ts, id, text string) *rb {
	return b.add(ts, "event_msg", map[string]any{"type": "item_completed", "thread_id": sess, "turn_id": "t",
		"item": map[string]any{"type": "UserMessage", "id": id, "content": []any{map[string]any{"type": "text", "text": text, "text_elements": []any{}}}}})
}

func (b *rb) resp(ts, role, text string) *rb {
	return b.add(ts, "response_item", map[string]any{"type": "message", "role": role, "content": []any{map[string]any{"type": "input_text", "text": text}}})
}

func (b *rb) agent(ts, text string) *rb {
	b.add(ts, "event_msg", map[string]any{"type": "item_completed", "item": map[string]any{"type": "AgentMessage", "id": "a", "content": []any{map[string]any{"type": "Text", "text": text}}}})
	return b.add(ts, "response_item", map[string]any{"type": "message", "role": "assistant", "content": []any{map[string]any{"type": "output_text", "text": text}}})
}

func (b *rb) bytes() []byte { return []byte(strings.Join(b.lines, "\n") + "\n") }

func write(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

func rolloutPath(root, id string) string {
	return filepath.Join(root, "sessions", "2026", "01", "02", "rollout-2026-01-02T03-04-05-"+id+".jsonl")
}

func texts(ps []transcript.Prompt) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.Text)
	}
	return out
}

func eq(t *testing.T, got []transcript.Prompt, want ...string) {
	t.Helper()
	g := texts(got)
	if strings.Join(g, "\x00") != strings.Join(want, "\x00") || len(g) != len(want) {
		t.Errorf("prompts:\n got %q\nwant %q", g, want)
	}
}

func readerPrompts(t *testing.T, data []byte) ([]transcript.Prompt, transcript.Stats) {
	t.Helper()
	var got []transcript.Prompt
	st, err := ScanReader(bytes.NewReader(data), "rollout-x.jsonl", func(p transcript.Prompt) error {
		got = append(got, p)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return got, st
}

func TestUserMessageEvents(t *testing.T) {
	b := (&rb{}).meta(sess, "/w", nil).
		resp("2026-01-02T03:04:06.000Z", "user", "<environment_context>\n  <cwd>/w</cwd>\n</environment_context>").
		resp("2026-01-02T03:04:06.100Z", "user", "hello there").
		userMsg("2026-01-02T03:04:06.200Z", "hello there", nil).
		userMsg("2026-01-02T03:04:07.000Z", "<user_instructions>be nice</user_instructions>", map[string]any{"kind": "user_instructions"}).
		userMsg("2026-01-02T03:04:08.000Z", "kept with kind plain", map[string]any{"kind": "plain"}).
		userMsg("2026-01-02T03:04:08.500Z", "dropped: an environment context kind", map[string]any{"kind": "environment_context"}).
		userMsg("2026-01-02T03:04:09.000Z", "  <environment_context>x</environment_context>", nil).
		resp("2026-01-02T03:04:10.000Z", "user", "a response item after events is never a prompt").
		userMsg("2026-01-02T03:04:11.000Z", "/prompts:greet Ada", nil).
		userMsg("2026-01-02T03:04:12.000Z", " \n\t", nil).
		userMsg("2026-01-02T03:04:13.000Z", "/tmp/x is full", nil)
	got, st := readerPrompts(t, b.bytes())
	eq(t, got, "hello there", "kept with kind plain", "/tmp/x is full")
	if got[0].TS != ms("2026-01-02T03:04:06.200Z") || got[0].Cwd != "/w" || got[0].Session != sess {
		t.Errorf("first = %+v", got[0])
	}
	if st.Files != 1 || st.Prompts != 3 || st.Malformed != 0 {
		t.Errorf("stats = %+v", st)
	}
}

func TestItemCompletedAndPairs(t *testing.T) {
	b := (&rb{}).meta(sess, "/w", nil).
		// A build that writes both shapes for one prompt: counted once.
		userMsg("2026-01-02T03:04:06.000Z", "same prompt", nil).
		item("2026-01-02T03:04:06.001Z", "i1", "same prompt").
		agent("2026-01-02T03:04:07.000Z", "answer").
		// Typed again later: a second event, in both shapes again.
		userMsg("2026-01-02T03:04:08.000Z", "same prompt", nil).
		item("2026-01-02T03:04:08.001Z", "i2", "same prompt").
		// Only the item shape.
		item("2026-01-02T03:04:09.000Z", "i3", "item only").
		item("2026-01-02T03:04:10.000Z", "i4", "item only")
	got, _ := readerPrompts(t, b.bytes())
	eq(t, got, "same prompt", "same prompt", "item only", "item only")
	if got[2].Key != sess+"/i3" {
		t.Errorf("key = %q", got[2].Key)
	}
}

func TestResponseItemFallback(t *testing.T) {
	b := (&rb{}).meta(sess, "/w", nil).
		resp("2026-01-02T03:04:06.000Z", "user", "# AGENTS.md instructions for /w\n\n<INSTRUCTIONS>x</INSTRUCTIONS>").
		resp("2026-01-02T03:04:06.000Z", "user", "<environment_context>\n</environment_context>").
		resp("2026-01-02T03:04:06.000Z", "developer", "<permissions>dev</permissions>").
		resp("2026-01-02T03:04:07.000Z", "user", "old style prompt").
		resp("2026-01-02T03:04:08.000Z", "assistant", "ok").
		resp("2026-01-02T03:04:09.000Z", "user", "<user_shell_command>ls</user_shell_command>").
		resp("2026-01-02T03:04:10.000Z", "user", "You were originally given instructions from a user over one or more turns. Here were the user messages:").
		resp("2026-01-02T03:04:11.000Z", "user", "second old prompt")
	got, _ := readerPrompts(t, b.bytes())
	eq(t, got, "old style prompt", "second old prompt")
	if got[1].TS != ms("2026-01-02T03:04:11.000Z") {
		t.Errorf("TS = %d", got[1].TS)
	}
}

func TestCwdFromTurnContext(t *testing.T) {
	b := (&rb{}).meta(sess, "/meta", nil).
		userMsg("2026-01-02T03:04:06.000Z", "first", nil).
		turn("2026-01-02T03:04:07.000Z", "/turn/one").
		userMsg("2026-01-02T03:04:08.000Z", "second", nil).
		turn("2026-01-02T03:04:09.000Z", "/turn/two").
		userMsg("2026-01-02T03:04:10.000Z", "third", nil)
	got, _ := readerPrompts(t, b.bytes())
	eq(t, got, "first", "second", "third")
	for i, want := range []string{"/meta", "/turn/one", "/turn/two"} {
		if got[i].Cwd != want {
			t.Errorf("prompt %d cwd = %q, want %q", i, got[i].Cwd, want)
		}
	}
}

func TestSubagentSkipped(t *testing.T) {
	root := t.TempDir()
	sub := (&rb{}).meta("0199aaaa-0000-7000-8000-0000000000aa", "/w", map[string]any{"source": map[string]any{"subagent": map[string]any{"thread_spawn": map[string]any{"parent_thread_id": sess}}}}).
		userMsg("2026-01-02T03:04:06.000Z", "model-written task", nil)
	write(t, rolloutPath(root, "0199aaaa-0000-7000-8000-0000000000aa"), sub.bytes())
	review := (&rb{}).meta("0199aaaa-0000-7000-8000-0000000000ab", "/w", map[string]any{"source": map[string]any{"subagent": "review"}}).
		userMsg("2026-01-02T03:04:06.000Z", "review this", nil)
	write(t, rolloutPath(root, "0199aaaa-0000-7000-8000-0000000000ab"), review.bytes())
	exec := (&rb{}).meta(sess, "/w", map[string]any{"source": "exec"}).
		userMsg("2026-01-02T03:04:06.000Z", "typed as an argv prompt", nil)
	write(t, rolloutPath(root, sess), exec.bytes())
	got, st := ttest.Collect(t, scanAll, root)
	eq(t, got, "typed as an argv prompt")
	if st.Subagent != 2 || st.Skipped != 0 || st.Files != 1 {
		t.Errorf("stats = %+v", st)
	}
}

func TestTimestampsAndKeys(t *testing.T) {
	b := (&rb{}).meta(sess, "/w", nil).
		userMsg("2026-01-02T03:04:06.123456Z", "precise", nil).
		raw(`{"timestamp":"not a time","type":"event_msg","payload":{"type":"user_message","message":"no time of its own"}}`)
	got, _ := readerPrompts(t, b.bytes())
	eq(t, got, "precise", "no time of its own")
	if got[0].TS != ms("2026-01-02T03:04:06.123Z") || got[0].Approx {
		t.Errorf("got %+v", got[0])
	}
	if got[1].TS != got[0].TS || !got[1].Approx {
		t.Errorf("a prompt without a time takes the last one, flagged: %+v", got[1])
	}
	if got[0].Key == got[1].Key || !strings.HasPrefix(got[0].Key, sess+"/") {
		t.Errorf("keys %q %q", got[0].Key, got[1].Key)
	}
}

func TestMalformedAndOddLines(t *testing.T) {
	b := (&rb{}).meta(sess, "/w", nil).
		raw(`{"timestamp":"2026-01-02T03:04:06.000Z","type":"event_msg","payload":{"type":"user_message","message":`). // truncated
		raw(`not json at all`).
		raw(``).
		raw(`{"timestamp":"2026-01-02T03:04:06.500Z","type":"event_msg","payload":{"type":"user_message","message":42}}`).
		// Keys in another order: read through the slow path.
		raw(`{"payload":{"message":"reordered keys","type":"user_message"},"type":"event_msg","timestamp":"2026-01-02T03:04:07.000Z"}`).
		raw(`{"timestamp":"2026-01-02T03:04:08.000Z","type":"event_msg","payload":{"message":"payload type last","type":"user_message"}}`).
		raw(`{"timestamp":"2026-01-02T03:04:09.000Z","type":"some_future_type","payload":{"type":"user_message","message":"not an event_msg"}}`)
	data := append(b.bytes(), []byte(`{"timestamp":"2026-01-02T03:04:10.000Z","type":"event_msg","payload":{"type":"user_message","message":"last line without newline"}}`)...)
	got, st := readerPrompts(t, data)
	eq(t, got, "reordered keys", "payload type last", "last line without newline")
	if st.Malformed != 3 {
		t.Errorf("malformed = %d, want 3", st.Malformed)
	}
}

func TestLongLines(t *testing.T) {
	huge := strings.Repeat("tool output 0123456789 ", 200000) // ~4.6 MB
	bigPrompt := "[big] " + strings.Repeat("pasted line with words\n", 150000)
	b := (&rb{}).meta(sess, "/w", nil).
		agent("2026-01-02T03:04:06.000Z", huge).
		add("2026-01-02T03:04:06.500Z", "response_item", map[string]any{"type": "function_call_output", "call_id": "c", "output": huge + `"role":"user"`}).
		item("2026-01-02T03:04:07.000Z", "i1", bigPrompt).
		userMsg("2026-01-02T03:04:08.000Z", "after the long lines", nil)
	got, st := readerPrompts(t, b.bytes())
	eq(t, got, bigPrompt, "after the long lines")
	if st.Malformed != 0 {
		t.Errorf("stats = %+v", st)
	}
}

func TestZstdAndPlainWins(t *testing.T) {
	root := t.TempDir()
	enc, _ := zstd.NewWriter(nil)
	a := (&rb{}).meta(sess, "/w", nil).userMsg("2026-01-02T03:04:06.000Z", "from the plain file", nil).bytes()
	aZst := (&rb{}).meta(sess, "/w", nil).userMsg("2026-01-02T03:04:06.000Z", "from the compressed copy", nil).bytes()
	write(t, rolloutPath(root, sess), a)
	write(t, rolloutPath(root, sess)+".zst", enc.EncodeAll(aZst, nil))
	id2 := "0199aaaa-0000-7000-8000-000000000002"
	z := (&rb{}).meta(id2, "/z", nil).userMsg("2026-01-02T03:04:07.000Z", "only compressed", nil).bytes()
	write(t, rolloutPath(root, id2)+".zst", enc.EncodeAll(z, nil))
	// The real rollouts, compressed, read the same as plain.
	real, _ := filepathGlob(t, "testdata/codex/sessions/*/*/*/*.jsonl")
	for _, f := range real {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		write(t, filepath.Join(root, "archived_sessions", filepath.Base(f)+".zst"), enc.EncodeAll(data, nil))
	}
	got, st := ttest.Collect(t, scanAll, root)
	want := []string{"from the plain file", "only compressed"}
	plain, _ := ttest.Collect(t, scanAll, "testdata/codex")
	want = append(want, texts(plain)...)
	eq(t, got, want...)
	if st.Skipped != 1 || st.Files != 2+len(real) {
		t.Errorf("stats = %+v", st)
	}
}

func filepathGlob(t *testing.T, pat string) ([]string, error) {
	t.Helper()
	m, err := filepath.Glob(pat)
	if err != nil || len(m) == 0 {
		t.Fatalf("glob %s: %v %v", pat, m, err)
	}
	return m, err
}

// A .zst that is not zstd, or is cut short, is passed over and named; the
// other rollouts are read, and so are the prompts before the fault.
func TestGarbageZstd(t *testing.T) {
	other := "0199aaaa-0000-7000-8000-0000000000ff"
	for name, tc := range map[string]struct {
		data []byte
		want []string
	}{
		"not zstd": {[]byte("this is not zstd at all\n"), []string{"fine"}},
		"truncated": {func() []byte {
			enc, _ := zstd.NewWriter(nil)
			b := &rb{}
			b.meta(sess, "/w", nil).userMsg("2026-01-02T03:04:06.000Z", "before the cut", nil)
			for range 3000 {
				b.agent("2026-01-02T03:04:07.000Z", "a long answer that pads the stream")
			}
			full := enc.EncodeAll(b.bytes(), nil)
			return full[:len(full)*3/4]
		}(), []string{"before the cut", "fine"}},
	} {
		t.Run(name, func(t *testing.T) {
			root := t.TempDir()
			path := rolloutPath(root, sess) + ".zst"
			write(t, path, tc.data)
			write(t, rolloutPath(root, other), (&rb{}).meta(other, "/w", nil).userMsg("2026-01-03T03:04:06.000Z", "fine", nil).bytes())
			got, st := ttest.Collect(t, scanAll, root)
			eq(t, got, tc.want...)
			if len(st.Undecodable) != 1 || st.Undecodable[0].Path != path || !strings.Contains(st.Undecodable[0].Err.Error(), "not a valid zstd stream") {
				t.Fatalf("undecodable %+v, want %s named", st.Undecodable, path)
			}
		})
	}
}

func TestArchivedCopyCountedOnce(t *testing.T) {
	root := t.TempDir()
	data := (&rb{}).meta(sess, "/w", nil).userMsg("2026-01-02T03:04:06.000Z", "only once", nil).
		item("2026-01-02T03:04:07.000Z", "i9", "also once").bytes()
	write(t, rolloutPath(root, sess), data)
	write(t, filepath.Join(root, "archived_sessions", filepath.Base(rolloutPath(root, sess))), data)
	got, st := ttest.Collect(t, scanAll, root)
	eq(t, got, "only once", "also once")
	if st.Files != 2 {
		t.Errorf("stats = %+v", st)
	}
}

func TestLegacyFork(t *testing.T) {
	parent := "0199aaaa-0000-7000-8000-00000000000a"
	child := "0199aaaa-0000-7000-8000-00000000000b"
	grand := "0199aaaa-0000-7000-8000-00000000000c"
	pb := (&rb{}).meta(parent, "/p", nil).
		userMsg("2026-01-02T03:00:00.000Z", "A", nil).agent("2026-01-02T03:00:01.000Z", "a").
		userMsg("2026-01-02T03:01:00.000Z", "B", nil).agent("2026-01-02T03:01:01.000Z", "b").
		userMsg("2026-01-02T03:02:00.000Z", "C", nil)
	// The fork copies the parent's items up to B (with new timestamps),
	// then the person types "D" and, again, "B".
	cb := (&rb{}).meta(child, "/p", map[string]any{"forked_from_id": parent}).
		meta(parent, "/p", nil).
		userMsg("2026-01-02T04:00:00.000Z", "A", nil).agent("2026-01-02T04:00:00.000Z", "a").
		userMsg("2026-01-02T04:00:00.001Z", "B", nil).agent("2026-01-02T04:00:00.001Z", "b").
		userMsg("2026-01-02T04:05:00.000Z", "D", nil).
		userMsg("2026-01-02T04:06:00.000Z", "B", nil)
	// A fork of the fork copies A, B, D, B.
	gb := (&rb{}).meta(grand, "/p", map[string]any{"forked_from_id": child}).
		meta(child, "/p", nil).meta(parent, "/p", nil).
		userMsg("2026-01-02T05:00:00.000Z", "A", nil).
		userMsg("2026-01-02T05:00:00.000Z", "B", nil).
		userMsg("2026-01-02T05:00:00.000Z", "D", nil).
		userMsg("2026-01-02T05:00:00.000Z", "B", nil).
		userMsg("2026-01-02T05:10:00.000Z", "E", nil)

	t.Run("with parents", func(t *testing.T) {
		root := t.TempDir()
		// Names sort the fork first, so the order of files does not matter.
		write(t, filepath.Join(root, "sessions/2026/01/02/rollout-2026-01-02T02-00-00-"+child+".jsonl"), cb.bytes())
		write(t, filepath.Join(root, "sessions/2026/01/02/rollout-2026-01-02T01-00-00-"+grand+".jsonl"), gb.bytes())
		write(t, filepath.Join(root, "sessions/2026/01/02/rollout-2026-01-02T03-00-00-"+parent+".jsonl"), pb.bytes())
		got, _ := ttest.Collect(t, scanAll, root)
		var pairs []string
		for _, p := range got {
			pairs = append(pairs, p.Text+"@"+p.Session[len(p.Session)-1:])
		}
		sort.Strings(pairs)
		// Each prompt once, under the session it was typed in.
		if want := "A@a B@a B@b C@a D@b E@c"; strings.Join(pairs, " ") != want {
			t.Errorf("got %v, want %s", pairs, want)
		}
	})
	t.Run("parent gone", func(t *testing.T) {
		root := t.TempDir()
		write(t, rolloutPath(root, child), cb.bytes())
		got, _ := ttest.Collect(t, scanAll, root)
		eq(t, got, "A", "B", "D", "B")
	})
	t.Run("paginated fork copies nothing", func(t *testing.T) {
		root := t.TempDir()
		write(t, rolloutPath(root, parent), pb.bytes())
		pg := (&rb{}).meta(child, "/p", map[string]any{"forked_from_id": parent, "history_mode": "paginated"}).
			userMsg("2026-01-02T04:00:00.000Z", "A", nil)
		write(t, rolloutPath(root, child), pg.bytes())
		got, _ := ttest.Collect(t, scanAll, root)
		eq(t, got, "A", "B", "C", "A")
	})
}

func TestEmitErrorStops(t *testing.T) {
	stop := errors.New("stop here")
	n := 0
	_, err := scanAll("testdata/codex", func(transcript.Prompt) error {
		n++
		if n == 2 {
			return stop
		}
		return nil
	})
	if err != stop || n != 2 {
		t.Fatalf("err = %v after %d prompts", err, n)
	}
	var re *transcript.ReadError
	if errors.As(err, &re) {
		t.Fatal("emit's error must not be a ReadError")
	}
}

func TestReadErrors(t *testing.T) {
	t.Run("unreadable rollout", func(t *testing.T) {
		root := t.TempDir()
		write(t, filepath.Join(root, "elsewhere", "x"), nil)
		path := rolloutPath(root, sess)
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		// A symlink named like a rollout that points at a folder: EISDIR.
		if err := os.Symlink(filepath.Join(root, "elsewhere"), path); err != nil {
			t.Fatal(err)
		}
		_, err := scanAll(root, func(transcript.Prompt) error { return nil })
		var re *transcript.ReadError
		if !errors.As(err, &re) || re.Path != path {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("sessions is a file", func(t *testing.T) {
		root := t.TempDir()
		write(t, filepath.Join(root, "sessions"), []byte("x"))
		_, err := scanAll(root, func(transcript.Prompt) error { return nil })
		if err != nil {
			t.Fatalf("a file named sessions holds no rollouts: %v", err)
		}
	})
	t.Run("missing root", func(t *testing.T) {
		st, err := scanAll(filepath.Join(t.TempDir(), "none"), func(transcript.Prompt) error { return nil })
		if err != nil || !reflect.DeepEqual(st, transcript.Stats{}) {
			t.Fatalf("got %+v, %v", st, err)
		}
	})
	t.Run("reader error", func(t *testing.T) {
		_, err := ScanReader(errReader{}, "r.jsonl", func(transcript.Prompt) error { return nil })
		var re *transcript.ReadError
		if !errors.As(err, &re) || re.Path != "r.jsonl" {
			t.Fatalf("err = %v", err)
		}
	})
}

type errReader struct{}

func (errReader) Read([]byte) (int, error) { return 0, errors.New("device gone") }

func TestDefaultRoot(t *testing.T) {
	env := func(m map[string]string) transcript.Env { return func(k string) string { return m[k] } }
	if got := DefaultRoot(env(nil), "/home/a"); got != "/home/a/.codex" {
		t.Errorf("got %q", got)
	}
	if got := DefaultRoot(env(map[string]string{"CODEX_HOME": "/x/codex"}), "/home/a"); got != "/x/codex" {
		t.Errorf("got %q", got)
	}
}

func TestSessionFromName(t *testing.T) {
	for name, want := range map[string]string{
		"/a/rollout-2026-11-30T01-27-06-01a22a10-14d3-7202-9166-9bdba41085bf.jsonl":  "01a22a10-14d3-7202-9166-9bdba41085bf",
		"rollout-2026-11-30T01-27-06-01a22a10-14d3-7202-9166-9bdba41085bf.jsonl.zst": "01a22a10-14d3-7202-9166-9bdba41085bf",
		"rollout-2026-11-30T01-27-06-01a22a10-14d3-7202-9166-9bdba41085bf_x1.jsonl":  "01a22a10-14d3-7202-9166-9bdba41085bf",
		"rollout-short.jsonl": "",
	} {
		if got := sessionFromName(name); got != want {
			t.Errorf("%s: %q", name, got)
		}
	}
	// Without a session_meta line, the file name gives the session.
	got, _ := readerPrompts(t, (&rb{}).userMsg("2026-01-02T03:04:06.000Z", "no header", nil).bytes())
	if len(got) != 1 || got[0].Session != "" {
		t.Errorf("got %+v", got)
	}
}

// oldestItem is a bare response item of the oldest rollout format.
func oldestItem(role, text string) string {
	typ := "input_text"
	if role == "assistant" {
		typ = "output_text"
	}
	b, err := json.Marshal(map[string]any{"type": "message", "role": role, "content": []any{map[string]any{"type": typ, "text": text}}})
	if err != nil {
		panic(err)
	}
	return string(b)
}

// The oldest rollouts have no session_meta: a first line with the session
// id, time and instructions, then bare response items (no timestamps) and
// state lines. Their typed prompts are read, at the session's time
// (approximate), with the cwd of the <environment_context> message when
// there is one, and without a cwd (never dropped) when there is none.
func TestOldestFormat(t *testing.T) {
	const id = "5973b6c0-94b8-487b-a530-2aeb6098ae0e"
	head := `{"id":"` + id + `","timestamp":"2025-05-07T17:24:21.123Z","instructions":"be brief"}`
	envCtx := "<environment_context>\n  <cwd>/w/old</cwd>\n  <approval_policy>on-request</approval_policy>\n</environment_context>"
	fn := `{"type":"function_call","name":"shell","arguments":"{\"command\":[\"ls\"]}","call_id":"c1"}`
	out := `{"type":"function_call_output","call_id":"c1","output":"{\"output\":\"a\\nb\"}"}`
	withEnv := (&rb{}).raw(head).raw(`{"record_type":"state"}`).
		raw(oldestItem("user", envCtx)).
		raw(oldestItem("user", "list the files")).
		raw(fn).raw(out).raw(`{"record_type":"state","previous_response_id":"r1"}`).
		raw(oldestItem("assistant", "a and b")).
		raw(oldestItem("user", "list the files")).
		raw(oldestItem("user", "<user_instructions>\nbe brief\n</user_instructions>"))
	noEnv := (&rb{}).raw(head).raw(oldestItem("user", "where am I?")).raw(oldestItem("assistant", "no idea"))
	envLater := (&rb{}).raw(head).raw(oldestItem("user", "typed first")).raw(oldestItem("user", envCtx)).raw(oldestItem("user", "then this"))
	for _, tc := range []struct {
		name  string
		data  []byte
		texts []string
		cwd   string
	}{
		{"environment context", withEnv.bytes(), []string{"list the files", "list the files"}, "/w/old"},
		{"no cwd anywhere", noEnv.bytes(), []string{"where am I?"}, ""},
		{"environment context after the first prompt", envLater.bytes(), []string{"typed first", "then this"}, "/w/old"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			// The oldest builds wrote the rollouts straight into sessions/.
			write(t, filepath.Join(root, "sessions", "rollout-2025-05-07T17-24-21-"+id+".jsonl"), tc.data)
			got, st := ttest.Collect(t, scanAll, root)
			eq(t, got, tc.texts...)
			for _, p := range got {
				if p.Cwd != tc.cwd || p.Session != id || p.TS != 1746638661123 || !p.Approx || p.Src != "codex" {
					t.Errorf("prompt %+v", p)
				}
			}
			if st.Files != 1 || st.Malformed != 0 {
				t.Errorf("stats %+v", st)
			}
			rgot, _ := readerPrompts(t, tc.data)
			for i := range got {
				got[i].File = "rollout-x.jsonl"
			}
			if !reflect.DeepEqual(rgot, got) {
				t.Errorf("ScanReader: %+v, Scan: %+v", rgot, got)
			}
		})
	}
	// A bare item in a rollout of a later format is not read as one.
	later := (&rb{}).meta(sess, "/w", nil).raw(oldestItem("user", "not the oldest format"))
	got, _ := readerPrompts(t, later.bytes())
	eq(t, got)
}

// scanAll is Scan keeping every file.
func scanAll(root string, emit func(transcript.Prompt) error) (transcript.Stats, error) {
	return Scan(root, nil, emit)
}

// ScanReader reads one rollout (plain JSONL) from r; name is its path, used
// for the session id when the rollout has no session_meta and in errors.
// It applies every rule of Scan except the legacy-fork one, which needs the
// parent's file. A read error is returned as a *transcript.ReadError.
func ScanReader(r io.Reader, name string, emit func(transcript.Prompt) error) (transcript.Stats, error) {
	s := newScanner(emit)
	cr := &countReader{r: r}
	err := s.parse(cr, name)
	s.stats.Bytes += cr.n
	if err != nil {
		return s.stats, err
	}
	return s.stats, s.flushForks()
}
