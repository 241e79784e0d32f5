package identity

import (
	"crypto/sha256"
	"encoding/hex"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

func TestNormalize(t *testing.T) {
	cases := []struct{ in, want string }{
		{"", ""},
		{"   \t\n ", ""},
		{"Fix the Test", "fix the test"},
		{"  fix\t\tthe \n\n test  ", "fix the test"},
		{"a\r\nb\vc\fd", "a b c d"},
		{"nbsp\u00a0and\u2003em\u3000ideographic\u0085nel", "nbsp and em ideographic nel"},
		{"ÄÖÜ Straße ΣΊΣΥΦΟΣ", "äöü straße σίσυφοσ"},
		{"Ωμέγα ς Σ σ", "ωμέγα σ σ σ"},
		{"K \u212a k", "k k k"}, // the Kelvin sign folds to k
		{"ǅ ǆ Ǆ", "ǆ ǆ ǆ"},
		{"İ ı I i", "i i i i"}, // simple folding: dotted and dotless I meet i
		{"日本語 🙂", "日本語 🙂"},
		{"bad \xff\xfe  bytes", "bad \xff\xfe bytes"},
		{"\xffX", "\xffx"},
		{"x\n\xff", "x \xff"},
	}
	for _, c := range cases {
		if got := Normalize(c.in); got != c.want {
			t.Errorf("Normalize(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestAppendNormalizedAppends(t *testing.T) {
	got := string(AppendNormalized([]byte("keep: "), "  A  B "))
	if got != "keep: a b" {
		t.Errorf("AppendNormalized = %q", got)
	}
	// A leading space is dropped even when dst is not empty.
	if got := string(AppendNormalized([]byte("x"), " y")); got != "xy" {
		t.Errorf("AppendNormalized(x, ' y') = %q", got)
	}
}

func TestAppendNormalizedAllocs(t *testing.T) {
	buf := make([]byte, 0, 256)
	text := "  Refactor the STORE reader\tso that it streams — every file once: Größe  "
	if n := testing.AllocsPerRun(100, func() { buf = AppendNormalized(buf[:0], text) }); n != 0 {
		t.Errorf("AppendNormalized allocates %v times", n)
	}
}

// TestFoldEveryRune checks, for every rune, that Fold is idempotent, that
// upper, lower and title case and every member of the rune's simple case
// folding orbit fold to the same rune, and that folding never changes
// whether a rune is white space. Normalize's case invariance rests on it.
func TestFoldEveryRune(t *testing.T) {
	bad := 0
	for r := rune(0); r <= unicode.MaxRune && bad < 10; r++ {
		f := Fold(r)
		if f != unicode.ToLower(unicode.ToUpper(r)) {
			t.Errorf("Fold(%U) = %U, not simple folding", r, f)
			bad++
		}
		if Fold(f) != f || Fold(unicode.ToUpper(r)) != f || Fold(unicode.ToLower(r)) != f || Fold(unicode.ToTitle(r)) != f ||
			unicode.IsSpace(f) != unicode.IsSpace(r) {
			t.Errorf("Fold(%U) = %U is not stable", r, f)
			bad++
		}
		for o := unicode.SimpleFold(r); o != r; o = unicode.SimpleFold(o) {
			if Fold(o) != f {
				t.Errorf("Fold(%U) = %U but Fold(%U) = %U", r, f, o, Fold(o))
				bad++
			}
		}
	}
}

func TestKey(t *testing.T) {
	sum := sha256.Sum256([]byte("fix the test"))
	want := "sha256:" + hex.EncodeToString(sum[:])
	for _, in := range []string{"fix the test", "  FIX   the\ntest ", "Fix The Test"} {
		if got := Key(in); got != want {
			t.Errorf("Key(%q) = %s, want %s", in, got, want)
		}
	}
	if KeyOfNormalized([]byte("fix the test")) != want {
		t.Error("KeyOfNormalized differs from Key")
	}
	if Key("fix the tests") == want {
		t.Error("different prompts share a key")
	}
	if !Same("A  b", "a b\n") || Same("a b", "ab") {
		t.Error("Same is wrong")
	}
}

func TestIsCommandLike(t *testing.T) {
	cmds := []string{"/model", "/skill:review the diff", "  /compact keep tests", "/new-session", "/gentle:customize",
		"/a", "/x_y.z arg", "/review\nmore lines", "/model\t", "/日本 語", "/_x"}
	for _, s := range cmds {
		if !IsCommandLike(s) || Capturable(s) {
			t.Errorf("%q should be command-like", s)
		}
	}
	prompts := []string{"/tmp/x is full", "/etc/hosts: why?", "/", "/ alone", "//comment", "/-x", "/.hidden", "/:x",
		"please run /model", "/model/sub", "/model?", "/a,b", "x /model", "/model's output"}
	for _, s := range prompts {
		if IsCommandLike(s) || !Capturable(s) {
			t.Errorf("%q should be a prompt", s)
		}
	}
}

func TestIsBlank(t *testing.T) {
	for _, s := range []string{"", " ", "\t\n\r\v\f", "\u00a0\u3000\u2028"} {
		if !IsBlank(s) || Capturable(s) {
			t.Errorf("%q should be blank", s)
		}
	}
	for _, s := range []string{"x", " . ", "\u200b"} {
		if IsBlank(s) {
			t.Errorf("%q is not blank", s)
		}
	}
}

// FuzzNormalize checks the identity's invariants: idempotent, no white
// space but single inner spaces, and (for valid UTF-8) blind to case and to
// how white space is laid out.
func FuzzNormalize(f *testing.F) {
	for _, s := range []string{"", "  Fix   the\tTEST\n", "Straße ΣΊΣΥΦΟΣ ς \u212a", "a\u00a0b\u2003c\u0085", "\xff \xfe\tX", "İı ǅ 🙂"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n := Normalize(s)
		if Normalize(n) != n {
			t.Fatalf("not idempotent: %q -> %q -> %q", s, n, Normalize(n))
		}
		if strings.HasPrefix(n, " ") || strings.HasSuffix(n, " ") || strings.Contains(n, "  ") {
			t.Fatalf("Normalize(%q) = %q has stray spaces", s, n)
		}
		for _, r := range n {
			if r != ' ' && unicode.IsSpace(r) {
				t.Fatalf("Normalize(%q) = %q keeps white space %U", s, n, r)
			}
		}
		if Key(s) != KeyOfNormalized([]byte(n)) {
			t.Fatal("Key and KeyOfNormalized disagree")
		}
		if IsBlank(s) != (n == "") {
			t.Fatalf("IsBlank(%q) = %v but Normalize = %q", s, IsBlank(s), n)
		}
		if !utf8.ValidString(s) {
			return
		}
		for _, v := range []string{strings.ToUpper(s), strings.ToLower(s), strings.ToTitle(s),
			" \t" + s + "\n ", strings.Join(strings.Fields(s), "\u00a0"), strings.Join(strings.Fields(s), " \r\n ")} {
			if Normalize(v) != n {
				t.Fatalf("Normalize(%q) = %q but Normalize(%q) = %q", s, n, v, Normalize(v))
			}
		}
	})
}

// reference is the plain definition of the normalized form: runs of white
// space become one space, the ends are trimmed, every rune is folded,
// invalid bytes are kept.
func reference(text string) string {
	var b strings.Builder
	pending := false
	for i := 0; i < len(text); {
		r, size := utf8.DecodeRuneInString(text[i:])
		if r == utf8.RuneError && size == 1 {
			if pending && b.Len() > 0 {
				b.WriteByte(' ')
			}
			pending = false
			b.WriteByte(text[i])
			i++
			continue
		}
		i += size
		if unicode.IsSpace(r) {
			pending = true
			continue
		}
		if pending && b.Len() > 0 {
			b.WriteByte(' ')
		}
		pending = false
		b.WriteRune(unicode.ToLower(unicode.ToUpper(r)))
	}
	return b.String()
}

func TestNormalizeMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	pieces := []string{"a", "Z", "@", "[", "`", "{", "~", "\x7f", " ", "  ", "\t", "\n", "\r\n", "\x00", "\x1f", "é", "É", "\u00a0", "\u2003", "\xff", "İ", "ǅ",
		"Hello", "WORLD", " x ", "abcdefgh", "ABCDEFGH", "abc defg", "a b c d e f", "0123456789"}
	for range 20000 {
		var b strings.Builder
		for range r.IntN(12) {
			b.WriteString(pieces[r.IntN(len(pieces))])
		}
		s := b.String()
		if got, want := Normalize(s), reference(s); got != want {
			t.Fatalf("Normalize(%q) = %q, want %q", s, got, want)
		}
		// Behind other bytes in dst too.
		if got := string(AppendNormalized([]byte("x"), s)); got != "x"+reference(s) {
			t.Fatalf("AppendNormalized(x, %q) = %q", s, got)
		}
	}
	// Every 8-byte window of every ASCII byte pair.
	for c1 := range 128 {
		for c2 := range 128 {
			s := strings.Repeat(string(rune(c1)), 5) + string(rune(c2)) + "AbC" + string(rune(c2)) + "defgh" + string(rune(c1))
			if got, want := Normalize(s), reference(s); got != want {
				t.Fatalf("Normalize(%q) = %q, want %q", s, got, want)
			}
		}
	}
}

// FuzzNormalizeReference checks AppendNormalized's fast paths against the
// plain definition.
func FuzzNormalizeReference(f *testing.F) {
	for _, s := range []string{"", "Hello World, THIS is a Test of 8-byte words", "  lead and trail  ", "a  b\tc\n\nd", "ÄÖÜ mixed ASCII words", "\xffabcdefgh\xfe"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := Normalize(s), reference(s); got != want {
			t.Fatalf("Normalize(%q) = %q, want %q", s, got, want)
		}
	})
}

var sinkBytes []byte

func BenchmarkAppendNormalizedASCII(b *testing.B) {
	text := "Refactor the store reader so that it streams every file once, then benchmark it on the 1M store"
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		sinkBytes = AppendNormalized(sinkBytes[:0], text)
	}
}

func BenchmarkAppendNormalizedUnicode(b *testing.B) {
	text := "Größe prüfen: 日本語のテスト — проверка ошибок 🙂 and some ASCII words too"
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		sinkBytes = AppendNormalized(sinkBytes[:0], text)
	}
}
