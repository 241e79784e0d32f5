package cursor

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"

	"hist/lib/identity"
	"hist/lib/transcript"
)

// FuzzMirrorLines feeds arbitrary mirror transcripts to ScanReader: no
// panic, every byte counted, only capturable cursor prompts out.
func FuzzMirrorLines(f *testing.F) {
	f.Add([]byte(mirrorLine("user", textParts("<user_info>x</user_info>\n"+query("q"))) + "\n" + `{"type":"turn_ended","status":"success"}`))
	f.Add([]byte(mirrorLine("user", "plain") + "\n" + mirrorLine("assistant", textParts("a")) + "\n{"))
	f.Add([]byte(`{"role":"user","content":"<user_query>top-level content</user_query>"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		n := 0
		st, err := ScanReader(bytes.NewReader(data), "/p/agent-transcripts/x.jsonl", func(p transcript.Prompt) error {
			n++
			if !identity.Capturable(p.Text) || p.Src != transcript.SrcCursor || p.Session != "x" || p.Key == "" {
				t.Fatalf("emitted %+v", p)
			}
			return nil
		})
		if err != nil || st.Bytes != int64(len(data)) || st.Prompts != n {
			t.Fatalf("%+v %v", st, err)
		}
	})
}

// FuzzRootBlob: the protobuf reader never panics and only yields ids of 64
// lowercase hex digits.
func FuzzRootBlob(f *testing.F) {
	f.Add(append(field(1, bytes.Repeat([]byte{7}, 32)), field(9, []byte("/w"))...))
	f.Add([]byte{0x08, 0x96, 0x01, 0x0a, 0x00})
	f.Fuzz(func(t *testing.T, b []byte) {
		ids, _, _ := parseRoot(b)
		for _, id := range ids {
			if _, err := hex.DecodeString(id); len(id) != 64 || strings.ToLower(id) != id || err != nil {
				t.Fatalf("id %q", id)
			}
		}
	})
}

// FuzzUserText: the <user_query> rule never panics, and a prompt it finds
// is a substring of the message's text.
func FuzzUserText(f *testing.F) {
	f.Add("<user_info>i</user_info>\n<user_query>\nq\n</user_query>")
	f.Add("<user_query>")
	f.Add("</user_query><user_query>")
	f.Fuzz(func(t *testing.T, s string) {
		raw, _ := json.Marshal(s)
		var stored string // as the store holds it (invalid UTF-8 replaced)
		if err := json.Unmarshal(raw, &stored); err != nil {
			t.Fatal(err)
		}
		got, ok := userText(raw)
		if ok && !strings.Contains(stored, got) {
			t.Fatalf("%q from %q", got, stored)
		}
	})
}
