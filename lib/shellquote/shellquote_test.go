package shellquote

import (
	"bytes"
	"math/rand"
	"os/exec"
	"strings"
	"testing"
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

func TestParse(t *testing.T) {
	for name, want := range map[string]Shell{"bash": POSIX, "zsh": POSIX, "sh": POSIX, "fish": Fish} {
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
	words := []string{`x\'; touch PWNED; echo \`, "a\nb", "\\", "'\\'", "$(touch PWNED)", "`touch PWNED`"}
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
			script.WriteString("printf '%s\\0' " + Quote(w, tc.sh) + "\n")
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
