package codex

import (
	"strings"
	"testing"

	"hist/lib/transcript"
	"hist/lib/transcript/internal/filescan"
)

// A prompt line longer than filescan.MaxLine is read through without being held and
// counted as malformed; the lines after it are read as usual.
func TestOversizeLine(t *testing.T) {
	head := `{"timestamp":"2026-01-02T03:04:05.000Z","type":"session_meta","payload":{"id":"s1","cwd":"/p"}}` + "\n"
	big := `{"timestamp":"2026-01-02T03:04:06.000Z","type":"event_msg","payload":{"type":"user_message","message":"` +
		strings.Repeat("z", filescan.MaxLine+10) + `"}}` + "\n"
	ok := `{"timestamp":"2026-01-02T03:04:07.000Z","type":"event_msg","payload":{"type":"user_message","message":"after the big one"}}` + "\n"
	var got []string
	st, err := ScanReader(strings.NewReader(head+big+ok), "big.jsonl", func(p transcript.Prompt) error {
		got = append(got, p.Text)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0] != "after the big one" {
		t.Fatalf("prompts: %.60q", got)
	}
	if st.Malformed < 1 {
		t.Fatalf("Malformed = %d, want the oversize line counted", st.Malformed)
	}
}
