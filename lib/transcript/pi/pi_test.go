//go:build unix

package pi

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"syscall"
	"testing"
	"testing/iotest"
	"time"

	"hist/lib/transcript"
	"hist/lib/transcript/internal/ttest"
)

// scanString runs ScanReader over s.
func scanString(s string, emit func(transcript.Prompt) error) (transcript.Stats, error) {
	return ScanReader(strings.NewReader(s), "test.jsonl", emit)
}

type manifestRun struct {
	Seq     int    `json:"seq"`
	Session string `json:"session"`
	Cwd     string `json:"cwd"`
	Prompt  string `json:"prompt_argv"`
}

func loadManifest(t *testing.T) []manifestRun {
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
	return m.Harnesses["pi"]
}

var keyRE = regexp.MustCompile(`^[0-9]+:[0-9]+:[0-9a-f]{16}$`)

// The three real pi 1.6.0 sessions yield pi-01..04, pi-06..09 and pi-10 as
// expanded, in order, byte for byte; pi-05 (/frobnicate) is skipped.
func TestRealSessions(t *testing.T) {
	runs := loadManifest(t)
	if len(runs) != 10 {
		t.Fatalf("manifest has %d pi runs, want 10", len(runs))
	}
	var want []manifestRun
	for _, r := range runs {
		switch r.Seq {
		case 5: // "/frobnicate …": command-like
			continue
		case 10: // "/greet Ada Lovelace [pi-10]": a template, stored only expanded
			if r.Prompt != "/greet Ada Lovelace [pi-10]" {
				t.Fatalf("manifest run 10 = %q", r.Prompt)
			}
			r.Prompt = "Please greet Ada Lovelace [pi-10] warmly in exactly one sentence."
		}
		want = append(want, r)
	}

	got, st := ttest.Collect(t, scanAll, "testdata/sessions")
	if len(got) != 9 || len(want) != 9 {
		t.Fatalf("got %d prompts, want 9: %q", len(got), ttest.Texts(got))
	}
	sessions := map[string]string{} // manifest label -> header id
	for i, p := range got {
		w := want[i]
		if p.Text != w.Prompt {
			t.Errorf("prompt %d (run %d):\n got %q\nwant %q", i, w.Seq, p.Text, w.Prompt)
		}
		if p.Cwd != w.Cwd {
			t.Errorf("run %d: cwd %q, want %q", w.Seq, p.Cwd, w.Cwd)
		}
		if want := fmt.Sprintf("%d:%d:", p.TS, len(p.Text)); !strings.HasPrefix(p.Key, want) || !keyRE.MatchString(p.Key) {
			t.Errorf("run %d: key %q, want %s and 16 hex digits", w.Seq, p.Key, want)
		}
		if p.Src != transcript.SrcPi || p.Approx || p.Key == "" {
			t.Errorf("run %d: src %q approx %v key %q", w.Seq, p.Src, p.Approx, p.Key)
		}
		if id, seen := sessions[w.Session]; seen && id != p.Session {
			t.Errorf("run %d: session %q, same manifest session had %q", w.Seq, p.Session, id)
		}
		sessions[w.Session] = p.Session
		if i > 0 && p.TS <= got[i-1].TS {
			t.Errorf("run %d: ts %d not after %d", w.Seq, p.TS, got[i-1].TS)
		}
		// 2026-11-30, when the fixtures were made.
		if tm := time.UnixMilli(p.TS).UTC(); tm.Year() != 2026 || tm.Month() != 11 || tm.Day() != 30 {
			t.Errorf("run %d: ts %d is %v", w.Seq, p.TS, tm)
		}
	}
	if len(sessions) != 3 {
		t.Errorf("sessions %v, want 3 distinct", sessions)
	}
	// Each session id is the one the file is named for.
	for _, id := range sessions {
		m, _ := filepath.Glob("testdata/sessions/*/*_" + id + ".jsonl")
		if len(m) != 1 {
			t.Errorf("session %s: files %v", id, m)
		}
	}
	if got[0].TS != 1796001996025 || got[0].Session != "01a22a0f-9cb9-7617-9e77-3ff2fd7a47d1" {
		t.Errorf("pi-01: ts %d session %s", got[0].TS, got[0].Session)
	}
	var size int64
	files, _ := filepath.Glob("testdata/sessions/*/*.jsonl")
	for _, f := range files {
		fi, _ := os.Stat(f)
		size += fi.Size()
	}
	wantSt := transcript.Stats{Files: 3, Bytes: size, Prompts: 9}
	if !reflect.DeepEqual(st, wantSt) {
		t.Errorf("stats %+v, want %+v", st, wantSt)
	}
}

