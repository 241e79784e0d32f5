package lineenc

import (
	"strings"
	"testing"
)

func TestEncode(t *testing.T) {
	cases := []struct{ in, want string }{
		{"", ""},
		{"plain", "plain"},
		{"a\nb", `a\nb`},
		{`C:\path\to`, `C:\\path\\to`},
		{`literal \n stays`, `literal \\n stays`},
		{"ends with \\", `ends with \\`},
		{"\n\n", `\n\n`},
		{"tab\tand\rcr and é", "tab\tand\rcr and é"},
		{"deploy\x00 the staging branch", `deploy\0 the staging branch`},
		{`literal \0 stays`, `literal \\0 stays`},
	}
	for _, c := range cases {
		if got := encode(c.in); got != c.want {
			t.Errorf("encode(%q) = %q, want %q", c.in, got, c.want)
		}
		if got := decode(c.want); got != c.in {
			t.Errorf("decode(%q) = %q, want %q", c.want, got, c.in)
		}
		if got := string(Lines.Append([]byte("x:"), Listed{Text: c.in})); got != "x:"+c.want+"\n" {
			t.Errorf("Append = %q", got)
		}
	}
}

// A line holds no NUL, so hist-delete --stdin takes it back whole.
func TestEncodeNoNUL(t *testing.T) {
	if e := encode("a\x00\x00b\\0"); strings.IndexByte(e, 0) >= 0 {
		t.Fatalf("Encode wrote a NUL: %q", e)
	}
}

func TestDecodeLenient(t *testing.T) {
	// Sequences Encode never writes are kept as they are.
	for in, want := range map[string]string{`\t`: `\t`, `a\`: `a\`, `\x\\`: `\x\`, `\`: `\`} {
		if got := decode(in); got != want {
			t.Errorf("decode(%q) = %q, want %q", in, got, want)
		}
	}
}

func FuzzRoundTrip(f *testing.F) {
	for _, s := range []string{"", "a\nb", `\n`, "\\\n\\", "\xff\n", "é\\", "a\x00b", `\0`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		e := encode(s)
		if strings.ContainsRune(e, '\n') {
			t.Fatalf("encode(%q) = %q holds a newline", s, e)
		}
		if d := decode(e); d != s {
			t.Fatalf("decode(encode(%q)) = %q", s, d)
		}
		// Decode never panics and never lengthens its input.
		if d := decode(s); len(d) > len(s) {
			t.Fatalf("decode(%q) = %q is longer", s, d)
		}
	})
}

// What each format prints, Parse reads back: every prompt but the blank
// ones, and for NUL only what fits.
func TestFormatsRoundTrip(t *testing.T) {
	prompts := []string{"plain", "two\nlines", `C:\path`, "tab\tand é", "   ", "deploy\x00 staging", "bad \xff\xe2\x80 utf8 \x1b]0;t\a \u202e"}
	for _, f := range []Format{Lines, NUL, JSON} {
		var data []byte
		var want []string
		for _, p := range prompts {
			if !f.Fits(p) {
				continue
			}
			data = f.Append(data, Listed{Text: p, TS: 1, File: "f.jsonl"})
			if strings.TrimSpace(p) != "" {
				want = append(want, p)
			}
		}
		got, err := Parse(data, f)
		if err != nil || strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("%s: Parse = %q, %v; want %q", f, got, err, want)
		}
	}
	if NUL.Fits("a\x00b") || !Lines.Fits("a\x00b") || !NUL.Fits("ab") {
		t.Error("Fits: only NUL cannot hold a NUL byte")
	}
	if got := string(Raw.Append(nil, Listed{Text: "as\\typed\n"})); got != "as\\typed\n\n" {
		t.Errorf("Raw = %q", got)
	}
}

// Lines input in another format is refused with what to use instead.
func TestParseRefusesOtherFormats(t *testing.T) {
	for in, want := range map[string]string{
		"a\x00b\x00": "read it with -0",
		`{"text":"x","ts":1,"cwd":"","file":"f"}` + "\n": "read it with --stdin=json",
	} {
		if _, err := Parse([]byte(in), Lines); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%q) = %v, want %q", in, err, want)
		}
	}
	if _, err := Parse([]byte("{\"text\":1}\n"), JSON); err == nil || !strings.Contains(err.Error(), "line 1") {
		t.Errorf("JSON without a text string: %v", err)
	}
	// One listed object among plain lines is a prompt like any other.
	got, err := Parse([]byte(`{"text":"x","ts":1,"cwd":"","file":"f"}`+"\nplain\n"), Lines)
	if err != nil || len(got) != 2 {
		t.Errorf("mixed input: %q, %v", got, err)
	}
}
