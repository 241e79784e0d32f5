package deletion

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"hist/lib/identity"
	"hist/lib/record"
	"hist/lib/store"
)

// The prefilter is exact only if foldsToASCII lists every non-ASCII rune
// whose fold is an ASCII letter or digit.
func TestFoldsToASCIITable(t *testing.T) {
	got := map[byte][]string{}
	for r := rune(utf8.RuneSelf); r <= unicode.MaxRune; r++ {
		if f := identity.Fold(r); f < utf8.RuneSelf && (f >= 'a' && f <= 'z' || f >= '0' && f <= '9' || f >= 'A' && f <= 'Z') {
			got[byte(f)] = append(got[byte(f)], string(r))
		}
	}
	if len(got) != len(foldsToASCII) {
		t.Fatalf("runes folding to ASCII: %q, table %q", got, foldsToASCII)
	}
	for c, rs := range got {
		if !slices.Equal(rs, foldsToASCII[c]) {
			t.Errorf("%c: %q, table %q", c, rs, foldsToASCII[c])
		}
	}
}

func TestContainsFold(t *testing.T) {
	for _, tc := range []struct {
		data, w string
		want    bool
	}{
		{"xx PassWord yy", "password", true},
		{"xx passwor", "password", false},
		{"PASSWORD", "password", true},
		{"a1b2", "1b2", true},
		{"zzzz", "zzz", true},
		{"pass word", "password", false},
	} {
		if got := containsFold([]byte(tc.data), []byte(tc.w)); got != tc.want {
			t.Errorf("containsFold(%q, %q) = %v", tc.data, tc.w, got)
		}
	}
}

// variant writes a JSON line whose text has the identity of norm, in one
// of the ways a line can spell it.
func variant(r *rand.Rand, norm string) string {
	var b strings.Builder
	if r.IntN(3) == 0 {
		b.WriteString([]string{" ", "\t", "\n ", "\u00a0", "\u3000"}[r.IntN(5)])
	}
	for _, c := range norm {
		switch {
		case c == ' ':
			b.WriteString([]string{" ", "  ", "\t", "\n", " \r\n ", "\u2003"}[r.IntN(6)])
		case c == 'k' && r.IntN(4) == 0:
			b.WriteString("\u212a")
		case c == 's' && r.IntN(4) == 0:
			b.WriteString("\u017f")
		case c == 'i' && r.IntN(4) == 0:
			b.WriteString([]string{"\u0130", "\u0131"}[r.IntN(2)])
		case r.IntN(3) == 0:
			b.WriteRune(unicode.ToUpper(c))
		default:
			b.WriteRune(c)
		}
	}
	if r.IntN(3) == 0 {
		b.WriteString("  ")
	}
	line := string(record.Marshal(record.Record{Text: b.String(), TS: r.Int64N(1e12)}))
	if r.IntN(4) == 0 { // spell a letter or digit as a \u escape
		body := line[len(`{"v":1,"text":"`):]
		for i := 0; i < len(body); i++ {
			if c := body[i]; c >= 'a' && c <= 'z' || c >= '0' && c <= '9' {
				if i > 0 && body[i-1] == '\\' {
					continue
				}
				line = line[:len(`{"v":1,"text":"`)+i] + fmt.Sprintf(`\u%04x`, c) + body[i+1:]
				break
			}
		}
	}
	return line
}

// near writes a line that is not a copy of norm but comes close.
func near(r *rand.Rand, norm string) string {
	var text string
	switch r.IntN(5) {
	case 0:
		text = norm + " and more"
	case 1:
		text = "and " + norm
	case 2:
		i := r.IntN(len(norm))
		text = norm[:i] + norm[i+1:]
	case 3:
		text = strings.ReplaceAll(norm, " ", "")
	default:
		text = strings.ToUpper(norm[:len(norm)/2])
	}
	return string(record.Marshal(record.Record{Text: text, TS: 1}))
}

