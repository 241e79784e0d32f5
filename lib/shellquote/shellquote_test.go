package shellquote

import (
	"bytes"
	"math/rand"
	"os/exec"
	"strings"
	"testing"

	"hist/lib/termsafe"
)

func TestQuote(t *testing.T) {
	for _, tc := range []struct {
		in             string
		any, posix, fs string
	}{
		{"sess-123", "sess-123", "sess-123", "sess-123"},
		{"/home/me/p", "/home/me/p", "/home/me/p", "/home/me/p"},
		{"", "''", "''", "''"},
		{"a b", "'a b'", "'a b'", "'a b'"},
		{"=ls", "'=ls'", "'=ls'", "'=ls'"},
		{"it's", `'it'\''s'`, `'it'\''s'`, `'it\'s'`},
		{"'", `\'`, `\'`, `'\''`},
		{"''", `\'\'`, `\'\'`, `'\'\''`},
		{`x\'; touch P; echo \`, `'x'\\\''; touch P; echo '\\`, `'x\'\''; touch P; echo \'`, `'x\\\'; touch P; echo \\'`},
		{"$(id)`id`", "'$(id)`id`'", "'$(id)`id`'", "'$(id)`id`'"},
	} {
		if got := Quote(tc.in, Bash); got != tc.posix {
			t.Errorf("Quote(%q, Bash) = %s, want %s", tc.in, got, tc.posix)
		}
		for _, c := range []struct {
			sh   Shell
			want string
		}{{Any, tc.any}, {POSIX, tc.posix}, {Fish, tc.fs}} {
			if got := Quote(tc.in, c.sh); got != c.want {
				t.Errorf("Quote(%q, %d) = %s, want %s", tc.in, c.sh, got, c.want)
			}
		}
	}
}

// The characters a terminal would not show as themselves are escapes for
// bash, zsh and fish, and stay as they are for sh.
func TestQuoteEscapes(t *testing.T) {
	in := "it's \x1b]0;t\a\x1b[2J \u202e\u200b\n\t!\xff\x9b9"
	for sh, want := range map[Shell]string{
		Bash:  `'it'\''s '$'\e'']0;t'$'\a\e''[2J '$'\xe2\x80\xae\xe2\x80\x8b\n\t''!'$'\xff\x9b'9`,
		Fish:  `'it\'s '\e']0;t'\a\e'[2J '\xe2\x80\xae\xe2\x80\x8b\n\t'!'\xff\x9b9`,
		POSIX: "'it'\\''s \x1b]0;t\a\x1b[2J \u202e\u200b\n\t!\xff\x9b9'",
	} {
		if got := Quote(in, sh); got != want {
			t.Errorf("Quote(%q, %d) = %s, want %s", in, sh, got, want)
		}
	}
	if got := Quote("a\tb", Bash); got != `a$'\t'b` {
		t.Errorf("a plain run beside an escape: %s", got)
	}
}

func TestParse(t *testing.T) {
	for name, want := range map[string]Shell{"bash": Bash, "zsh": Bash, "sh": POSIX, "fish": Fish} {
		if got, err := Parse(name); err != nil || got != want {
			t.Errorf("Parse(%q) = %d, %v", name, got, err)
		}
	}
	if _, err := Parse("tcsh"); err == nil || !strings.Contains(err.Error(), "bash, zsh, fish, sh") {
		t.Errorf("Parse(tcsh): %v", err)
	}
}

// randomWord is NUL-free bytes, mostly the ones shells treat specially.
func randomWord(r *rand.Rand) string {
	const special = "\\'\"$`\n\t !*?[]{}()<>|&;#~=%^\r"
	n := r.Intn(12)
	b := make([]byte, n)
	for i := range b {
		switch r.Intn(4) {
		case 0, 1:
			b[i] = special[r.Intn(len(special))]
		case 2:
			b[i] = byte('a' + r.Intn(26))
		default:
			b[i] = byte(1 + r.Intn(255))
		}
	}
	return string(b)
}

// TestQuoteInShells has each real shell print random words quoted for it:
// every word must come back exactly, and nothing else may run.
func TestQuoteInShells(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	words := []string{`x\'; touch PWNED; echo \`, "a\nb", "\\", "'\\'", "$(touch PWNED)", "`touch PWNED`",
		"\x1b]0;t\a \x1b[2J \x1b]52;c;aGk=\a \u202e\u200b\u2066 é !x \xff\xe2\x80 \xe2abc", "!\u200b!echo"}
	for len(words) < 300 {
		words = append(words, randomWord(r))
	}
	for _, tc := range []struct {
		shell string
		argv  []string
		sh    Shell
	}{
		{"sh", []string{"sh", "-c"}, POSIX},
		{"bash", []string{"bash", "-c"}, POSIX},
		{"zsh", []string{"zsh", "-f", "-c"}, POSIX},
		{"bash", []string{"bash", "-c"}, Bash},
		{"zsh", []string{"zsh", "-f", "-c"}, Bash},
		{"fish", []string{"fish", "--no-config", "-c"}, Fish},
		{"sh", []string{"sh", "-c"}, Any},
		{"bash", []string{"bash", "-c"}, Any},
		{"zsh", []string{"zsh", "-f", "-c"}, Any},
		{"fish", []string{"fish", "--no-config", "-c"}, Any},
	} {
		if _, err := exec.LookPath(tc.shell); err != nil {
			t.Logf("%s is not installed: skipped", tc.shell)
			continue
		}
		var script strings.Builder
		for _, w := range words {
			q := Quote(w, tc.sh)
			if i, _ := termsafe.Cut(q); i < len(q) && (tc.sh == Bash || tc.sh == Fish) {
				t.Errorf("%d: Quote(%q) = %q holds a character a terminal would not show", tc.sh, w, q)
			}
			script.WriteString("printf '%s\\0' " + q + "\n")
		}
		dir := t.TempDir()
		cmd := exec.Command(tc.argv[0], append(tc.argv[1:], script.String())...)
		cmd.Dir = dir
		out, err := cmd.Output()
		if err != nil {
			t.Errorf("%s (%d): %v", tc.shell, tc.sh, err)
			continue
		}
		got := bytes.Split(out, []byte{0})
		if len(got) != len(words)+1 {
			t.Errorf("%s (%d): %d words back, want %d", tc.shell, tc.sh, len(got)-1, len(words))
			continue
		}
		for i, w := range words {
			if string(got[i]) != w {
				t.Errorf("%s (%d): %q came back as %q (quoted %s)", tc.shell, tc.sh, w, got[i], Quote(w, tc.sh))
			}
		}
		if ents, _ := exec.Command("ls", "-A", dir).Output(); len(ents) != 0 {
			t.Errorf("%s (%d): a quoted word ran a command: %s", tc.shell, tc.sh, ents)
		}
	}
}