func TestDefaultRoot(t *testing.T) {
	home := "/home/u"
	for _, tc := range []struct {
		env  map[string]string
		want string
	}{
		{nil, "/home/u/.pi/agent/sessions"},
		{map[string]string{"PI_CODING_AGENT_DIR": "/x/agent"}, "/x/agent/sessions"},
		{map[string]string{"PI_CODING_AGENT_DIR": "~/agent"}, "/home/u/agent/sessions"},
		{map[string]string{"PI_CODING_AGENT_SESSION_DIR": "/s", "PI_CODING_AGENT_DIR": "/x"}, "/s"},
		{map[string]string{"PI_CODING_AGENT_SESSION_DIR": "~/s"}, "/home/u/s"},
		{map[string]string{"PI_CODING_AGENT_SESSION_DIR": "", "PI_CODING_AGENT_DIR": ""}, "/home/u/.pi/agent/sessions"},
		{map[string]string{"PI_AGENT_DIR": "/ccusage-only"}, "/home/u/.pi/agent/sessions"},
	} {
		env := func(k string) string { return tc.env[k] }
		if got := DefaultRoot(env, home); got != tc.want {
			t.Errorf("DefaultRoot(%v) = %q, want %q", tc.env, got, tc.want)
		}
	}
	if got := DefaultRoot(nil, home); got != "/home/u/.pi/agent/sessions" {
		t.Errorf("DefaultRoot(nil env) = %q", got)
	}
}

// Hand-made lines.
const (
	hdr3 = `{"type":"session","version":3,"id":"sess-3","timestamp":"2026-01-02T03:04:05.000Z","cwd":"/w/three"}`
	hdr2 = `{"type":"session","version":2,"id":"sess-2","timestamp":"2026-01-02T03:04:05.000Z","cwd":"/w/two"}`
	hdr1 = `{"type":"session","id":"sess-1","timestamp":"2026-01-02T03:04:05.000Z","cwd":"/w/one","provider":"anthropic","modelId":"m","thinkingLevel":"off"}`
)

func userLine(id, parent, text string, ms int64) string {
	t, _ := json.Marshal(text)
	return fmt.Sprintf(`{"type":"message","id":%q,"parentId":%q,"timestamp":"2026-01-02T03:04:06.000Z","message":{"role":"user","content":[{"type":"text","text":%s}],"timestamp":%d}}`, id, parent, t, ms)
}

func lines(ls ...string) string { return strings.Join(ls, "\n") + "\n" }

