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
		if got := Encode(c.in); got != c.want {
			t.Errorf("Encode(%q) = %q, want %q", c.in, got, c.want)
		}
		if got := Decode(c.want); got != c.in {
			t.Errorf("Decode(%q) = %q, want %q", c.want, got, c.in)
		}
		if got := string(Append([]byte("x:"), c.in)); got != "x:"+c.want {
			t.Errorf("Append = %q", got)
		}
	}
}

// A line holds no NUL, so hist-delete --stdin takes it back whole.
func TestEncodeNoNUL(t *testing.T) {
	if e := Encode("a\x00\x00b\\0"); strings.IndexByte(e, 0) >= 0 {
		t.Fatalf("Encode wrote a NUL: %q", e)
	}
}

func TestDecodeLenient(t *testing.T) {
	// Sequences Encode never writes are kept as they are.
	for in, want := range map[string]string{`\t`: `\t`, `a\`: `a\`, `\x\\`: `\x\`, `\`: `\`} {
		if got := Decode(in); got != want {
			t.Errorf("Decode(%q) = %q, want %q", in, got, want)
		}
	}
}

func FuzzRoundTrip(f *testing.F) {
	for _, s := range []string{"", "a\nb", `\n`, "\\\n\\", "\xff\n", "é\\", "a\x00b", `\0`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		e := Encode(s)
		if strings.ContainsRune(e, '\n') {
			t.Fatalf("Encode(%q) = %q holds a newline", s, e)
		}
		if d := Decode(e); d != s {
			t.Fatalf("Decode(Encode(%q)) = %q", s, d)
		}
		// Decode never panics and never lengthens its input.
		if d := Decode(s); len(d) > len(s) {
			t.Fatalf("Decode(%q) = %q is longer", s, d)
		}
	})
}
