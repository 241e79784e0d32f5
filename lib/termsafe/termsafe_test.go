package termsafe

import (
	"bytes"
	"testing"
)

func TestLine(t *testing.T) {
	for in, want := range map[string]string{
		"plain text":         "plain text",
		"tab\tstays":         "tab\tstays",
		"a\nb\r\nc":          "a↵b↵c",
		"\x1b]0;title\x07":   "␛]0;title␇",
		"\x1b[2J":            "␛[2J",
		"\x1b]52;c;aGk=\x07": "␛]52;c;aGk=␇",
		"del\x7f":            "del␡",
		"c1 \u009b2J":        "c1 \ufffd2J",
		"bad \xff utf8":      "bad \ufffd utf8",
		"ünïcödé ✓":          "ünïcödé ✓",
		"lone\rcr":           "lone␍cr",
		"nul\x00":            "nul␀",
	} {
		if got := Line(in); got != want {
			t.Errorf("Line(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestText(t *testing.T) {
	if got := Text("a\x1b]0;x\x07\nb\r\n"); got != "a␛]0;x␇\nb\n" {
		t.Errorf("Text = %q", got)
	}
}

func TestWriterNotTerminal(t *testing.T) {
	var b bytes.Buffer
	if w := Writer(&b); w != &b {
		t.Errorf("Writer of a buffer should be the buffer itself")
	}
}

func TestWriterSplitRune(t *testing.T) {
	var b bytes.Buffer
	w := &writer{w: &b}
	in := []byte("é\x1b[2J✓\n")
	for i := range in {
		if n, err := w.Write(in[i : i+1]); n != 1 || err != nil {
			t.Fatalf("Write = %d, %v", n, err)
		}
	}
	if got, want := b.String(), "é␛[2J✓\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
