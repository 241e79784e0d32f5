// Package shellquote quotes text as one word for the shell that will read
// it: POSIX sh, bash and zsh, or fish, whose single quotes differ (in
// fish, \\ and \' are escapes inside them; in a POSIX shell nothing is).
// For bash, zsh and fish, whose line editors draw the words a key binding
// inserts, the characters a terminal would not show as themselves
// (termsafe.Cut: control characters, bidi and zero-width characters,
// bytes that are not UTF-8) are written with the shell's own escapes, so
// the editor shows \e where the text holds ESC, and the word still gives
// the exact bytes.
package shellquote

import (
	"fmt"
	"strings"

	"hist/lib/termsafe"
)

// Shell is the shell a quoted word is for.
type Shell int

const (
	// Any quotes for every shell this package knows at once: backslashes
	// and quotes stand outside the single quotes, escaped with a
	// backslash, which means the same in POSIX shells and in fish.
	Any Shell = iota
	POSIX
	Bash // bash and zsh: POSIX quoting, and $'\e' escapes
	Fish
)

// Parse maps a shell's name (bash, zsh, fish, sh) to its Shell.
func Parse(name string) (Shell, error) {
	switch name {
	case "bash", "zsh":
		return Bash, nil
	case "sh":
		return POSIX, nil
	case "fish":
		return Fish, nil
	}
	return Any, fmt.Errorf("unknown shell %q: choose one of bash, zsh, fish, sh", name)
}

// Quote returns s as one word for sh: s itself when it holds only
// characters no shell treats specially (and does not start with one that
// zsh or fish might expand), otherwise single-quoted; for Bash and Fish,
// the characters a terminal would not show as themselves are escapes
// outside the quotes (escaped).
func Quote(s string, sh Shell) string {
	if Plain(s) {
		return s
	}
	if i, _ := termsafe.Cut(s); i < len(s) && (sh == Bash || sh == Fish) {
		return escaped(s, sh)
	}
	if sh == Fish {
		return "'" + fishEscaper.Replace(s) + "'"
	}
	outside := "'"
	if sh == Any {
		outside = `'\`
	}
	// Each run without the outside characters goes in single quotes; each
	// outside character follows a backslash, between them. No two quoted
	// runs touch, so zsh's RC_QUOTES ('' as a quote) never applies.
	var b strings.Builder
	for {
		i := strings.IndexAny(s, outside)
		if i < 0 {
			break
		}
		if i > 0 {
			b.WriteString("'" + s[:i] + "'")
		}
		b.WriteString(`\` + s[i:i+1])
		s = s[i+1:]
	}
	if s != "" || b.Len() == 0 {
		b.WriteString("'" + s + "'")
	}
	return b.String()
}

// escaped quotes s for bash and zsh, or fish: each run of the
// characters termsafe.Cut finds as escapes, bash's and zsh's inside $'…'
// (no quote, backslash or ! in it, which history expansion could take),
// fish's outside quotes; the runs between them as Quote quotes them.
func escaped(s string, sh Shell) string {
	var b strings.Builder
	for s != "" {
		i, n := termsafe.Cut(s)
		if i > 0 {
			b.WriteString(Quote(s[:i], sh))
			s = s[i:]
			continue
		}
		if sh == Bash {
			b.WriteString("$'")
		}
		for ; n > 0 && i == 0; i, n = termsafe.Cut(s) {
			for _, c := range []byte(s[:n]) {
				if e := strings.IndexByte(escapable, c); e >= 0 {
					b.WriteString(`\` + escapes[e:e+1])
				} else {
					fmt.Fprintf(&b, `\x%02x`, c)
				}
			}
			s = s[n:]
		}
		if sh == Bash {
			b.WriteString("'")
		}
	}
	return b.String()
}

// The control characters with a letter escape in bash's and zsh's $'…'
// and in fish; every other byte is written \xHH, which all three read as
// that byte.
const escapable, escapes = "\a\b\t\n\v\f\r\x1b", "abtnvfre"

var fishEscaper = strings.NewReplacer(`\`, `\\`, `'`, `\'`)

// Plain reports s non-empty and made of letters, digits and _ . / : @ + , -
// only (no = or %, which zsh and old fish expand at a word's start): a
// word that every shell reads as itself.
func Plain(s string) bool {
	return s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./:@+,-") == ""
}