func TestVersions(t *testing.T) {
	t.Run("v3", func(t *testing.T) {
		got, st := ttest.Collect(t, scanString, lines(hdr3, userLine("a1", "", "hello three", 1767323046001)))
		ttest.WantTexts(t, got, "hello three")
		p := got[0]
		if p.Cwd != "/w/three" || p.Session != "sess-3" || p.TS != 1767323046001 || p.Src != "pi" || p.Approx {
			t.Errorf("prompt %+v", p)
		}
		if st.Files != 1 || st.Malformed != 0 || st.Bytes != int64(len(lines(hdr3, userLine("a1", "", "hello three", 1767323046001)))) {
			t.Errorf("stats %+v", st)
		}
	})
	t.Run("v2 hookMessage is not a prompt", func(t *testing.T) {
		got, _ := ttest.Collect(t, scanString, lines(hdr2,
			userLine("a1", "", "typed in v2", 1767323046001),
			`{"type":"message","id":"a2","parentId":"a1","timestamp":"2026-01-02T03:04:07.000Z","message":{"role":"hookMessage","customType":"x","content":"from a hook","display":true,"timestamp":1767323047000}}`,
		))
		ttest.WantTexts(t, got, "typed in v2")
		if got[0].Cwd != "/w/two" || got[0].Session != "sess-2" {
			t.Errorf("prompt %+v", got[0])
		}
	})
	t.Run("v1 without ids", func(t *testing.T) {
		got, _ := ttest.Collect(t, scanString, lines(hdr1,
			`{"type":"message","timestamp":"2026-01-02T03:04:06.000Z","message":{"role":"user","content":"plain string content","timestamp":1767323046500}}`,
			`{"type":"message","timestamp":"2026-01-02T03:04:07.250Z","message":{"role":"user","content":[{"type":"text","text":"no message timestamp"}]}}`,
			`{"type":"message","message":{"role":"user","content":"no timestamp at all"}}`,
			`{"type":"message","timestamp":"2026-01-02T03:04:08.000Z","message":{"role":"assistant","content":[{"type":"text","text":"an answer"}]}}`,
		))
		ttest.WantTexts(t, got, "plain string content", "no message timestamp", "no timestamp at all")
		if len(got) != 3 {
			return
		}
		if got[0].TS != 1767323046500 || got[0].Approx || got[0].Cwd != "/w/one" || got[0].Session != "sess-1" {
			t.Errorf("v1 prompt 0: %+v", got[0])
		}
		if got[1].TS != 1767323047250 || got[1].Approx {
			t.Errorf("v1 prompt 1 should take the entry's ISO time: %+v", got[1])
		}
		if got[2].TS != 1767323045000 || !got[2].Approx || got[2].Key != "" {
			t.Errorf("v1 prompt 2 should take the header's time, approx, no key: %+v", got[2])
		}
		if got[0].Key == "" || got[1].Key == "" || got[0].Key == got[1].Key {
			t.Errorf("keys %q %q", got[0].Key, got[1].Key)
		}
	})
}

