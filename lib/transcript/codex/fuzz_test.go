package codex

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"hist/lib/identity"
	"hist/lib/transcript"
)

func fuzzSeeds(f *testing.F) {
	files, _ := filepath.Glob("testdata/*/sessions/*/*/*/*.jsonl")
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		lines := bytes.Split(data, []byte("\n"))
		for i, l := range lines {
			if len(l) < 4096 && (i < 3 || bytes.Contains(l, []byte("UserMessage")) || bytes.Contains(l, []byte("turn_context"))) {
				f.Add(l)
			}
		}
	}
	f.Add((&rb{}).meta(sess, "/w", map[string]any{"forked_from_id": "x"}).
		userMsg("2026-01-02T03:04:06.000Z", "hello", map[string]any{"kind": "plain"}).
		item("2026-01-02T03:04:06.001Z", "i1", "hello").
		resp("2026-01-02T03:04:07.000Z", "user", "fallback").bytes())
	f.Add([]byte(`{"payload":{"message":"reordered","type":"user_message"},"type":"event_msg","timestamp":"2026-01-02T03:04:07.000Z"}`))
	f.Add([]byte(`{"timestamp":"x","ordinal":12,"type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]}}`))
}

// FuzzRolloutLines feeds arbitrary rollout content to the line parser: it
// must never panic, and what it emits must be capturable codex prompts.
func FuzzRolloutLines(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		n := 0
		keys := map[string]bool{}
		st, err := ScanReader(bytes.NewReader(data), "rollout-fuzz.jsonl", func(p transcript.Prompt) error {
			n++
			if !identity.Capturable(p.Text) || p.Src != transcript.SrcCodex || p.Key == "" {
				t.Fatalf("emitted %+v", p)
			}
			if keys[p.Key] {
				t.Fatalf("key %q emitted twice", p.Key)
			}
			keys[p.Key] = true
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if st.Prompts != n || (st.Subagent == 0 && st.Bytes != int64(len(data))) {
			t.Fatalf("stats %+v after %d prompts of %d bytes", st, n, len(data))
		}
	})
}

// FuzzEnvelope checks the fast envelope reader against encoding/json: when
// it recognizes a line that is valid JSON with unique top-level keys, the
// type it reads is the line's "type".
func FuzzEnvelope(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, line []byte) {
		typ, ptype, _, ok := envelope(line)
		if !ok || !json.Valid(line) || !utf8.Valid(typ) || !utf8.Valid(ptype) {
			// encoding/json turns invalid UTF-8 into U+FFFD: a name with
			// either matches no line type the reader knows.
			return
		}
		top, dup := topLevel(line)
		if dup || top == nil {
			return
		}
		var want string
		if json.Unmarshal(top["type"], &want) != nil || want != string(typ) {
			t.Fatalf("envelope type %q, json %s", typ, top["type"])
		}
		if ptype != nil {
			pl, dup := topLevel(top["payload"])
			var pt string
			if !dup && pl != nil && (json.Unmarshal(pl["type"], &pt) != nil || pt != string(ptype)) {
				t.Fatalf("payload type %q, json %s", ptype, pl["type"])
			}
		}
		// A partial line never decides differently from the whole line,
		// except by asking for more.
		p := &parser{}
		whole, _ := p.classify(line, true)
		for _, cut := range []int{len(line) / 3, len(line) / 2} {
			part, _ := p.classify(line[:cut], false)
			if part != actMore && part != whole {
				t.Fatalf("cut at %d: %v, whole line: %v", cut, part, whole)
			}
		}
	})
}

// topLevel decodes a JSON object's members and reports duplicate keys.
func topLevel(b []byte) (map[string]json.RawMessage, bool) {
	dec := json.NewDecoder(bytes.NewReader(b))
	tok, err := dec.Token()
	if err != nil || tok != json.Delim('{') {
		return nil, false
	}
	out := map[string]json.RawMessage{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, false
		}
		k, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, false
		}
		if _, ok := out[k]; ok {
			return nil, true
		}
		out[k] = v
	}
	return out, false
}

func TestClassifyIsConservative(t *testing.T) {
	// Lines classify must hand to the decoder.
	for _, l := range []string{
		`{"timestamp":"t","type":"event_msg","payload":{"type":"user_message","message":"x"}}`,
		`{"timestamp":"t","ordinal":3,"type":"event_msg","payload":{"type":"item_completed","thread_id":"a","item":{"type":"UserMessage"}}}`,
		`{"timestamp":"t","type":"session_meta","payload":{}}`,
		`{"timestamp":"t","type":"turn_context","payload":{}}`,
		`{"type":"event_msg","timestamp":"t","payload":{}}`,
		`{"timestamp":"t\"","type":"event_msg"}`,
		`{"timestamp":"t","type":"event_msg","payload":{"message":"x","type":"user_message"}}`,
	} {
		if act, _ := (&parser{}).classify([]byte(l), true); act != actDecode {
			t.Errorf("%s: %v", l, act)
		}
	}
	for _, l := range []string{
		`{"timestamp":"t","type":"event_msg","payload":{"type":"token_count"}}`,
		`{"timestamp":"t","type":"event_msg","payload":{"type":"item_completed","item":{"type":"AgentMessage","text":"UserMessage"}}}`,
		`{"timestamp":"t","type":"world_state","payload":{"type":"user_message"}}`,
		`{"timestamp":"t","type":"response_item","payload":{"type":"function_call_output","output":"\"role\":\"user\""}}`,
	} {
		if act, _ := (&parser{}).classify([]byte(l), true); act != actSkip {
			t.Errorf("%s: %v", l, act)
		}
	}
	long := `{"timestamp":"t","type":"event_msg","payload":{"type":"item_completed","thread_id":"a","item":{"type":"AgentMessage","content":"` + strings.Repeat("x", 100)
	if act, _ := (&parser{}).classify([]byte(long), false); act != actSkip {
		t.Errorf("long agent message: %v", act)
	}
}
