//go:build unix

package claude

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"syscall"
	"testing"
	"testing/iotest"
	"time"

	"hist/lib/identity"
	"hist/lib/transcript"
	"hist/lib/transcript/internal/ttest"
)

func byTime(ps []transcript.Prompt) []transcript.Prompt {
	sort.SliceStable(ps, func(i, j int) bool { return ps[i].TS < ps[j].TS })
	return ps
}

// scanString runs ScanReader over s.
func scanString(s string, emit func(transcript.Prompt) error) (transcript.Stats, error) {
	return ScanReader(strings.NewReader(s), "test.jsonl", emit)
}

type manifestRun struct {
	Seq     int    `json:"seq"`
	Session string `json:"session"`
	Cwd     string `json:"cwd"`
	Argv    string `json:"prompt_argv"`
	Typed   string `json:"prompt_typed"`
}

func loadManifest(t *testing.T, harness string) []manifestRun {
	t.Helper()
	b, err := os.ReadFile("testdata/manifest.json")
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Harnesses map[string][]manifestRun `json:"harnesses"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m.Harnesses[harness]
}

func totalSize(t *testing.T, pattern string) int64 {
	files, _ := filepath.Glob(pattern)
	var n int64
	for _, f := range files {
		fi, err := os.Stat(f)
		if err != nil {
			t.Fatal(err)
		}
		n += fi.Size()
	}
	return n
}

// The three real `claude -p` transcripts yield cc-01..04 and cc-06..09,
// byte for byte; cc-05 (/frobnicate, sent verbatim) and cc-10 (a
// <command-name> record plus its isMeta expansion) are skipped, and so are
// the queue-operation, last-prompt and api-request-blob copies.
func TestRealTranscripts(t *testing.T) {
	runs := loadManifest(t, "claude")
	if len(runs) != 10 {
		t.Fatalf("manifest has %d claude runs", len(runs))
	}
	var want []manifestRun
	for _, r := range runs {
		if r.Seq != 5 && r.Seq != 10 {
			want = append(want, r)
		}
	}
	got, st := ttest.Collect(t, scanAll, "testdata/claude/projects")
	got = byTime(got)
	if len(got) != 8 {
		t.Fatalf("got %d prompts, want 8: %q", len(got), ttest.Texts(got))
	}
	sessions := map[string]string{}
	for i, p := range got {
		w := want[i]
		if p.Text != w.Argv {
			t.Errorf("prompt %d (run %d):\n got %q\nwant %q", i, w.Seq, p.Text, w.Argv)
		}
		if p.Cwd != w.Cwd || p.Src != transcript.SrcClaude || p.Approx || p.Key == "" {
			t.Errorf("run %d: %+v", w.Seq, p)
		}
		if id, seen := sessions[w.Session]; seen && id != p.Session {
			t.Errorf("run %d: session %q, same manifest session had %q", w.Seq, p.Session, id)
		}
		sessions[w.Session] = p.Session
		if m, _ := filepath.Glob("testdata/claude/projects/*/" + p.Session + ".jsonl"); len(m) != 1 {
			t.Errorf("run %d: session %q names no transcript", w.Seq, p.Session)
		}
		if tm := time.UnixMilli(p.TS).UTC(); tm.Format("2006-01-02") != "2026-11-30" {
			t.Errorf("run %d: ts %v", w.Seq, tm)
		}
	}
	if got[0].TS != 1796002011220 || got[0].Key != "697cf99e-d4eb-4864-ad26-542bc5350129" {
		t.Errorf("cc-01: ts %d key %q", got[0].TS, got[0].Key)
	}
	if len(sessions) != 3 {
		t.Errorf("sessions %v", sessions)
	}
	wantSt := transcript.Stats{Files: 3, Prompts: 8, Bytes: totalSize(t, "testdata/claude/projects/*/*.jsonl")}
	if !reflect.DeepEqual(st, wantSt) {
		t.Errorf("stats %+v, want %+v", st, wantSt)
	}
}

// The interactive transcript yields cc-tui-01..03; the paste (03) comes
// without its <pasted_content> wrapper, and /greet is skipped.
func TestRealTUITranscript(t *testing.T) {
	runs := loadManifest(t, "claude-tui")
	if len(runs) != 4 || runs[3].Typed != "/greet Ada [cc-tui-04]" {
		t.Fatalf("manifest: %+v", runs)
	}
	got, st := ttest.Collect(t, scanAll, "testdata/claude-tui/projects")
	got = byTime(got)
	if len(got) != 3 {
		t.Fatalf("got %d prompts, want 3: %q", len(got), ttest.Texts(got))
	}
	for i, p := range got {
		w := runs[i]
		if i < 2 && p.Text != w.Typed {
			t.Errorf("prompt %d:\n got %q\nwant %q", i, p.Text, w.Typed)
		}
		if !identity.Same(p.Text, w.Typed) {
			t.Errorf("prompt %d is not the same prompt:\n got %q\nwant %q", i, p.Text, w.Typed)
		}
		if strings.Contains(p.Text, "pasted_content") {
			t.Errorf("prompt %d keeps the paste wrapper", i)
		}
		if p.Cwd != "/tmp/lab/wd/claude-tui/tui_proj" || p.Session != "b5ae1795-cf05-419d-bdbb-2bb89b32ac16" || p.Approx {
			t.Errorf("prompt %d: %+v", i, p)
		}
	}
	if want := strings.TrimRight(runs[2].Typed, "\n"); got[2].Text != want {
		t.Errorf("paste: got %q\nwant %q", got[2].Text, want)
	}
	if st.Files != 1 || st.Malformed != 0 || st.Skipped != 0 {
		t.Errorf("stats %+v", st)
	}
}

func TestDefaultRoot(t *testing.T) {
	for _, tc := range []struct {
		env  map[string]string
		want string
	}{
		{nil, "/home/u/.claude/projects"},
		{map[string]string{"CLAUDE_CONFIG_DIR": "/cfg"}, "/cfg/projects"},
		{map[string]string{"CLAUDE_CONFIG_DIR": "~/alt"}, "/home/u/alt/projects"},
		{map[string]string{"CLAUDE_CONFIG_DIR": ""}, "/home/u/.claude/projects"},
	} {
		if got := DefaultRoot(func(k string) string { return tc.env[k] }, "/home/u"); got != tc.want {
			t.Errorf("DefaultRoot(%v) = %q, want %q", tc.env, got, tc.want)
		}
	}
	if got := DefaultRoot(nil, "/home/u"); got != "/home/u/.claude/projects" {
		t.Errorf("DefaultRoot(nil) = %q", got)
	}
}

var nextUUID = 0

// rec builds one record line: the envelope of a user record, content as
// message.content, then the fields in extra (set to nil to remove one).
func rec(content any, extra map[string]any) string {
	nextUUID++
	r := map[string]any{
		"parentUuid":  nil,
		"isSidechain": false,
		"type":        "user",
		"message":     map[string]any{"role": "user", "content": content},
		"uuid":        fmt.Sprintf("00000000-0000-0000-0000-%012d", nextUUID),
		"timestamp":   "2026-01-02T03:04:05.678Z",
		"userType":    "external",
		"entrypoint":  "cli",
		"cwd":         "/w/proj",
		"sessionId":   "sess-1",
		"version":     "2.1.332",
	}
	for k, v := range extra {
		if v == nil {
			delete(r, k)
		} else {
			r[k] = v
		}
	}
	b, err := json.Marshal(r)
	if err != nil {
		panic(err)
	}
	return string(b)
}

type m = map[string]any

func text(s string) m { return m{"type": "text", "text": s} }

func lines(ls ...string) string { return strings.Join(ls, "\n") + "\n" }

func TestWhatIsAPrompt(t *testing.T) {
	human := m{"origin": m{"kind": "human"}, "promptSource": "typed", "promptId": "p1"}
	with := func(a, b m) m {
		out := m{}
		for k, v := range a {
			out[k] = v
		}
		for k, v := range b {
			out[k] = v
		}
		return out
	}
	for _, tc := range []struct {
		name string
		line string
		want []string
	}{
		{"typed, newer build", rec("fix the login bug", human), []string{"fix the login bug"}},
		{"typed, older build without origin", rec("fix it", nil), []string{"fix it"}},
		{"headless -p", rec("from -p", m{"promptSource": "sdk", "entrypoint": "sdk-cli"}), []string{"from -p"}},
		{"queued then sent", rec("while busy", with(human, m{"promptSource": "queued"})), []string{"while busy"}},
		{"null origin", rec("x y", m{"origin": nil}), []string{"x y"}},
		{"promptSource system", rec("made by the system", m{"promptSource": "system"}), nil},
		{"task notification without origin", rec("<task-notification>\n<task-id>b1c2</task-id>\n<output-file>/tmp/claude/tasks/b1c2.output</output-file>\n<status>completed</status>\n<summary>Background command \"go test ./...\" completed (exit code 0)</summary>\n</task-notification>\nRead the output file to retrieve the result: /tmp/claude/tasks/b1c2.output", m{"version": "2.1.39"}), nil},
		{"task notification block", rec([]any{text("<task-notification><status>failed</status></task-notification>\nRead the output file")}, nil), nil},
		{"typed text that mentions a task notification", rec("why does <task-notification> show up?", nil), []string{"why does <task-notification> show up?"}},
		{"origin task-notification", rec("<task-notification>done</task-notification>", m{"origin": m{"kind": "task-notification"}}), nil},
		{"origin channel, plain text", rec("from a channel", m{"origin": m{"kind": "channel"}}), nil},
		{"origin without kind", rec("no kind", m{"origin": m{}}), nil},
		{"isMeta", rec([]any{text("Please greet Ada warmly.\n")}, m{"isMeta": true}), nil},
		{"isMeta caveat", rec("<local-command-caveat>Caveat: The messages below were generated by the user while running local commands.</local-command-caveat>", m{"isMeta": true}), nil},
		{"compact summary", rec("This session is being continued from a previous conversation that ran out of context. Summary: …", m{"isCompactSummary": true, "isVisibleInTranscriptOnly": true}), nil},
		{"visible in transcript only", rec("shown, not sent", m{"isVisibleInTranscriptOnly": true}), nil},
		{"compact summary of an older build (no flags)", rec("This session is being continued from a previous conversation that ran out of context. The conversation is summarized below:", nil), nil},
		{"tool result block", rec([]any{m{"type": "tool_result", "tool_use_id": "t1", "content": "README.md"}}, nil), nil},
		{"tool result with text beside it", rec([]any{m{"type": "tool_result", "tool_use_id": "t1", "content": "x"}, text("and this")}, nil), nil},
		{"toolUseResult", rec([]any{m{"type": "tool_result", "tool_use_id": "t1", "content": "x"}}, m{"toolUseResult": m{"stdout": "x"}, "sourceToolAssistantUUID": "a"}), nil},
		{"toolUseResult beside plain text", rec("not typed", m{"toolUseResult": "Error: denied"}), nil},
		{"sidechain", rec("model-written user turn", m{"isSidechain": true}), nil},
		{"agentId", rec("subagent turn", m{"agentId": "a1b2"}), nil},
		{"empty agentId", rec("main turn", m{"agentId": ""}), []string{"main turn"}},
		{"interrupt", rec("[Request interrupted by user]", nil), nil},
		{"interrupt for tool use", rec([]any{text("[Request interrupted by user for tool use]")}, nil), nil},
		{"local command output", rec("<local-command-stdout>Set model to opus</local-command-stdout>", nil), nil},
		{"local command stderr", rec("<local-command-stderr>Error</local-command-stderr>", nil), nil},
		{"bash mode input", rec("<bash-input>ls -la</bash-input>", nil), nil},
		{"bash output", rec("<bash-stdout>a\nb</bash-stdout><bash-stderr></bash-stderr>", nil), nil},
		{"system reminder only", rec([]any{text("<system-reminder>\nctx\n</system-reminder>")}, nil), nil},
		{"reminder block beside the typed block", rec([]any{text("<system-reminder>\nctx\n</system-reminder>"), text("the real question")}, nil), []string{"the real question"}},
		{"typed text quoting a reminder stays whole", rec("see <system-reminder>x</system-reminder> here", nil), []string{"see <system-reminder>x</system-reminder> here"}},
		{"slash command", rec("<command-message>greet</command-message>\n<command-name>/greet</command-name>\n<command-args>Ada [cc-10]</command-args>", nil), nil},
		{"built-in command without args", rec("<command-name>/model</command-name>\n            <command-message>model</command-message>\n            <command-args></command-args>", nil), nil},
		{"unknown slash command sent verbatim", rec("/frobnicate --fast now", nil), nil},
		{"path is not a command", rec("/etc/hosts looks wrong", nil), []string{"/etc/hosts looks wrong"}},
		{"IDE tag block dropped", rec([]any{text("<ide_opened_file>The user opened the file /a/b.go in the IDE.</ide_opened_file>"), text("explain this file")}, nil), []string{"explain this file"}},
		{"IDE tag prefix stripped", rec("<ide_selection>The user selected lines 1-3</ide_selection>\nwhy is this slow?", nil), []string{"why is this slow?"}},
		{"IDE tag only", rec("<ide_opened_file>opened</ide_opened_file>", nil), nil},
		{"image dropped, placeholder kept", rec([]any{m{"type": "image", "source": m{"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}}, text("[Image #1] what is this?")}, nil), []string{"[Image #1] what is this?"}},
		{"text blocks joined", rec([]any{text("first part"), text("second part")}, nil), []string{"first part\nsecond part"}},
		{"paste unwrapped", rec("look at this:\n\n<pasted_content id=\"a1\">\nline 1\nline 2\n</pasted_content id=\"a1\">\n", nil), []string{"look at this:\n\nline 1\nline 2"}},
		{"two pastes", rec("<pasted_content id=\"1\">\nA\n</pasted_content id=\"1\"> and <pasted_content id=\"2\">\nB\n</pasted_content id=\"2\">", nil), []string{"A\n and B"}},
		{"unpaired paste tag kept", rec("what does <pasted_content id=\"x\"> mean", nil), []string{"what does <pasted_content id=\"x\"> mean"}},
		{"whitespace kept", rec("   \n  spaced \t \n\n", nil), []string{"   \n  spaced \t \n\n"}},
		{"blank", rec(" \n ", nil), nil},
		{"no message", rec(nil, m{"message": nil}), nil},
		{"assistant", rec([]any{text("an answer")}, m{"type": "assistant", "message": m{"role": "assistant", "content": []any{text("an answer")}}}), nil},
		{"api-request-blob", `{"type":"api-request-blob","sessionId":"s","hash":"h","message":{"role":"user","content":[{"type":"text","text":"fix the login bug"}]}}`, nil},
		{"queue-operation", `{"type":"queue-operation","operation":"enqueue","timestamp":"2026-01-02T03:04:05.000Z","sessionId":"s","content":"fix the login bug"}`, nil},
		{"last-prompt", `{"type":"last-prompt","lastPrompt":"fix the login bug","leafUuid":"u","sessionId":"s"}`, nil},
		{"queued command attachment", rec(nil, m{"type": "attachment", "message": nil, "attachment": m{"type": "queued_command", "prompt": "and check the tests too", "commandMode": "prompt", "origin": m{"kind": "human"}}}), []string{"and check the tests too"}},
		{"queued command of an older build", rec(nil, m{"type": "attachment", "message": nil, "attachment": m{"type": "queued_command", "prompt": []any{text("queued blocks")}}}), []string{"queued blocks"}},
		{"queued task notification", rec(nil, m{"type": "attachment", "message": nil, "attachment": m{"type": "queued_command", "prompt": "<task-notification>x</task-notification>", "commandMode": "task-notification", "origin": m{"kind": "task-notification"}}}), nil},
		{"queued by a peer", rec(nil, m{"type": "attachment", "message": nil, "attachment": m{"type": "queued_command", "prompt": "from a peer", "commandMode": "prompt", "origin": m{"kind": "peer"}}}), nil},
		{"queued bash", rec(nil, m{"type": "attachment", "message": nil, "attachment": m{"type": "queued_command", "prompt": "ls", "commandMode": "bash"}}), nil},
		{"other attachment", rec(nil, m{"type": "attachment", "message": nil, "attachment": m{"type": "hook_additional_context", "content": []string{"user"}}}), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, st := ttest.Collect(t, scanString, lines(tc.line))
			ttest.WantTexts(t, got, tc.want...)
			if st.Malformed != 0 {
				t.Errorf("malformed %d", st.Malformed)
			}
			// The decoder decides alone too (without the line filters).
			p, ok, bad := parseRecord([]byte(tc.line))
			if bad || ok != (tc.want != nil) || (ok && p.Text != tc.want[0]) {
				t.Errorf("parseRecord: %q ok=%v bad=%v", p.Text, ok, bad)
			}
		})
	}
}

func TestRecordFields(t *testing.T) {
	got, _ := ttest.Collect(t, scanString, lines(
		rec("in the project", m{"uuid": "u-1", "cwd": "/w/proj", "timestamp": "2026-01-02T03:04:05.678Z"}),
		rec("after cd", m{"uuid": "u-2", "cwd": "/w/proj/sub", "timestamp": "2026-01-02T03:05:00Z"}),
		rec("no time", m{"uuid": "u-3", "timestamp": nil}),
		rec("no uuid", m{"uuid": nil}),
	))
	ttest.WantTexts(t, got, "in the project", "after cd", "no time", "no uuid")
	if len(got) != 4 {
		return
	}
	want := []transcript.Prompt{
		{Text: "in the project", TS: 1767323045678, Cwd: "/w/proj", Session: "sess-1", Src: "claude", Key: "u-1"},
		{Text: "after cd", TS: 1767323100000, Cwd: "/w/proj/sub", Session: "sess-1", Src: "claude", Key: "u-2"},
		{Text: "no time", TS: 0, Cwd: "/w/proj", Session: "sess-1", Src: "claude", Key: "u-3", Approx: true},
		{Text: "no uuid", TS: 1767323045678, Cwd: "/w/proj", Session: "sess-1", Src: "claude", Key: ""},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
}

// A record without a cwd of its own takes the file's: the latest cwd
// before it, else the first one after it; with none at all it has none.
func TestCwdFromOtherRecords(t *testing.T) {
	noCwd := func(s string) string { return rec(s, m{"cwd": nil}) }
	other := func(cwd string) string {
		return fmt.Sprintf(`{"type":"system","subtype":"x","cwd":%q,"sessionId":"sess-1","uuid":"sys"}`, cwd)
	}
	summary := `{"type":"summary","summary":"s","leafUuid":"l"}`
	for _, tc := range []struct {
		name string
		in   string
		want []string // cwd of each prompt, in order
	}{
		{"later record", lines(summary, noCwd("first"), noCwd("second"), other("/w/later")), []string{"/w/later", "/w/later"}},
		{"earlier record", lines(other("/w/before"), noCwd("one")), []string{"/w/before"}},
		{"latest before", lines(rec("a", m{"cwd": "/w/a"}), rec("b", m{"cwd": "/w/b"}), noCwd("c")), []string{"/w/a", "/w/b", "/w/b"}},
		{"own cwd wins", lines(noCwd("early"), rec("own", m{"cwd": "/w/own"}), other("/w/other")), []string{"/w/own", "/w/own"}},
		{"none at all", lines(summary, noCwd("alone")), []string{""}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, _ := ttest.Collect(t, scanString, tc.in)
			var cwds []string
			for _, p := range got {
				cwds = append(cwds, p.Cwd)
			}
			if !reflect.DeepEqual(cwds, tc.want) {
				t.Errorf("cwds %q, want %q (prompts %q)", cwds, tc.want, ttest.Texts(got))
			}
		})
	}
	// The prompts keep their file order.
	got, _ := ttest.Collect(t, scanString, lines(noCwd("first"), noCwd("second"), other("/w"), noCwd("third")))
	ttest.WantTexts(t, got, "first", "second", "third")
}

// Lines written with white space between their tokens (as Python's
// json.dumps writes them) read as the compact ones.
func TestSpacedLines(t *testing.T) {
	compact := lines(
		rec("typed with spaces", nil),
		rec([]any{m{"type": "tool_result", "tool_use_id": "t1", "content": "x"}, text("beside a tool result")}, nil),
		rec(nil, m{"type": "attachment", "message": nil, "attachment": m{"type": "queued_command", "prompt": "queued", "commandMode": "prompt"}}),
	)
	spaced := strings.NewReplacer(`":`, `": `, `,"`, `, "`, `{`, "{ \t", `}`, " }").Replace(compact)
	if spaced == compact || !strings.Contains(spaced, `"type": "user"`) {
		t.Fatalf("not re-spaced: %s", spaced)
	}
	want, _ := ttest.Collect(t, scanString, compact)
	got, st := ttest.Collect(t, scanString, spaced)
	ttest.WantTexts(t, want, "typed with spaces", "queued")
	if !reflect.DeepEqual(got, want) || st.Malformed != 0 {
		t.Errorf("spaced: %+v (%+v), want %+v", got, st, want)
	}
}

// A prompt replayed (same uuid) counts once; typed twice (new uuid) counts twice.
func TestReplayDedup(t *testing.T) {
	a := rec("asked once", m{"uuid": "u-a"})
	got, _ := ttest.Collect(t, scanString, lines(a, a, rec("asked once", m{"uuid": "u-b"})))
	ttest.WantTexts(t, got, "asked once", "asked once")

	root := t.TempDir()
	parent := filepath.Join(root, "-w-proj", "ffff-parent.jsonl")
	fork := filepath.Join(root, "-w-proj", "0000-fork.jsonl")
	ttest.WriteFile(t, parent, lines(a, rec("later in the parent", m{"uuid": "u-c"})))
	// The fork copies the parent's record (same uuid and timestamp) under its new session id.
	var copied map[string]any
	json.Unmarshal([]byte(a), &copied)
	copied["sessionId"] = "sess-fork"
	cb, _ := json.Marshal(copied)
	ttest.WriteFile(t, fork, lines(string(cb), rec("only in the fork", m{"uuid": "u-d", "sessionId": "sess-fork"})))
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(parent, old, old); err != nil {
		t.Fatal(err)
	}
	got, st := ttest.Collect(t, scanAll, root)
	ttest.WantTexts(t, got, "asked once", "later in the parent", "only in the fork")
	if len(got) == 3 && got[0].Session != "sess-1" {
		t.Errorf("the copy counted is the fork's: %+v", got[0])
	}
	if st.Files != 2 {
		t.Errorf("stats %+v", st)
	}
}

func TestMalformed(t *testing.T) {
	torn := rec("torn at the end", nil)
	torn = torn[:len(torn)-30]
	content := lines(
		`garbage`,
		rec("good", nil),
		`{"type":"user","message":{"role":"user","content":"unterminated}}`,
		`{"type":"user","message":{"role":"user","content":42}}`,
		`{"type":"user","message":{"role":"user","content":[{"type":"text","text":false}]}}`,
		`{"type":"user","uuid":7,"message":{"role":"user","content":"x"}}`,
		`{"type":"assistant","message":{"content":"not json"} junk`,
		`{"type":"assistant", broken but not a candidate}`,
		``,
	) + torn
	got, st := ttest.Collect(t, scanString, content)
	ttest.WantTexts(t, got, "good")
	if st.Malformed != 7 {
		t.Errorf("malformed %d, want 7", st.Malformed)
	}
	if st.Files != 1 || st.Bytes != int64(len(content)) {
		t.Errorf("stats %+v", st)
	}
}

func TestLongLines(t *testing.T) {
	big := strings.Repeat("0123456789abcdef", 3<<20/16)
	content := lines(
		rec("before "+big, nil),
		rec([]any{m{"type": "tool_result", "tool_use_id": "t", "content": big}}, m{"toolUseResult": m{"stdout": big}}),
		`{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"`+big+`"}]}}`,
		rec("after", nil),
	) + rec(big+" last, no newline", nil)
	got, st := ttest.Collect(t, scanString, content)
	ttest.WantTexts(t, got, "before "+big, "after", big+" last, no newline")
	if st.Malformed != 0 || st.Bytes != int64(len(content)) {
		t.Errorf("stats %+v", st)
	}
}

func TestEmitError(t *testing.T) {
	stop := errors.New("stop")
	n := 0
	st, err := ScanReader(strings.NewReader(lines(rec("a", nil), rec("b", nil))), "x", func(transcript.Prompt) error {
		n++
		return stop
	})
	if err != stop || n != 1 || st.Prompts != 0 {
		t.Errorf("err %v, emitted %d, stats %+v", err, n, st)
	}
}

func TestReaderError(t *testing.T) {
	eio := errors.New("input/output error")
	_, err := ScanReader(io.MultiReader(strings.NewReader(lines(rec("a", nil))), iotest.ErrReader(eio)), "t.jsonl", func(transcript.Prompt) error { return nil })
	var re *transcript.ReadError
	if !errors.As(err, &re) || re.Path != "t.jsonl" || !errors.Is(err, eio) {
		t.Errorf("err = %v", err)
	}
}

// Flat and nested layouts are read; subagent transcripts are passed over
// (even when their records look typed) and counted.
func TestLayouts(t *testing.T) {
	root := t.TempDir()
	looksTyped := lines(rec("written by a subagent", m{"sessionId": "sess-1"}))
	ttest.WriteFile(t, filepath.Join(root, "-w-proj", "sess-1.jsonl"), lines(rec("flat", nil)))
	ttest.WriteFile(t, filepath.Join(root, "-w-proj", "agent-1a2b.jsonl"), looksTyped)
	ttest.WriteFile(t, filepath.Join(root, "-w-proj", "sess-2", "sess-2.jsonl"), lines(rec("nested", m{"sessionId": "sess-2"})))
	ttest.WriteFile(t, filepath.Join(root, "-w-proj", "sess-2", "subagents", "agent-3c4d.jsonl"), looksTyped)
	ttest.WriteFile(t, filepath.Join(root, "-w-proj", "sess-2", "subagents", "agent-3c4d.meta.json"), `{"agentType":"x"}`)
	ttest.WriteFile(t, filepath.Join(root, "-w-proj", "sess-2", "subagents", "agent-acompact-5e6f.jsonl"), looksTyped)
	ttest.WriteFile(t, filepath.Join(root, "-w-proj", "sess-2", "subagents", "workflows", "wf1", "agent-7a8b.jsonl"), looksTyped)
	ttest.WriteFile(t, filepath.Join(root, "-w-proj", "sess-2", "subagents", "workflows", "wf1", "journal.jsonl"), looksTyped)
	ttest.WriteFile(t, filepath.Join(root, "-w-proj", "sess-2", "tool-results", "r1.txt"), "README.md\n")
	ttest.WriteFile(t, filepath.Join(root, "-w-other", "sess-3.jsonl.tmp"), looksTyped)
	if err := syscall.Mkfifo(filepath.Join(root, "-w-proj", "fifo.jsonl"), 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	var got []transcript.Prompt
	var st transcript.Stats
	go func() {
		defer close(done)
		got, st = ttest.Collect(t, scanAll, root)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Scan blocked")
	}
	sort.Slice(got, func(i, j int) bool { return got[i].Text < got[j].Text })
	ttest.WantTexts(t, got, "flat", "nested")
	if st.Files != 2 || st.Subagent != 5 || st.Skipped != 1 {
		t.Errorf("stats %+v, want 2 files, 5 subagent transcripts and 1 skipped (a FIFO)", st)
	}
	t.Run("only subagent transcripts", func(t *testing.T) {
		// A known layout that holds no typed prompt: nothing in Skipped.
		only := t.TempDir()
		ttest.WriteFile(t, filepath.Join(only, "-w-proj", "sess-2", "subagents", "agent-3c4d.jsonl"), looksTyped)
		ttest.WriteFile(t, filepath.Join(only, "-w-proj", "agent-1a2b.jsonl"), looksTyped)
		got, st := ttest.Collect(t, scanAll, only)
		if len(got) != 0 || !reflect.DeepEqual(st, transcript.Stats{Subagent: 2}) {
			t.Errorf("%v %+v", got, st)
		}
	})
	t.Run("missing root", func(t *testing.T) {
		got, st := ttest.Collect(t, scanAll, filepath.Join(root, "nope"))
		if len(got) != 0 || !reflect.DeepEqual(st, transcript.Stats{}) {
			t.Errorf("%v %+v", got, st)
		}
	})
	t.Run("file root", func(t *testing.T) {
		got, _ := ttest.Collect(t, scanAll, filepath.Join(root, "-w-proj", "sess-1.jsonl"))
		ttest.WantTexts(t, got, "flat")
	})
}

func TestReadErrorOnDirectory(t *testing.T) {
	root := t.TempDir()
	bad := filepath.Join(root, "-w-proj", "sess-9.jsonl")
	if err := os.MkdirAll(bad, 0o700); err != nil {
		t.Fatal(err)
	}
	_, err := scanAll(root, func(transcript.Prompt) error { return nil })
	var re *transcript.ReadError
	if !errors.As(err, &re) || re.Path != bad || !errors.Is(err, syscall.EISDIR) {
		t.Errorf("err = %v (%T), want a ReadError for %s (EISDIR)", err, err, bad)
	}
}

// Files are read oldest first (by modification time) and prompts come in
// that order, whoever reads the files; an emit error or an I/O error stops
// the scan at that point.
func TestScanOrderAndStop(t *testing.T) {
	root := t.TempDir()
	base := time.Now().Add(-time.Hour)
	var want []string
	for i := range 20 {
		var ls []string
		for j := range 3 {
			text := fmt.Sprintf("file %02d prompt %d", i, j)
			ls = append(ls, rec(text, m{"uuid": fmt.Sprintf("u-%d-%d", i, j)}))
			want = append(want, text)
		}
		// Names in the reverse order of times.
		p := filepath.Join(root, fmt.Sprintf("-d%d", i%3), fmt.Sprintf("%02d.jsonl", 99-i))
		ttest.WriteFile(t, p, lines(ls...))
		tm := base.Add(time.Duration(i) * time.Second)
		if err := os.Chtimes(p, tm, tm); err != nil {
			t.Fatal(err)
		}
	}
	ttest.CheckOrderAndStop(t, scanAll, root, want, 20)
	bad := filepath.Join(root, "-d0", "x.jsonl")
	if err := os.Mkdir(bad, 0o700); err != nil {
		t.Fatal(err)
	}
	tm := base.Add(7500 * time.Millisecond)
	if err := os.Chtimes(bad, tm, tm); err != nil {
		t.Fatal(err)
	}
	ttest.CheckReadErrorStop(t, scanAll, root, bad, want[:24], 8)
}