func TestWhatIsAPrompt(t *testing.T) {
	for _, tc := range []struct {
		name string
		line string
		want []string
	}{
		{"text blocks concatenated, image dropped",
			`{"type":"message","id":"b1","parentId":null,"timestamp":"2026-01-02T03:04:06.000Z","message":{"role":"user","content":[{"type":"text","text":"look at "},{"type":"image","data":"iVBORw0KGgo=","mimeType":"image/png"},{"type":"text","text":"this picture"}],"timestamp":1767323046001}}`,
			[]string{"look at this picture"}},
		{"only text blocks count",
			`{"type":"message","id":"b1","parentId":null,"timestamp":"2026-01-02T03:04:06.000Z","message":{"role":"user","content":[{"type":"text","text":"typed"},{"type":"thinking","text":" not typed"}],"timestamp":1767323046001}}`,
			[]string{"typed"}},
		{"image only",
			`{"type":"message","id":"b1","parentId":null,"timestamp":"2026-01-02T03:04:06.000Z","message":{"role":"user","content":[{"type":"image","data":"iVBORw0KGgo=","mimeType":"image/png"}],"timestamp":1767323046001}}`,
			nil},
		{"bashExecution",
			`{"type":"message","id":"b1","parentId":null,"timestamp":"2026-01-02T03:04:06.000Z","message":{"role":"bashExecution","command":"ls","output":"a\n","exitCode":0,"cancelled":false,"truncated":false,"timestamp":1767323046001}}`,
			nil},
		{"custom role",
			`{"type":"message","id":"b1","parentId":null,"timestamp":"2026-01-02T03:04:06.000Z","message":{"role":"custom","customType":"note","content":"from an extension","display":true,"timestamp":1767323046001}}`,
			nil},
		{"branchSummary role",
			`{"type":"message","id":"b1","parentId":null,"timestamp":"2026-01-02T03:04:06.000Z","message":{"role":"branchSummary","summary":"user asked things","fromId":"a1","timestamp":1767323046001}}`,
			nil},
		{"compactionSummary role",
			`{"type":"message","id":"b1","parentId":null,"timestamp":"2026-01-02T03:04:06.000Z","message":{"role":"compactionSummary","summary":"so far","tokensBefore":9,"timestamp":1767323046001}}`,
			nil},
		{"toolResult role",
			`{"type":"message","id":"b1","parentId":null,"timestamp":"2026-01-02T03:04:06.000Z","message":{"role":"toolResult","toolCallId":"c1","toolName":"bash","content":[{"type":"text","text":"user"}],"isError":false,"timestamp":1767323046001}}`,
			nil},
		{"custom_message entry",
			`{"type":"custom_message","id":"b1","parentId":null,"timestamp":"2026-01-02T03:04:06.000Z","customType":"ext","content":"sent by an extension","display":true}`,
			nil},
		{"custom_message entry shaped like a user message",
			`{"type":"custom_message","id":"b1","parentId":null,"timestamp":"2026-01-02T03:04:06.000Z","message":{"role":"user","content":"not typed"}}`,
			nil},
		{"compaction entry with a retained user message",
			`{"type":"compaction","id":"b1","parentId":null,"timestamp":"2026-01-02T03:04:06.000Z","summary":"s","firstKeptEntryId":"a1","tokensBefore":5,"retainedTail":[{"role":"user","content":[{"type":"text","text":"copied, not typed"}],"timestamp":1}]}`,
			nil},
		{"branch_summary entry",
			`{"type":"branch_summary","id":"b1","parentId":null,"timestamp":"2026-01-02T03:04:06.000Z","fromId":"a1","summary":"the user wanted"}`,
			nil},
		{"system message with sections",
			`{"type":"message","id":"b1","parentId":null,"timestamp":"2026-01-02T03:04:06.000Z","message":{"role":"system","content":"","sections":{"preamble":"You are"}}}`,
			nil},
		{"command-like",
			userLine("b1", "", "/frobnicate --fast now", 1767323046001), nil},
		{"path is not command-like",
			userLine("b1", "", "/tmp/x is full, clean it", 1767323046001), []string{"/tmp/x is full, clean it"}},
		{"blank",
			userLine("b1", "", " \n\t ", 1767323046001), nil},
		{"whitespace kept",
			userLine("b1", "", "  two spaces  \n", 1767323046001), []string{"  two spaces  \n"}},
		{"spaced JSON",
			`{"type": "message", "id": "b1", "timestamp": "2026-01-02T03:04:06.000Z", "message": {"role": "user", "content": "spaced", "timestamp": 1767323046001}}`,
			[]string{"spaced"}},
		{"text mentioning a role is still read",
			userLine("b1", "", `he said "role":"user" twice`, 1767323046001), []string{`he said "role":"user" twice`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, st := ttest.Collect(t, scanString, lines(hdr3, tc.line))
			ttest.WantTexts(t, got, tc.want...)
			if st.Malformed != 0 {
				t.Errorf("malformed %d", st.Malformed)
			}
		})
	}
}

