package ttest_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/txtar"

	"hist/lib/transcript"
	"hist/lib/transcript/claude"
	"hist/lib/transcript/codex"
	"hist/lib/transcript/cursor"
	"hist/lib/transcript/internal/ttest"
	"hist/lib/transcript/opencode"
	"hist/lib/transcript/pi"
)

// A reader under test: how it reads a folder, and the testdata its seeds
// come from (folders whose JSON and JSONL files, and paste files, make one
// seed each).
type respaceReader struct {
	name  string
	scan  ttest.ScanFunc
	seeds []string
}

// recall reads the prompt-recall file named file in root with scan.
func recall(file string, scan func(string, func(transcript.Prompt) error) (transcript.Stats, error)) ttest.ScanFunc {
	return func(root string, emit func(transcript.Prompt) error) (transcript.Stats, error) {
		return scan(filepath.Join(root, file), emit)
	}
}

var respaceReaders = []respaceReader{
	{"pi", keepAll(pi.Scan), []string{"../../pi/testdata/sessions"}},
	{"claude", keepAll(claude.Scan), []string{"../../claude/testdata/claude/projects", "../../claude/testdata/claude-tui/projects"}},
	{"codex", keepAll(codex.Scan), []string{"../../codex/testdata/codex", "../../codex/testdata/codex-tui"}},
	{"cursor", keepAll(cursor.Scan), nil},
	{"opencode", keepAll(opencode.Scan), nil},
	{"legacy claude", recall("history.jsonl", claude.ScanRecall), []string{"../../claude/testdata/recall"}},
	{"legacy codex", recall("history.jsonl", codex.ScanRecall), []string{"../../codex/testdata/recall"}},
	{"legacy opencode", recall("prompt-history.jsonl", opencode.ScanRecall), []string{"../../opencode/testdata/recall"}},
	{"legacy cursor", recall("prompt_history.json", cursor.ScanRecall), nil},
}

// Hand-written seeds for the shapes no testdata holds.
var respaceSeeds = map[string][]string{
	"cursor": {`-- projects/w-proj/agent-transcripts/11111111-2222-3333-4444-555555555555.jsonl --
{"role":"user","message":{"content":[{"type":"text","text":"<user_info>x</user_info>\n<user_query>\nfrom the mirror\n</user_query>"}]}}
{"role":"assistant","message":{"content":[{"type":"text","text":"reply"}]}}
{"type":"turn_ended","status":"success"}
{"role":"user","message":{"content":"string content"}}
`},
	"opencode": {`-- storage/session/proj1/ses_j.json --
{"id":"ses_j","projectID":"proj1","directory":"/json","title":"t","version":"0.5","time":{"created":3,"updated":4}}
-- storage/message/ses_j/msg_j1.json --
{"id":"msg_j1","sessionID":"ses_j","role":"user","time":{"created":30}}
-- storage/part/msg_j1/prt_1.json --
{"id":"prt_1","messageID":"msg_j1","type":"text","text":"json part one"}
-- storage/part/msg_j1/prt_2.json --
{"id":"prt_2","messageID":"msg_j1","type":"text","text":"json [part] {two}, \"quoted\": yes"}
-- storage/message/ses_j/msg_j2.json --
{"id":"msg_j2","sessionID":"ses_j","role":"assistant","time":{"created":31}}
-- storage/part/msg_j2/prt_4.json --
{"id":"prt_4","type":"text","text":"assistant text"}
`},
	"legacy cursor": {`-- prompt_history.json --
["first prompt",{"text":"second, with {braces}"}]
-- chats/ws/chat1/prompt_history.json --
{"entries":[{"prompt":"per chat"}]}
`},
	"claude": {`-- -w-proj/s1.jsonl --
{"type":"summary","summary":"s","leafUuid":"l"}
{"type":"user","message":{"role":"user","content":"typed without a cwd"},"uuid":"u1","timestamp":"2026-01-02T03:04:05.000Z","sessionId":"s1"}
{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":"x"}]},"uuid":"u2","sessionId":"s1","cwd":"/w/proj"}
{"type":"attachment","attachment":{"type":"queued_command","prompt":"queued","commandMode":"prompt"},"uuid":"u3","sessionId":"s1","cwd":"/w/proj"}
`},
	"codex": {`-- sessions/rollout-2025-05-07T17-24-21-5973b6c0-94b8-487b-a530-2aeb6098ae0e.jsonl --
{"id":"5973b6c0-94b8-487b-a530-2aeb6098ae0e","timestamp":"2025-05-07T17:24:21.123Z","instructions":null}
{"record_type":"state"}
{"type":"message","role":"user","content":[{"type":"input_text","text":"<environment_context>\n<cwd>/w/old</cwd>\n</environment_context>"}]}
{"type":"message","role":"user","content":[{"type":"input_text","text":"list the files"}]}
{"type":"message","role":"assistant","content":[{"type":"output_text","text":"a, b"}]}
`},
}

