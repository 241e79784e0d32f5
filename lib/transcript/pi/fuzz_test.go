package pi

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"hist/lib/identity"
	"hist/lib/transcript"
	"hist/lib/transcript/internal/filescan"
)

// fixtureLines returns the lines of the real sessions (the fuzz seeds).
func fixtureLines(f *testing.F) [][]byte {
	files, _ := filepath.Glob("testdata/sessions/*/*.jsonl")
	if len(files) == 0 {
		f.Fatal("no fixture sessions")
	}
	var out [][]byte
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		out = append(out, bytes.Split(bytes.TrimSuffix(b, []byte("\n")), []byte("\n"))...)
	}
	return out
}

// FuzzParseEntry: no line makes the entry or header parser panic, and what
// it accepts is a capturable prompt with the header's cwd and session.
func FuzzParseEntry(f *testing.F) {
	for _, l := range fixtureLines(f) {
		f.Add(l)
	}
	f.Add([]byte(`{"type":"message","message":{"role":"user","content":"<skill name=\"a\" location=\"b\">\nc\n</skill>\n\nd"}}`))
	f.Add([]byte(`{"type":"message","message":{"role":"user","content":[{"type":"text","text":"x"},{"type":"image"}],"timestamp":1e3}}`))
	f.Add([]byte(`{"type":"message","timestamp":"2026-01-02T03:04:05Z","message":{"role":"user","content":null}}`))
	h := header{ID: "s", Cwd: "/c", TS: 1}
	f.Fuzz(func(t *testing.T, line []byte) {
		var hh header
		parseHeader(line, &hh)
		p, ok, bad := parseEntry(line, &h)
		if ok && bad {
			t.Fatal("ok and bad")
		}
		if ok {
			if !identity.Capturable(p.Text) || p.Cwd != "/c" || p.Session != "s" || p.Src != transcript.SrcPi {
				t.Fatalf("accepted %+v", p)
			}
			if p.Approx && p.TS != 1 {
				t.Fatalf("approx prompt with its own time: %+v", p)
			}
		}
	})
}

// FuzzScanReader: no stream makes the reader panic, and its counts add up.
func FuzzScanReader(f *testing.F) {
	files, _ := filepath.Glob("testdata/sessions/*/*.jsonl")
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
		f.Add(b[:len(b)/2])
	}
	f.Add([]byte("{}\n\n{\"type\":\"session\"}\r\n{\"type\":\"message\",\"message\":{\"role\":\"user\",\"content\":\"hi\"}}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		n := 0
		st, err := ScanReader(bytes.NewReader(data), "fuzz", func(transcript.Prompt) error {
			n++
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		read := st.Bytes == int64(len(data)) || (st.Skipped == 1 && st.Bytes <= int64(len(data)))
		if st.Prompts != n || !read || st.Files+st.Skipped != 1 {
			t.Fatalf("stats %+v for %d prompts of %d bytes", st, n, len(data))
		}
	})
}

// skillRE is pi's own parseSkillBlock pattern (JavaScript; RE2 matches it
// the same way, including the lazy body).
var skillRE = regexp.MustCompile(`(?s)^<skill name="([^"]+)" location="([^"]+)">\n(.*?)\n</skill>(?:\n\n(.+))?$`)

// FuzzParseSkill checks parseSkill against pi's regular expression.
func FuzzParseSkill(f *testing.F) {
	for _, s := range []string{
		"<skill name=\"review\" location=\"/p/SKILL.md\">\nbody\n</skill>\n\nargs",
		"<skill name=\"x\" location=\"/p\">\n\n</skill>",
		"<skill name=\"x\" location=\"/p\">\na\n</skill>\nb\n</skill>\n\nc",
		"<skill name=\"x\" location=\"/p\">\na\n</skill>\n\n",
		"<skill name=\"x\" location=\"/p\">\na\n</skill>\n\n\n</skill>",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		name, args, ok := parseSkill(s)
		m := skillRE.FindStringSubmatch(s)
		if ok != (m != nil) {
			t.Fatalf("parseSkill(%q) ok=%v, regexp match=%v", s, ok, m != nil)
		}
		if ok && (name != m[1] || args != strings.TrimSpace(m[4])) {
			t.Fatalf("parseSkill(%q) = %q, %q; regexp %q, %q", s, name, args, m[1], m[4])
		}
	})
}