func TestSkills(t *testing.T) {
	block := "<skill name=\"review\" location=\"/home/u/.pi/agent/skills/review/SKILL.md\">\nReview the diff.\nBe brief.\n</skill>"
	for _, tc := range []struct {
		name, text string
		want       []string
	}{
		{"with args: typed as /skill:review args, command-like", block + "\n\nthe auth module", nil},
		{"without args: /skill:review, command-like", block, nil},
		{"args of white space only", block + "\n\n  \n", nil},
		{"a prompt quoting a skill block is kept", "please read\n" + block, []string{"please read\n" + block}},
		{"not the expansion shape (no blank line before args)", block + "\nthe auth module", []string{block + "\nthe auth module"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, _ := ttest.Collect(t, scanString, lines(hdr3, userLine("s1", "", tc.text, 1767323046001)))
			ttest.WantTexts(t, got, tc.want...)
		})
	}
	for _, tc := range []struct {
		text, name, args string
		ok               bool
	}{
		{block + "\n\nthe auth module", "review", "the auth module", true},
		{block, "review", "", true},
		{block + "\n\n  spaced args \n", "review", "spaced args", true},
		{"<skill name=\"x\" location=\"/p\">\n\n</skill>", "x", "", true},
		{"<skill name=\"x\" location=\"/p\">\nbody with\n</skill> inside\n</skill>\n\nargs", "x", "args", true},
		{"<skill name=\"\" location=\"/p\">\nb\n</skill>", "", "", false},
		{"<skill name=\"x\" location=\"/p\">b\n</skill>", "", "", false},
		{block + "\n\n", "", "", false},
		{block + "x", "", "", false},
	} {
		name, args, ok := parseSkill(tc.text)
		if name != tc.name || args != tc.args || ok != tc.ok {
			t.Errorf("parseSkill(%q) = %q, %q, %v; want %q, %q, %v", tc.text, name, args, ok, tc.name, tc.args, tc.ok)
		}
	}
}

// Every entry of the tree is a real event, abandoned branches included.
func TestBranchesAllCount(t *testing.T) {
	got, _ := ttest.Collect(t, scanString, lines(hdr3,
		userLine("a1", "", "first try", 1767323046001),
		`{"type":"message","id":"a2","parentId":"a1","timestamp":"2026-01-02T03:04:07.000Z","message":{"role":"assistant","content":[{"type":"text","text":"answer"}],"timestamp":1767323047000}}`,
		userLine("a3", "a2", "follow-up on the abandoned branch", 1767323048001),
		`{"type":"branch_summary","id":"a4","parentId":"a1","timestamp":"2026-01-02T03:04:09.000Z","fromId":"a3","summary":"abandoned"}`,
		userLine("a5", "a1", "second branch from a1", 1767323049001),
		`{"type":"label","id":"a6","parentId":"a5","timestamp":"2026-01-02T03:04:10.000Z","targetId":"a5","label":"x"}`,
	))
	ttest.WantTexts(t, got, "first try", "follow-up on the abandoned branch", "second branch from a1")
}

func TestMalformed(t *testing.T) {
	good := userLine("a1", "", "still read", 1767323046001)
	torn := userLine("a9", "a1", "torn at the end", 1767323049001)
	torn = torn[:len(torn)-20]
	content := lines(hdr3,
		`not json at all`,
		good,
		`{"type":"message","id":"a2","message":{"role":"user","content":[{"type":"text","text":"unterminated}]}}`,
		`{"type":"message","id":"a3","message":{"role":"user","content":42}}`,
		`{"type":"message","id":"a4","message":{"role":"user","content":[{"type":"text","text":7}]}}`,
		`{"type":"message","id":"a5","message":{"role":"user","content":"ok","timestamp":"yesterday"}}`,
		`{"type":"message","id":"a6","message":{"role":["user"],"content":"x"}}`,
		`{"type":"model_change","id":"a7"} trailing`,
		``,
		`   `,
	) + torn
	got, st := ttest.Collect(t, scanString, content)
	// a5 decodes (its odd timestamp is ignored) and takes the entry's or header's time.
	ttest.WantTexts(t, got, "still read", "ok")
	if st.Malformed != 7 {
		t.Errorf("malformed %d, want 7 (garbage, unterminated, number content, number text, array role, trailing, torn)", st.Malformed)
	}
	if st.Files != 1 || st.Bytes != int64(len(content)) {
		t.Errorf("stats %+v, want 1 file of %d bytes", st, len(content))
	}
	if len(got) == 2 && (!got[1].Approx || got[1].TS != 1767323045000) {
		t.Errorf("a5: %+v", got[1])
	}
}

