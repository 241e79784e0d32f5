// Package identity holds what makes two prompts "the same prompt": the
// normalized form deletes match by (docs/hist-delete.md; whitespace runs collapsed to
// one space, leading and trailing whitespace trimmed, letter case ignored),
// its tombstone key, and the rule that says which prompts are never captured.
package identity

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"slices"
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
func Normalize(text string) string {
	return string(AppendNormalized(nil, text))
}

// AppendNormalized appends the normalized form of text to dst and returns
// the extended slice. It allocates nothing when dst has room, which keeps
// the readers' hot path cheap: runs of ASCII go through a table.
func AppendNormalized(dst []byte, text string) []byte {
	pendingSpace := false
	start := len(dst)
	for i := 0; i < len(text); {
		if text[i] < utf8.RuneSelf {
			// An ASCII run writes at most one byte per byte read, plus a
			// space pending from before the run.
			dst = slices.Grow(dst, len(text)-i+1)
			n := len(dst)
			buf := dst[:cap(dst)]
			for i < len(text) {
				if !pendingSpace && i+8 <= len(text) {
					if x, ok, trail := plain8(text, i, n > start); ok {
						binary.LittleEndian.PutUint64(buf[n:], x)
						n += 8
						i += 8
						if trail { // the space is pending: it may start a run, or end the text
							n--
							pendingSpace = true
						}
						continue
					}
				}
				c := text[i]
				if c >= utf8.RuneSelf {
					break
				}
				i++
				m := asciiFold[c]
				if m == asciiSpace {
					pendingSpace = true
					continue
				}
				if pendingSpace {
					if n > start {
						buf[n] = ' '
						n++
					}
					pendingSpace = false
				}
				buf[n] = m
				n++
			}
			dst = buf[:n]
			continue
		}
		r, size := utf8.DecodeRuneInString(text[i:])
		if r == utf8.RuneError && size == 1 {
			// Invalid UTF-8 is kept byte for byte: it is part of the prompt.
			if pendingSpace && len(dst) > start {
				dst = append(dst, ' ')
			}
			pendingSpace = false
			dst = append(dst, text[i])
			i++
			continue
		}
		i += size
		if isSpace(r) {
			pendingSpace = true
			continue
		}
		if pendingSpace && len(dst) > start {
			dst = append(dst, ' ')
		}
		pendingSpace = false
		dst = utf8.AppendRune(dst, Fold(r))
	}
	return dst
}

// plain8 looks at the 8 bytes of text at i. When they are ASCII, hold no
// control byte or white space but single spaces (none first unless
// something was written before), they normalize to themselves with A-Z
// lowered: it returns that, as a little-endian word, and whether the last
// byte is a space (which the caller holds back).
func plain8(text string, i int, written bool) (x uint64, ok, trail bool) {
	const (
		ones   = 0x0101010101010101
		high   = 0x8080808080808080
		low7   = 0x7f7f7f7f7f7f7f7f
		spaces = 0x2020202020202020
	)
	b := text[i : i+8]
	x = uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
		uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
	if x&high != 0 || (x-spaces)&^x&high != 0 { // non-ASCII, or a byte below 0x20
		return 0, false, false
	}
	y := x ^ spaces                     // spaces become zero bytes
	sp := ^((y&low7 + low7) | y | low7) // 0x80 in each space byte
	if sp != 0 && (sp&(sp<<8) != 0 || (!written && sp&0x80 != 0)) {
		return 0, false, false
	}
	upper := (x + 0x3f*ones) &^ (x + 0x25*ones) & high // bytes in 'A'..'Z'
	return x | upper>>2, true, sp>>56 != 0
}

// asciiSpace marks the ASCII white space in asciiFold.
const asciiSpace = 0x80

// asciiFold maps each ASCII byte to its folded form, or to asciiSpace.
var asciiFold = func() (t [utf8.RuneSelf]byte) {
	for c := range t {
		t[c] = byte(c)
		if 'A' <= c && c <= 'Z' {
			t[c] = byte(c) + 'a' - 'A'
		}
	}
	for _, c := range []byte(" \t\n\v\f\r") {
		t[c] = asciiSpace
	}
	return t
}()

// Fold maps a rune to its case-folded form.
func Fold(r rune) rune {
	switch {
	case uint32(r) < uint32(len(foldTable)):
		return rune(foldTable[r])
	case r >= 0x2000 && r < 0x2100, // punctuation, currency
		r >= 0x2190 && r < 0x2460,   // arrows, math, technical
		r >= 0x2500 && r < 0x2c00,   // box drawing, shapes, dingbats
		r >= 0x3000 && r < 0xa640,   // CJK punctuation, kana, CJK, Yi, Lisu, Vai
		r >= 0xac00 && r < 0xd800,   // Hangul
		r >= 0x1f000 && r < 0x1fc00, // emoji and symbols
		r >= 0x20000 && r < 0x30000: // CJK extensions
		return r // no case: TestFoldEveryRune checks every rune
	}
	return unicode.ToLower(unicode.ToUpper(r))
}

// isSpace is unicode.IsSpace for a rune of two bytes or more.
func isSpace(r rune) bool {
	switch {
	case r < 0x1680:
		return r == 0x85 || r == 0xa0
	case r > 0x3000:
		return false
	}
	return unicode.IsSpace(r)
}

// foldTable holds Fold for the Latin, Greek and Cyrillic blocks, where
// most non-ASCII prompt text is.
var foldTable = func() (t [0x530]uint16) {
	for r := range t {
		f := unicode.ToLower(unicode.ToUpper(rune(r)))
		if f > 0xffff {
			panic("identity: fold table overflow")
		}
		t[r] = uint16(f)
	}
	return t
}()

// Key returns the tombstone key of text: "sha256:" and the hex SHA-256 of
// its normalized form.
func Key(text string) string {
	return KeyOfNormalized(AppendNormalized(nil, text))
}

// KeyOfNormalized returns the tombstone key of an already normalized text.
func KeyOfNormalized(norm []byte) string {
	sum := sha256.Sum256(norm)
	return KeyPrefix + hex.EncodeToString(sum[:])
}

// Same reports whether a and b are the same prompt.
func Same(a, b string) bool {
	return Normalize(a) == Normalize(b)
}

// IsBlank reports whether text holds nothing but white space.
func IsBlank(text string) bool {
	return strings.TrimFunc(text, unicode.IsSpace) == ""
}

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
func Capturable(text string) bool {
	return !IsBlank(text) && !IsCommandLike(text)
}
