// Package shellquote quotes text as one word for the shell that will read
// it: POSIX sh, bash and zsh, or fish, whose single quotes differ (in
// fish, \\ and \' are escapes inside them; in a POSIX shell nothing is).
package shellquote

import (
	"fmt"
	"strings"
)

// Shell is the shell a quoted word is for.
type Shell int

const (
	// Any quotes for every shell this package knows at once: backslashes
	// and quotes stand outside the single quotes, escaped with a
	// backslash, which means the same in POSIX shells and in fish.
	Any Shell = iota
	POSIX
	Fish
)

// Names lists the shell names Parse accepts.
var Names = []string{"bash", "zsh", "fish", "sh"}

// Parse maps a shell's name (bash, zsh, fish, sh) to its Shell.
func Parse(name string) (Shell, error) {
	switch name {
	case "bash", "zsh", "sh":
		return POSIX, nil
	case "fish":
		return Fish, nil
	}
	return Any, fmt.Errorf("unknown shell %q: choose one of %s", name, strings.Join(Names, ", "))
}

// Quote returns s as one word for sh: s itself when it holds only
// characters no shell treats specially (and does not start with one that
// zsh or fish might expand), otherwise single-quoted.
func Quote(s string, sh Shell) string {
	if Plain(s) {
		return s
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

var fishEscaper = strings.NewReplacer(`\`, `\\`, `'`, `\'`)

// Plain reports s non-empty and made of letters, digits and _ . / : @ + , -
// only (no = or %, which zsh and old fish expand at a word's start): a
// word that every shell reads as itself.
func Plain(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("_./:@+,-", c) >= 0) {
			return false
		}
	}
	return true
}