func TestHeader(t *testing.T) {
	t.Run("not a session file", func(t *testing.T) {
		got, st := ttest.Collect(t, scanString, lines(`{"type":"note","text":"x"}`, userLine("a1", "", "not from pi", 1767323046001)))
		ttest.WantTexts(t, got)
		if st.Files != 0 || st.Skipped != 1 {
			t.Errorf("stats %+v", st)
		}
	})
	t.Run("torn header", func(t *testing.T) {
		got, st := ttest.Collect(t, scanString, lines(hdr3[:30], userLine("a1", "", "survives", 1767323046001)))
		ttest.WantTexts(t, got, "survives")
		if st.Malformed != 1 || st.Files != 1 || (len(got) == 1 && got[0].Cwd != "") {
			t.Errorf("stats %+v, prompts %+v", st, got)
		}
	})
	t.Run("CRLF and leading blank lines", func(t *testing.T) {
		got, st := ttest.Collect(t, scanString, "\r\n"+hdr3+"\r\n"+userLine("a1", "", "crlf", 1767323046001)+"\r\n")
		ttest.WantTexts(t, got, "crlf")
		if st.Malformed != 0 || (len(got) == 1 && got[0].Cwd != "/w/three") {
			t.Errorf("stats %+v prompts %+v", st, got)
		}
	})
	t.Run("empty", func(t *testing.T) {
		got, st := ttest.Collect(t, scanString, "")
		ttest.WantTexts(t, got)
		if !reflect.DeepEqual(st, transcript.Stats{Files: 1}) {
			t.Errorf("stats %+v", st)
		}
	})
}

func TestLongLines(t *testing.T) {
	big := strings.Repeat("0123456789abcdef", 3<<20/16) // 3 MiB, three read buffers
	assistant := fmt.Sprintf(`{"type":"message","id":"a2","parentId":"a1","timestamp":"2026-01-02T03:04:07.000Z","message":{"role":"assistant","content":[{"type":"text","text":"%s"}],"timestamp":1767323047000}}`, big)
	content := lines(hdr3,
		userLine("a1", "", "before "+big, 1767323046001),
		assistant,
		userLine("a3", "a2", "after", 1767323048001),
	) + userLine("a4", "a3", big+" last, no newline", 1767323049001)
	got, st := ttest.Collect(t, scanString, content)
	ttest.WantTexts(t, got, "before "+big, "after", big+" last, no newline")
	if st.Malformed != 0 {
		t.Errorf("malformed %d", st.Malformed)
	}
}

func TestEmitError(t *testing.T) {
	stop := errors.New("stop here")
	n := 0
	content := lines(hdr3, userLine("a1", "", "one", 1767323046001), userLine("a2", "a1", "two", 1767323047001))
	st, err := ScanReader(strings.NewReader(content), "x", func(transcript.Prompt) error {
		n++
		return stop
	})
	if err != stop || n != 1 || st.Prompts != 0 {
		t.Errorf("err %v, emitted %d, stats %+v", err, n, st)
	}
	var re *transcript.ReadError
	if errors.As(err, &re) {
		t.Errorf("an emit error is not a read error")
	}
}

func TestReaderError(t *testing.T) {
	eio := errors.New("input/output error")
	content := lines(hdr3, userLine("a1", "", "one", 1767323046001))
	_, err := ScanReader(io.MultiReader(strings.NewReader(content), iotest.ErrReader(eio)), "s.jsonl", func(transcript.Prompt) error { return nil })
	var re *transcript.ReadError
	if !errors.As(err, &re) || re.Path != "s.jsonl" || !errors.Is(err, eio) {
		t.Errorf("err = %v, want a ReadError for s.jsonl wrapping %v", err, eio)
	}
}