// With and without the prefilter (and the prefix check), a delete finds the
// same copies, and it leaves no copy and every other line.
func TestPrefilterIsExact(t *testing.T) {
	targets := []string{
		"please rotate the staging database password before the demo",
		"kiss the sky 42",
		"ab", // no word to look for: every file is parsed
		"idk",
		"日本語 テスト only non-ascii words",
	}
	for seed := range uint64(8) {
		r := rand.New(rand.NewPCG(seed, 7))
		tgt := targets[:1+r.IntN(len(targets))]
		if seed%3 == 0 {
			tgt = targets[seed%uint64(len(targets)) : seed%uint64(len(targets))+1]
		}
		var norms []string
		for _, x := range tgt {
			norms = append(norms, identity.Normalize(x))
		}
		f := newFixture(t)
		var want int
		for fi := range 12 {
			var b bytes.Buffer
			size := 200 + r.IntN(4000)
			if fi == 0 {
				size = prefilterChunk + 4096 // a copy across the chunk boundary
			}
			for b.Len() < size {
				switch x := r.IntN(40); {
				case x == 0 && fi%3 != 2:
					b.WriteString(variant(r, norms[r.IntN(len(norms))]))
					want++
				case x < 4:
					b.WriteString(near(r, norms[r.IntN(len(norms))]))
				default:
					b.WriteString(rec(fmt.Sprintf("filler %d with Some Words PASSWORD database", r.IntN(1000)), 1))
				}
				if fi == 0 && b.Len() > prefilterChunk-40 && b.Len() < prefilterChunk {
					b.WriteString(variant(r, norms[0]))
					want++
				}
			}
			f.write(fmt.Sprintf("f%02d.jsonl", fi), b.String())
		}
		// The oracle: every line parsed and normalized.
		before := linesOf(t, f)
		want = 0
		for _, l := range before {
			if isCopy(l, norms) {
				want++
			}
		}
		if want == 0 {
			t.Fatalf("seed %d: no copy planted", seed)
		}
		plain := Delete(f.st, f.scope(), tgt, Options{DryRun: true, noPrefilter: true})
		fast := Delete(f.st, f.scope(), tgt, Options{DryRun: true})
		if plain.Copies != want || fast.Copies != want || !slices.Equal(plain.Rewritten, fast.Rewritten) {
			t.Fatalf("seed %d: %d copies planted; without the prefilter %d in %d files, with it %d in %d files",
				seed, want, plain.Copies, len(plain.Rewritten), fast.Copies, len(fast.Rewritten))
		}
		res := Delete(f.st, f.scope(), tgt, Options{})
		if res.Copies != want || res.Outcome != Clean {
			t.Fatalf("seed %d: %+v", seed, res)
		}
		after := linesOf(t, f)
		var kept []string
		for _, l := range before {
			if !isCopy(l, norms) {
				kept = append(kept, l)
			}
		}
		if !slices.Equal(kept, after) {
			t.Fatalf("seed %d: %d lines kept, want %d", seed, len(after), len(kept))
		}
	}
}

func linesOf(t *testing.T, f *fixture) []string {
	files, _ := f.st.Files(store.Scope{Project: f.hash})
	var out []string
	for _, fl := range files {
		data, err := os.ReadFile(fl.Path)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.SplitAfter(string(data), "\n") {
			if l != "" {
				out = append(out, filepath.Base(fl.Path)+":"+l)
			}
		}
	}
	return out
}

func isCopy(l string, norms []string) bool {
	_, line, _ := strings.Cut(l, ":")
	rec, err := record.Parse([]byte(strings.TrimSuffix(line, "\n")))
	return err == nil && slices.Contains(norms, identity.Normalize(rec.Text))
}

// Files whose only copy is spelled so that a byte search for the prompt's
// words misses it: each must still be found.
func TestPrefilterHardCases(t *testing.T) {
	const pw = "please rotate the staging database password before the demo"
	const sky = "kiss the sky 42"
	filler := rec("filler without the words", 1)
	cases := []struct {
		name, prompt, line string
	}{
		{"u-escapes", pw, `{"v":1,"text":"please rotate the st\u0061ging d\u0061tabase p\u0061ssword before the demo","ts":2}` + "\n"},
		{"kelvin", sky, rec("\u212aiss the s\u212ay 42", 2)},
		{"long-s", sky, rec("ki\u017f\u017f the \u017fky 42", 2)},
		{"dotted-I", sky, rec("k\u0130ss the sky 42", 2)},
		{"dotless-i", sky, rec("k\u0131ss THE SKY 42", 2)},
		{"upper", sky, rec("KISS\tTHE\n SKY   42", 2)},
		// A word longer than the part of it searched, once as a copy and
		// once as a decoy that shares that part only.
		{"long-word", "run " + strings.Repeat("ab", 100), rec("Run "+strings.Repeat("AB", 100), 2) + rec("run "+strings.Repeat("ab", 99)+"ac", 3)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			f.write("a.jsonl", strings.Repeat(filler, 10)+tc.line+strings.Repeat(filler, 10))
			f.write("b.jsonl", strings.Repeat(filler, 10))
			res := Delete(f.st, f.scope(), []string{tc.prompt}, Options{DryRun: true})
			if res.Copies != 1 || len(res.Rewritten) != 1 {
				t.Fatalf("%+v", res)
			}
		})
	}
	// A word across the prefilter's chunk boundary.
	for shift := range 12 {
		t.Run(fmt.Sprint("boundary", shift), func(t *testing.T) {
			f := newFixture(t)
			copyLine := rec(pw, 2)
			at := strings.Index(copyLine, "password") // the word's offset in its line
			var b strings.Builder
			for b.Len()+len(filler) < prefilterChunk-at-6+shift {
				b.WriteString(filler)
			}
			pad := prefilterChunk - at - 6 + shift - b.Len() // the word starts 6-shift bytes before the boundary
			b.WriteString(rec(strings.Repeat("x", max(0, pad-len(rec("", 1)))), 1))
			b.WriteString(copyLine)
			b.WriteString(strings.Repeat(filler, 10))
			f.write("a.jsonl", b.String())
			res := Delete(f.st, f.scope(), []string{pw}, Options{DryRun: true})
			if res.Copies != 1 {
				t.Fatalf("%+v", res)
			}
		})
	}
}
