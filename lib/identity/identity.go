// Package identity holds what makes two prompts "the same prompt": the
// normalized form deletes match by (docs/hist-delete.md), its tombstone
// key, and the rule that says which prompts are never captured.
package identity

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"unicode"
	"unicode/utf8"
)

// KeyPrefix starts every tombstone key written by hist.
const KeyPrefix = "sha256:"

// Normalize returns the identity form of text: every run of Unicode white
// space becomes one space, leading and trailing white space is dropped, and
// every letter is case-folded to ToLower(ToUpper(r)) (docs/hist-delete.md,
// "Which prompt"). That is wider than Unicode's simple case folding for the
// Turkish ı and İ, which both fold to i; tombstones are keyed by this form,
// so it must never change.
func Normalize(text string) string { return string(AppendNormalized(nil, text)) }

// AppendNormalized appends the normalized form of text to dst and returns
// the extended slice. It allocates nothing when dst has room.
func AppendNormalized(dst []byte, text string) []byte {
	start := len(dst)
	pending := false // a run of white space waits for the next character
	for i := 0; i < len(text); {
		if c := text[i]; c < utf8.RuneSelf {
			i++
			if m := asciiFold[c]; m == asciiSpace {
				pending = true
			} else {
				if pending && len(dst) > start {
					dst = append(dst, ' ')
				}
				pending = false
				dst = append(dst, m)
			}
			continue
		}
		r, size := utf8.DecodeRuneInString(text[i:])
		if r != utf8.RuneError || size > 1 {
			if unicode.IsSpace(r) {
				pending = true
				i += size
				continue
			}
		}
		if pending && len(dst) > start {
			dst = append(dst, ' ')
		}
		pending = false
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, text[i]) // invalid UTF-8 is kept byte for byte: it is part of the prompt
		} else {
			dst = utf8.AppendRune(dst, Fold(r))
		}
		i += size
	}
	return dst
}

// asciiSpace marks the ASCII white space in asciiFold.
const asciiSpace = 0x80

// asciiFold maps each ASCII byte to its folded form, or to asciiSpace.
var asciiFold = func() (t [utf8.RuneSelf]byte) {
	for c := range t {
		t[c] = byte(Fold(rune(c)))
	}
	for _, c := range []byte(" \t\n\v\f\r") {
		t[c] = asciiSpace
	}
	return t
}()

// Fold maps a rune to its case-folded form.
func Fold(r rune) rune { return unicode.ToLower(unicode.ToUpper(r)) }

// Key returns the tombstone key of text: "sha256:" and the hex SHA-256 of
// its normalized form.
func Key(text string) string { return KeyOfNormalized(AppendNormalized(nil, text)) }

// KeyOfNormalized returns the tombstone key of an already normalized text.
func KeyOfNormalized(norm []byte) string {
	sum := sha256.Sum256(norm)
	return KeyPrefix + hex.EncodeToString(sum[:])
}

// Same reports whether a and b are the same prompt.
func Same(a, b string) bool { return Normalize(a) == Normalize(b) }

// IsBlank reports whether text holds nothing but white space.
func IsBlank(text string) bool { return strings.TrimFunc(text, unicode.IsSpace) == "" }

// IsCommandLike reports whether text is a UI command such as "/model" or
// "/skill:x args": its first non-space character is "/" and the word it
// starts is a name (letters, digits and "_", "-", ".", ":" after a letter,
// digit or "_"). A path such as "/tmp/x is full" is not command-like.
func IsCommandLike(text string) bool {
	t := strings.TrimLeftFunc(text, unicode.IsSpace)
	if len(t) < 2 || t[0] != '/' {
		return false
	}
	for i, r := range t[1:] {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_':
		case i > 0 && (r == '-' || r == '.' || r == ':'):
		case i > 0 && unicode.IsSpace(r):
			return true
		default:
			return false
		}
	}
	return true
}

// Capturable reports whether a prompt may be stored at all: not blank and
// not command-like.
func Capturable(text string) bool { return !IsBlank(text) && !IsCommandLike(text) }