// A --fork copies the parent's entries verbatim (same ids and timestamps)
// into a new file whose header names the parent: each prompt counts once,
// under the earlier session.
func TestForkCopyCountsOnce(t *testing.T) {
	root := t.TempDir()
	a1 := userLine("a1", "", "asked in the parent", 1767323046001)
	a3 := userLine("a3", "a2", "asked again later in the parent", 1767323048001)
	ttest.WriteFile(t, filepath.Join(root, "--w-three--", "2026-01-02T03-04-05-000Z_sess-3.jsonl"), lines(hdr3, a1, a3))
	fork := `{"type":"session","version":3,"id":"sess-fork","timestamp":"2026-01-03T00:00:00.000Z","cwd":"/w/three","parentSession":"/x/2026-01-02T03-04-05-000Z_sess-3.jsonl"}`
	ttest.WriteFile(t, filepath.Join(root, "--w-three--", "2026-01-03T00-00-00-000Z_sess-fork.jsonl"),
		lines(fork, a1, userLine("f1", "a1", "only in the fork", 1767398400001)))
	// A v1 branchedFrom copy of the same parent, in another folder.
	v1 := `{"type":"session","id":"sess-v1","timestamp":"2026-01-04T00:00:00.000Z","cwd":"/w/three","branchedFrom":"/x/old.jsonl"}`
	ttest.WriteFile(t, filepath.Join(root, "elsewhere", "2026-01-04T00-00-00-000Z_sess-v1.jsonl"),
		lines(v1, `{"type":"message","timestamp":"2026-01-02T03:04:06.000Z","message":{"role":"user","content":[{"type":"text","text":"asked in the parent"}],"timestamp":1767323046001}}`))

	got, st := ttest.Collect(t, scanAll, root)
	ttest.WantTexts(t, got, "asked in the parent", "asked again later in the parent", "only in the fork")
	if len(got) == 3 && (got[0].Session != "sess-3" || got[2].Session != "sess-fork") {
		t.Errorf("sessions %q %q", got[0].Session, got[2].Session)
	}
	if st.Files != 3 || st.Prompts != 3 {
		t.Errorf("stats %+v", st)
	}
	// Without the cross-file dedup, each file yields its own copy.
	g2, _ := ttest.Collect(t, scanString, lines(fork, a1, userLine("f1", "a1", "only in the fork", 1767398400001)))
	ttest.WantTexts(t, g2, "asked in the parent", "only in the fork")
}

// The header's cwd is the project, whatever folder the file sits in.
func TestCwdFromHeaderNotFolder(t *testing.T) {
	root := t.TempDir()
	ttest.WriteFile(t, filepath.Join(root, "--home-a-x--", "s.jsonl"), lines(hdr3, userLine("a1", "", "where am i", 1767323046001)))
	got, _ := ttest.Collect(t, scanAll, root)
	if len(got) != 1 || got[0].Cwd != "/w/three" {
		t.Errorf("got %+v", got)
	}
}

