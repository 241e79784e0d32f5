package claude

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"testing"

	"hist/lib/identity"
	"hist/lib/transcript"
	"hist/lib/transcript/internal/filescan"
)

func fixtureFiles(f *testing.F) [][]byte {
	names, _ := filepath.Glob("testdata/*/projects/*/*.jsonl")
	if len(names) == 0 {
		f.Fatal("no fixture transcripts")
	}
	var out [][]byte
	for _, name := range names {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		out = append(out, b)
	}
	return out
}

// FuzzParseRecord: no line makes the record parser panic, and what it
// accepts is a capturable prompt without a paste wrapper pair.
func FuzzParseRecord(f *testing.F) {
	for _, b := range fixtureFiles(f) {
		for _, l := range bytes.Split(b, []byte("\n")) {
			f.Add(l)
		}
	}
	f.Add([]byte(`{"type":"attachment","attachment":{"type":"queued_command","prompt":[{"type":"text","text":"q"}],"commandMode":"prompt"}}`))
	f.Add([]byte(`{"type":"user","message":{"content":"<ide_selection>x</ide_selection><pasted_content id=\"1\">\ny\n</pasted_content id=\"1\">"},"origin":{"kind":"human"}}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		p, ok, bad := parseRecord(line)
		if ok && bad {
			t.Fatal("ok and bad")
		}
		if ok && (!identity.Capturable(p.Text) || p.Src != transcript.SrcClaude) {
			t.Fatalf("accepted %+v", p)
		}
	})
}

// FuzzPromptText: the text pipeline (IDE tags, wrappers, commands, pastes)
// never panics and only ever takes text away.
func FuzzPromptText(f *testing.F) {
	for _, s := range []string{
		"<command-message>greet</command-message>\n<command-name>/greet</command-name>\n<command-args>Ada</command-args>",
		"\n\n<pasted_content id=\"f56b\">\nA\nB\n</pasted_content id=\"f56b\">\n",
		"<ide_opened_file>x</ide_opened_file>\n<ide_selection>y</ide_selection> z",
		"<system-reminder>a</system-reminder><bash-stdout>b</bash-stdout>",
		"[Request interrupted by user for tool use]",
		"<pasted_content id=\"\">\n</pasted_content id=\"\">",
	} {
		f.Add(s, "second")
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		text, ok := promptText([]string{a, b})
		if ok && len(text) > len(a)+len(b)+1 {
			t.Fatalf("%q from %q %q", text, a, b)
		}
	})
}

// FuzzScanReader: no stream makes the reader panic, and its counts add up.
func FuzzScanReader(f *testing.F) {
	for _, b := range fixtureFiles(f) {
		f.Add(b)
		f.Add(b[:len(b)/3])
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		n := 0
		st, err := ScanReader(bytes.NewReader(data), "fuzz", func(transcript.Prompt) error {
			n++
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if st.Prompts != n || st.Bytes != int64(len(data)) || st.Files != 1 {
			t.Fatalf("stats %+v for %d prompts of %d bytes", st, n, len(data))
		}
	})
}

func rawStr(raw json.RawMessage) (string, bool) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", true
	}
	var s string
	return s, json.Unmarshal(raw, &s) == nil
}

func rawNull(raw json.RawMessage) bool { return len(raw) == 0 || string(raw) == "null" }

func rawObject(raw json.RawMessage) (map[string]json.RawMessage, bool) {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil || m == nil {
		return nil, false
	}
	return m, true
}

func rawHuman(raw json.RawMessage) (human, ok bool) {
	if rawNull(raw) {
		return true, true
	}
	m, ok := rawObject(raw)
	if !ok {
		return false, false
	}
	k, ok := rawStr(m["kind"])
	return k == "human", ok
}

// refParseRecord is parseRecord written with encoding/json (maps, so keys
// match exactly and the last duplicate wins, as in package jsonscan).
func refParseRecord(line []byte) (p transcript.Prompt, ok, bad bool) {
	r, ok := rawObject(line)
	if !ok {
		return p, false, true
	}
	typ, ok1 := rawStr(r["type"])
	uuid, ok2 := rawStr(r["uuid"])
	ts, ok3 := rawStr(r["timestamp"])
	session, ok4 := rawStr(r["sessionId"])
	cwd, ok5 := rawStr(r["cwd"])
	promptSource, ok6 := rawStr(r["promptSource"])
	human, ok7 := rawHuman(r["origin"])
	objOrNull := func(raw json.RawMessage) bool { return rawNull(raw) || raw[0] == '{' }
	if !ok1 || !ok2 || !ok3 || !ok4 || !ok5 || !ok6 || !ok7 || !objOrNull(r["message"]) || !objOrNull(r["attachment"]) {
		return p, false, true
	}
	isTrue := func(k string) bool { return string(r[k]) == "true" }
	present := func(k string) bool { return !rawNull(r[k]) && string(r[k]) != `""` }
	var content json.RawMessage
	switch typ {
	case "user":
		if rawNull(r["message"]) || isTrue("isMeta") || isTrue("isCompactSummary") ||
			isTrue("isVisibleInTranscriptOnly") || present("toolUseResult") || promptSource == "system" {
			return p, false, false
		}
		m, _ := rawObject(r["message"])
		content = m["content"]
	case "attachment":
		if rawNull(r["attachment"]) {
			return p, false, false
		}
		a, _ := rawObject(r["attachment"])
		at, ok1 := rawStr(a["type"])
		cm, ok2 := rawStr(a["commandMode"])
		aHuman, ok3 := rawHuman(a["origin"])
		if !ok1 || !ok2 || !ok3 {
			return p, false, true
		}
		if at != "queued_command" || (cm != "" && cm != "prompt") || !aHuman {
			return p, false, false
		}
		content = a["prompt"]
	default:
		return p, false, false
	}
	if isTrue("isSidechain") || present("agentId") || !human {
		return p, false, false
	}
	var parts []string
	switch {
	case rawNull(content):
		return p, false, false
	case content[0] == '"':
		s, ok := rawStr(content)
		if !ok {
			return p, false, true
		}
		parts = []string{s}
	case content[0] == '[':
		var els []json.RawMessage
		json.Unmarshal(content, &els)
		toolResult := false
		for _, el := range els {
			if rawNull(el) {
				continue
			}
			b, ok := rawObject(el)
			if !ok {
				return p, false, true
			}
			bt, ok1 := rawStr(b["type"])
			bs, ok2 := rawStr(b["text"])
			switch {
			case !ok1 || !ok2:
				return p, false, true
			case bt == "tool_result":
				toolResult = true
			case bt == "text":
				parts = append(parts, bs)
			}
		}
		if toolResult {
			return p, false, false
		}
	default:
		return p, false, true
	}
	if len(parts) == 0 {
		return p, false, false
	}
	text, ok := promptText(parts)
	if !ok || !identity.Capturable(text) {
		return p, false, false
	}
	tms, tsOK := parseISO(ts)
	return transcript.Prompt{Text: text, TS: tms, Cwd: cwd, Session: session, Src: transcript.SrcClaude, Key: uuid, Approx: !tsOK}, true, false
}

// FuzzParseRecordDiff: on valid JSON, parseRecord agrees with refParseRecord.
func FuzzParseRecordDiff(f *testing.F) {
	for _, b := range fixtureFiles(f) {
		for _, l := range bytes.Split(b, []byte("\n")) {
			f.Add(l)
		}
	}
	f.Add([]byte(`{"type":"attachment","attachment":{"type":"queued_command","prompt":[null,{"type":"text","text":"q\u00e9"}],"commandMode":"prompt","origin":{"kind":"human"}},"uuid":"u"}`))
	f.Add([]byte(`{"type":"user","type":"user","message":{"content":[{"type":"tool_result"},{"type":"text","text":"x"}]},"origin":null,"agentId":""}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		p, ok, bad := parseRecord(line)
		if !json.Valid(line) {
			return
		}
		rp, rok, rbad := refParseRecord(line)
		if p != rp || ok != rok || bad != rbad {
			t.Fatalf("%q:\n got %+v %v %v\nwant %+v %v %v", line, p, ok, bad, rp, rok, rbad)
		}
	})
}