// rawStr decodes an optional string member with encoding/json.
func rawStr(raw json.RawMessage) (string, bool) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", true
	}
	var s string
	return s, json.Unmarshal(raw, &s) == nil
}

// refParseEntry is parseEntry written with encoding/json (maps, so keys
// match exactly and the last duplicate wins, as in package jsonscan).
func refParseEntry(line []byte, h *header) (p transcript.Prompt, ok, bad bool) {
	var e map[string]json.RawMessage
	if json.Unmarshal(line, &e) != nil || e == nil {
		return p, false, true
	}
	t, ok1 := rawStr(e["type"])
	id, ok2 := rawStr(e["id"])
	msg := e["message"]
	null := len(msg) == 0 || string(msg) == "null"
	if !ok1 || !ok2 || !(null || msg[0] == '{') {
		return p, false, true
	}
	if t != "message" || null {
		return p, false, false
	}
	var m map[string]json.RawMessage
	json.Unmarshal(msg, &m)
	role, ok := rawStr(m["role"])
	if !ok {
		return p, false, true
	}
	if role != "user" {
		return p, false, false
	}
	var text string
	found := false
	switch c := m["content"]; {
	case len(c) == 0 || string(c) == "null":
		return p, false, false
	case c[0] == '"':
		if text, ok = rawStr(c); !ok {
			return p, false, true
		}
		found = true
	case c[0] == '[':
		var els []json.RawMessage
		json.Unmarshal(c, &els)
		for _, el := range els {
			if string(el) == "null" {
				continue
			}
			var b map[string]json.RawMessage
			if json.Unmarshal(el, &b) != nil {
				return p, false, true
			}
			bt, ok1 := rawStr(b["type"])
			bs, ok2 := rawStr(b["text"])
			if !ok1 || !ok2 {
				return p, false, true
			}
			if bt == "text" {
				text += bs
				found = true
			}
		}
	default:
		return p, false, true
	}
	if !found {
		return p, false, false
	}
	p, ok = userPrompt(text, id, m["timestamp"], e["timestamp"], h)
	return p, ok, false
}

// FuzzParseEntryDiff: on valid JSON, parseEntry agrees with refParseEntry.
func FuzzParseEntryDiff(f *testing.F) {
	for _, l := range fixtureLines(f) {
		f.Add(l)
	}
	f.Add([]byte(`{"type":"message","id":"x","message":{"role":"user","content":[null,{"type":"text","text":"a\u00e9"},{"type":"text","text":"b"}],"timestamp":"2026-01-02T03:04:05Z"}}`))
	f.Add([]byte(`{"type":"message","type":"message","message":{"role":"user","role":"user","content":"x","content":"y"}}`))
	h := header{ID: "s", Cwd: "/c", TS: 7}
	f.Fuzz(func(t *testing.T, line []byte) {
		p, ok, bad := parseEntry(line, &h)
		if !json.Valid(line) {
			return
		}
		rp, rok, rbad := refParseEntry(line, &h)
		if p != rp || ok != rok || bad != rbad {
			t.Fatalf("%q:\n got %+v %v %v\nwant %+v %v %v", line, p, ok, bad, rp, rok, rbad)
		}
	})
}

// scanAll is Scan keeping every file.
func scanAll(root string, emit func(transcript.Prompt) error) (transcript.Stats, error) {
	return Scan(root, nil, emit)
}

// ScanReader reads one session from r (name is used in errors) as Scan
// reads a file, and emits its typed prompts; only repeats within this one
// stream are dropped.
func ScanReader(r io.Reader, name string, emit func(transcript.Prompt) error) (transcript.Stats, error) {
	d := &filescan.Dedup{Emit: emit}
	st, err := scanSession(filescan.NewLineReader(r, filescan.StreamBufSize), name, d.Add)
	st.Prompts = d.N
	return st, err
}
