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
		"c1 \u009b2J":        "c1 <U+009B>2J",
		"bad \xff utf8":      "bad <0xFF> utf8",
		"\xe2\x80":           "<0xE2><0x80>",
		"\xff\x1b[2J\xc2":    "<0xFF>␛[2J<0xC2>",
		"abc\u202edcba":      "abc<U+202E>dcba",
		"\u2066\u2067\u2068\u2069\u202a\u202b\u202c\u202d\u200e\u200f\u061c": "<U+2066><U+2067><U+2068><U+2069><U+202A><U+202B><U+202C><U+202D><U+200E><U+200F><U+061C>",
		"zero\u200b\u200c\u200d\u2060\ufeffwidth":                            "zero<U+200B><U+200C><U+200D><U+2060><U+FEFF>width",
		"tag \U000E0041":       "tag <U+E0041>",
		"line\u2028para\u2029": "line<U+2028>para<U+2029>",
		"\ufffd stays":         "\ufffd stays",
		"ünïcödé ✓":            "ünïcödé ✓",
		"lone\rcr":             "lone␍cr",
		"nul\x00":              "nul␀",
	} {
		if got := Line(in); got != want {
			t.Errorf("Line(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestCut(t *testing.T) {
	for _, c := range []struct {
		in   string
		i, n int
	}{
		{"plain", 5, 0},
		{"", 0, 0},
		{"a\tb", 1, 1},
		{"é\n", 2, 1},
		{"é\u202e", 2, 3},
		{"ab\xffc", 2, 1},
		{"\u009b", 0, 2},
		{"\U000E0041", 0, 4},
	} {
		if i, n := Cut(c.in); i != c.i || n != c.n {
			t.Errorf("Cut(%q) = %d, %d, want %d, %d", c.in, i, n, c.i, c.n)
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