// FuzzCandidate: the line filter lets through every line that is a
// prompt.
func FuzzCandidate(f *testing.F) {
	for _, b := range fixtureFiles(f) {
		for _, l := range bytes.Split(b, []byte("\n")) {
			f.Add(l)
		}
	}
	f.Add([]byte(`"type":"user"`))
	f.Add([]byte(`y"type":"queued_command"`))
	f.Add([]byte(`{"type" :\t"user", "content": [{"type": "tool_result"}]}`))
	f.Add([]byte(`"type": "type": "user"`))
	f.Fuzz(func(t *testing.T, line []byte) {
		if _, ok, _ := parseRecord(line); ok && !candidate(line) {
			t.Fatalf("candidate(%q) is false for a prompt", line)
		}
	})
}

// scanAll is Scan keeping every file.
func scanAll(root string, emit func(transcript.Prompt) error) (transcript.Stats, error) {
	return Scan(root, nil, emit)
}

// ScanReader reads one transcript from r (name is used in errors) as Scan
// reads a file, and emits its typed prompts; only repeats (by uuid) within
// this one stream are dropped.
func ScanReader(r io.Reader, name string, emit func(transcript.Prompt) error) (transcript.Stats, error) {
	d := &filescan.Dedup{Emit: emit}
	st, err := scanTranscript(filescan.NewLineReader(r, filescan.StreamBufSize), name, d.Add)
	st.Prompts = d.N
	return st, err
}