func TestScanFiles(t *testing.T) {
	root := t.TempDir()
	ttest.WriteFile(t, filepath.Join(root, "p", "a.jsonl"), lines(hdr3, userLine("a1", "", "from a", 1767323046001)))
	ttest.WriteFile(t, filepath.Join(root, "p", "notes.txt"), lines(hdr3, userLine("n1", "", "not a transcript name", 1767323046002)))
	ttest.WriteFile(t, filepath.Join(root, "p", "a.jsonl.bak"), lines(hdr3, userLine("n2", "", "not a transcript name", 1767323046003)))
	other := t.TempDir()
	ttest.WriteFile(t, filepath.Join(other, "linked.jsonl"), lines(hdr2, userLine("l1", "", "through a symlink", 1767323046004)))
	if err := os.Symlink(filepath.Join(other, "linked.jsonl"), filepath.Join(root, "p", "b.jsonl")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(other, filepath.Join(root, "dirlink.jsonl")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(root, "p", "fifo.jsonl"), 0o600); err != nil {
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
		t.Fatal("Scan blocked (on the FIFO?)")
	}
	sort.Slice(got, func(i, j int) bool { return got[i].TS < got[j].TS })
	ttest.WantTexts(t, got, "from a", "through a symlink")
	if st.Files != 2 || st.Skipped != 2 {
		t.Errorf("stats %+v, want 2 files read, 2 skipped (FIFO, symlink to a folder)", st)
	}

	t.Run("single file root", func(t *testing.T) {
		got, st := ttest.Collect(t, scanAll, filepath.Join(root, "p", "a.jsonl"))
		ttest.WantTexts(t, got, "from a")
		if st.Files != 1 {
			t.Errorf("stats %+v", st)
		}
	})
	t.Run("symlinked root", func(t *testing.T) {
		link := filepath.Join(t.TempDir(), "sessions")
		if err := os.Symlink(filepath.Join(root, "p"), link); err != nil {
			t.Fatal(err)
		}
		got, _ := ttest.Collect(t, scanAll, link)
		sort.Slice(got, func(i, j int) bool { return got[i].TS < got[j].TS })
		ttest.WantTexts(t, got, "from a", "through a symlink")
	})
	t.Run("missing root", func(t *testing.T) {
		got, st := ttest.Collect(t, scanAll, filepath.Join(root, "nope"))
		if len(got) != 0 || !reflect.DeepEqual(st, transcript.Stats{}) {
			t.Errorf("got %v %+v", got, st)
		}
	})
	t.Run("FIFO root", func(t *testing.T) {
		got, st := ttest.Collect(t, scanAll, filepath.Join(root, "p", "fifo.jsonl"))
		if len(got) != 0 || st.Skipped != 1 {
			t.Errorf("got %v %+v", got, st)
		}
	})
}

// A folder where a transcript file should be cannot be read: the scan stops
// with a ReadError naming it.
func TestReadErrorOnDirectory(t *testing.T) {
	root := t.TempDir()
	ttest.WriteFile(t, filepath.Join(root, "p", "2026-01-01T00-00-00-000Z_a.jsonl"), lines(hdr3, userLine("a1", "", "from a", 1767323046001)))
	bad := filepath.Join(root, "p", "2026-01-02T00-00-00-000Z_b.jsonl")
	if err := os.MkdirAll(bad, 0o700); err != nil {
		t.Fatal(err)
	}
	var got []string
	st, err := scanAll(root, func(p transcript.Prompt) error {
		got = append(got, p.Text)
		return nil
	})
	var re *transcript.ReadError
	if !errors.As(err, &re) {
		t.Fatalf("err = %v (%T), want a *transcript.ReadError", err, err)
	}
	if re.Path != bad || !errors.Is(err, syscall.EISDIR) {
		t.Errorf("ReadError %q: %v, want %q: EISDIR", re.Path, re.Err, bad)
	}
	if st.Files != 1 || len(got) != 1 {
		t.Errorf("stats %+v, prompts %q (the file before it is read)", st, got)
	}
}

// Prompts come in file order, whoever reads the files; an emit error or an
// I/O error stops the scan at that point.
func TestScanOrderAndStop(t *testing.T) {
	root := t.TempDir()
	var want []string
	for i := range 20 {
		var ls []string
		ls = append(ls, hdr3)
		for j := range 3 {
			text := fmt.Sprintf("file %02d prompt %d", i, j)
			ls = append(ls, userLine(fmt.Sprintf("e%d", j), "", text, 1767323046001+int64(100*i+j)))
			want = append(want, text)
		}
		ttest.WriteFile(t, filepath.Join(root, fmt.Sprintf("d%d", i%3), fmt.Sprintf("2026-01-01T00-00-%02d-000Z_s.jsonl", i)), lines(ls...))
	}
	ttest.CheckOrderAndStop(t, scanAll, root, want, 20)

	bad := filepath.Join(root, "d0", "2026-01-01T00-00-07-500Z_s.jsonl")
	if err := os.Mkdir(bad, 0o700); err != nil {
		t.Fatal(err)
	}
	ttest.CheckReadErrorStop(t, scanAll, root, bad, want[:24], 8)
}