// archives packs the JSON, JSONL and paste files under dir into small
// archives, as the fuzzer wants them: archive k holds every JSONL file's
// first line (a session's header) and its k-th few lines, lines of more
// than a few KB (tool output) left out, and the other files whole.
func archives(t testing.TB, dir string) [][]byte {
	const chunk, maxLine = 4, 4 << 10
	type file struct {
		name  string
		lines [][]byte // JSONL: the lines kept
		data  []byte   // others: the whole file
	}
	var files []file
	n := 1
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() == "manifest.json" {
			return err
		}
		ext := filepath.Ext(path)
		if ext != ".json" && ext != ".jsonl" && ext != ".txt" {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		f := file{name: filepath.ToSlash(rel)}
		if ext != ".jsonl" {
			f.data = data
		} else {
			for _, l := range strings.SplitAfter(string(data), "\n") {
				if l != "" && len(l) <= maxLine {
					f.lines = append(f.lines, []byte(l))
				}
			}
			n = max(n, (len(f.lines)-1+chunk-1)/chunk)
		}
		files = append(files, f)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var out [][]byte
	for k := range n {
		var a txtar.Archive
		for _, f := range files {
			data := f.data
			if f.lines != nil {
				data = append([]byte(nil), f.lines[0]...)
				for i := 1 + k*chunk; i < min(1+(k+1)*chunk, len(f.lines)); i++ {
					data = append(data, f.lines[i]...)
				}
			}
			a.Files = append(a.Files, txtar.File{Name: f.name, Data: data})
		}
		out = append(out, txtar.Format(&a))
	}
	return out
}

// unpack writes the archive's files under root, the JSON ones re-spaced
// when respace is true, all with one modification time (readers order
// files, or date prompts, by it).
func unpack(t *testing.T, a *txtar.Archive, root string, respace bool, seed uint64) {
	mtime := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, f := range a.Files {
		name := filepath.FromSlash(f.Name)
		if !filepath.IsLocal(name) {
			t.Skip("not a local path")
		}
		data := f.Data
		if respace && strings.HasPrefix(filepath.Ext(name), ".json") {
			data = addSpace(data, seed)
		}
		path := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Skip(err)
		}
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Skip(err)
		}
		if err := os.Chtimes(path, mtime, mtime); err != nil {
			t.Fatal(err)
		}
	}
}

// parseArchive is txtar.Parse, or nil for the inputs it panics on (a
// marker such as "-- --").
func parseArchive(data []byte) (a *txtar.Archive) {
	defer func() {
		if recover() != nil {
			a = nil
		}
	}()
	return txtar.Parse(data)
}

// FuzzRespace: every reader reads a transcript re-spaced (JSON white space
// added between tokens, each line staying one line) as it reads the
// transcript itself. The input is a txtar archive of the files under the
// reader's folder.
func FuzzRespace(f *testing.F) {
	for i, r := range respaceReaders {
		for _, dir := range r.seeds {
			for k, a := range archives(f, dir) {
				f.Add(uint8(i), a, uint64(i+k))
			}
		}
		for _, s := range respaceSeeds[r.name] {
			f.Add(uint8(i), []byte(s), uint64(7*i+1))
		}
	}
	f.Fuzz(func(t *testing.T, which uint8, data []byte, seed uint64) {
		r := respaceReaders[int(which)%len(respaceReaders)]
		a := parseArchive(data)
		if a == nil || len(a.Files) == 0 || len(a.Files) > 64 {
			return
		}
		read := func(respace bool) ([]transcript.Prompt, error) {
			root := t.TempDir()
			unpack(t, a, root, respace, seed)
			var got []transcript.Prompt
			_, err := r.scan(root, func(p transcript.Prompt) error {
				p.File, _ = filepath.Rel(root, p.File)
				got = append(got, p)
				return nil
			})
			return got, err
		}
		want, werr := read(false)
		got, gerr := read(true)
		if (werr != nil) != (gerr != nil) {
			t.Fatalf("%s: error %v, re-spaced %v", r.name, werr, gerr)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: re-spaced\n got %+v\nwant %+v", r.name, got, want)
		}
	})
}

// addSpace returns data with JSON white space (spaces and tabs, never a
// newline: each line stays one line) after every '{', '[', ':' and ','
// and before every '}' and ']' that stand outside strings; seed picks how
// much goes where. A reader must read the result as it reads data. A
// string is taken to end at its line's end, as no JSON string spans lines.
func addSpace(data []byte, seed uint64) []byte {
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

// keepAll is a reader's Scan keeping every file.
func keepAll(scan func(string, transcript.Keep, func(transcript.Prompt) error) (transcript.Stats, error)) ttest.ScanFunc {
	return func(root string, emit func(transcript.Prompt) error) (transcript.Stats, error) {
		return scan(root, nil, emit)
	}
}
