// Package jsonscan reads the few fields a reader needs out of a line of
// JSON without decoding the rest: values are located in place, without
// decoding them or allocating; the values nobody asked for (a session's
// base instructions, a tool's output) are skipped; and only the strings a
// reader asks for are decoded, as encoding/json decodes them. The
// transcript readers use it, and the store's record parser shares its
// white space, escape and control-character steps. Reading the lines
// themselves is the business of lib/transcript/internal/filescan.
//
// For valid JSON it agrees with encoding/json decoding into a map (exact
// key match, the last duplicate key wins); it rejects broken structure
// (unterminated strings, objects and arrays, missing separators, bad
// literals, bad escapes in decoded strings, trailing data, nesting deeper
// than maxDepth), but does not check number syntax, nor control
// characters inside strings.
package jsonscan

import (
	"bytes"
	"encoding/binary"
	"math/bits"
	"strconv"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

const maxDepth = 10000

// SkipSpace returns the index of the first byte from b[i] on that is not
// JSON white space.
func SkipSpace(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// skipString scans the string starting at b[i] (a quote) and returns the
// index after its closing quote, and whether it holds escapes. It finds
// quotes and backslashes with bytes.IndexByte, keeping the next quote found
// until it is passed, so a string with many escapes is still scanned in
// linear time.
func skipString(b []byte, i int) (end int, esc, ok bool) {
	i++
	// Most strings (keys, ids, times) are short: look at their first
	// bytes 8 at a time before calling IndexByte, twice, for them.
	for k := 0; k < 4 && i+8 <= len(b); k++ {
		const (
			ones  = 0x0101010101010101
			highs = 0x8080808080808080
		)
		x := binary.LittleEndian.Uint64(b[i:])
		q := x ^ ('"' * ones)
		bs := x ^ ('\\' * ones)
		// The lowest flagged byte is exact (a zero byte of q or bs).
		m := ((q - ones) &^ q) | ((bs - ones) &^ bs)
		if m &= highs; m != 0 {
			i += bits.TrailingZeros64(m) / 8
			if b[i] == '"' {
				return i + 1, false, true
			}
			break // a backslash: the loop below takes it from there
		}
		i += 8
	}
	q := -1
	for {
		if q < i {
			k := bytes.IndexByte(b[i:], '"')
			if k < 0 {
				return 0, false, false
			}
			q = i + k
		}
		s := bytes.IndexByte(b[i:q], '\\')
		if s < 0 {
			return q + 1, esc, true
		}
		esc = true
		i += s + 2
		if i > len(b) {
			return 0, false, false
		}
	}
}

// skipValue returns the index after the value starting at b[i].
func skipValue(b []byte, i, depth int) (int, bool) {
	if i >= len(b) {
		return 0, false
	}
	switch c := b[i]; c {
	case '"':
		end, _, ok := skipString(b, i)
		return end, ok
	case '{', '[':
		if depth >= maxDepth {
			return 0, false
		}
		obj := c == '{'
		return seq(b, i, func(j int) (int, bool) {
			if obj {
				var ok bool
				if _, _, j, ok = member(b, j); !ok {
					return 0, false
				}
			}
			return skipValue(b, j, depth+1)
		})
	case 't':
		return skipLiteral(b, i, "true")
	case 'f':
		return skipLiteral(b, i, "false")
	case 'n':
		return skipLiteral(b, i, "null")
	default:
		j := i
		for j < len(b) {
			c := b[j]
			if ('0' <= c && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E' {
				j++
				continue
			}
			break
		}
		if j == i || (b[i] != '-' && (b[i] < '0' || b[i] > '9')) {
			return 0, false
		}
		return j, true
	}
}

func skipLiteral(b []byte, i int, lit string) (int, bool) {
	if len(b)-i < len(lit) || string(b[i:i+len(lit)]) != lit {
		return 0, false
	}
	return i + len(lit), true
}

// EachMember calls fn with the key and raw value of every member of the
// object that is the whole of b (white space around it allowed), in order.
// It returns false if b is not a well-formed object.
func EachMember(b []byte, fn func(key, val []byte)) bool {
	return EachMemberNested(b, "", fn, nil)
}

// EachMemberNested is EachMember, except that the members of the value of
// the member named nest, when it is an object, are handed to inner as that
// value is read (before fn gets the value itself): a caller that wants
// both reads the bytes once, not twice. With duplicate nest members, inner
// sees each one's members, each before fn sees that member.
func EachMemberNested(b []byte, nest string, fn, inner func(key, val []byte)) bool {
	var buf []byte
	i := SkipSpace(b, 0)
	end, ok := walkObject(b, i, 1, &buf, func(key []byte, at int) (int, bool) {
		if inner != nil && at < len(b) && b[at] == '{' && string(key) == nest {
			keep := string(key) // inner may reuse buf, which key may be
			vEnd, ok := walkObject(b, at, 2, new([]byte), func(k []byte, j int) (int, bool) {
				e, ok := skipValue(b, j, 2)
				if ok {
					inner(k, b[j:e])
				}
				return e, ok
			})
			if ok {
				fn([]byte(keep), b[at:vEnd])
			}
			return vEnd, ok
		}
		vEnd, ok := skipValue(b, at, 1)
		if ok {
			fn(key, b[at:vEnd])
		}
		return vEnd, ok
	})
	return ok && SkipSpace(b, end) == len(b)
}

// walkObject reads the object at b[i] (depth deep), calling fn with
// each key and the index of its value, which fn reads and returns the end
// of; it returns the index after the object. A key with escapes is
// decoded into *buf.
func walkObject(b []byte, i, depth int, buf *[]byte, fn func(key []byte, at int) (int, bool)) (int, bool) {
	if i >= len(b) || b[i] != '{' || depth > maxDepth {
		return 0, false
	}
	return seq(b, i, func(j int) (int, bool) {
		kEnd, kEsc, at, ok := member(b, j)
		if !ok {
			return 0, false
		}
		key := b[j+1 : kEnd-1]
		if kEsc || !utf8.Valid(key) {
			if *buf, ok = appendUnquoted((*buf)[:0], key); !ok {
				return 0, false
			}
			key = *buf
		}
		return fn(key, at)
	})
}

// seq reads the members of the object, or the elements of the array, at
// b[i] (its opening bracket), calling item with the index of each, which
// item reads and returns the end of; it returns the index after the
// closing bracket.
func seq(b []byte, i int, item func(j int) (int, bool)) (int, bool) {
	closer := byte('}')
	if b[i] == '[' {
		closer = ']'
	}
	i = SkipSpace(b, i+1)
	if i < len(b) && b[i] == closer {
		return i + 1, true
	}
	for {
		end, ok := item(i)
		if !ok {
			return 0, false
		}
		if i = SkipSpace(b, end); i >= len(b) {
			return 0, false
		}
		switch b[i] {
		case ',':
			i = SkipSpace(b, i+1)
		case closer:
			return i + 1, true
		default:
			return 0, false
		}
	}
}

// member reads the key of an object's member at b[i]: the index after
// its closing quote, whether it holds escapes, and the index of the
// member's value.
func member(b []byte, i int) (kEnd int, esc bool, at int, ok bool) {
	if i >= len(b) || b[i] != '"' {
		return 0, false, 0, false
	}
	if kEnd, esc, ok = skipString(b, i); !ok {
		return 0, false, 0, false
	}
	if i = SkipSpace(b, kEnd); i >= len(b) || b[i] != ':' {
		return 0, false, 0, false
	}
	return kEnd, esc, SkipSpace(b, i+1), true
}

// SkipValue returns the index after the value that starts at b[i]; ok is
// false when no well-formed value starts there.
func SkipValue(b []byte, i int) (int, bool) { return skipValue(b, i, 1) }

// StrictString is StringValue for a reader that decides by itself
// whether a line is valid: it also refuses what encoding/json refuses and
// StringValue lets through, a control character or a bare quote inside v.
func StrictString(v []byte) (string, bool) {
	if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' {
		return "", false
	}
	body := v[1 : len(v)-1]
	n := plainPrefix(body)
	if n == len(body) {
		return string(body), true
	}
	if HasControl(body[n:]) {
		return "", false
	}
	out, ok := appendUnquoted(append(make([]byte, 0, len(body)), body[:n]...), body[n:])
	if !ok {
		return "", false
	}
	return string(out), true
}

// TextBlocks returns the texts of a message's content as the agents
// store it: a string, or an array of blocks such as
// {"type":"text","text":"…"}, whose text blocks it returns in order (null
// elements and blocks of other types pass). toolResult is true when a
// block has type "tool_result". bad is true for content of another type,
// or blocks that are not objects with a string (or null) type and text.
func TextBlocks(v []byte) (texts []string, toolResult, bad bool) {
	switch {
	case IsNull(v):
		return nil, false, false
	case v[0] == '"':
		s, ok := StringValue(v)
		if !ok {
			return nil, false, true
		}
		return []string{s}, false, false
	case v[0] != '[':
		return nil, false, true
	}
	ok := EachElement(v, func(el []byte) {
		if bad || IsNull(el) {
			return
		}
		var typ, txt []byte
		if !EachMember(el, func(k, v []byte) {
			switch string(k) {
			case "type":
				typ = v
			case "text":
				txt = v
			}
		}) {
			bad = true
			return
		}
		isText, ok := StrIs(typ, "text")
		isToolResult, _ := StrIs(typ, "tool_result")
		switch {
		case !ok || !StringOrNull(txt):
			bad = true
		case isToolResult:
			toolResult = true
		case isText:
			s, ok := OptString(txt)
			bad = !ok
			texts = append(texts, s)
		}
	})
	if !ok || bad {
		return nil, false, true
	}
	return texts, toolResult, false
}

// EachElement calls fn with every raw element of the array v (a value
// located by EachMember). It returns false if v is not an array.
func EachElement(v []byte, fn func(elem []byte)) bool {
	if len(v) == 0 || v[0] != '[' {
		return false
	}
	_, ok := seq(v, 0, func(j int) (int, bool) {
		end, ok := skipValue(v, j, 1)
		if ok {
			fn(v[j:end])
		}
		return end, ok
	})
	return ok
}

func IsNull(v []byte) bool { return len(v) == 0 || string(v) == "null" }

// StringValue decodes the raw string value v. ok is false when v is not a
// string (or holds a bad escape).
func StringValue(v []byte) (s string, ok bool) {
	if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' {
		return "", false
	}
	in := v[1 : len(v)-1]
	esc := bytes.IndexByte(in, '\\')
	valid := utf8.Valid(in)
	if esc < 0 && valid {
		return string(in), true
	}
	var out []byte
	if valid && bytes.IndexByte(in, '"') < 0 {
		out, ok = appendValid(make([]byte, 0, len(in)), in, esc)
	} else {
		out, ok = appendUnquoted(make([]byte, 0, len(in)), in)
	}
	return string(out), ok
}

// appendValid is appendUnquoted for s that is valid UTF-8 and holds no
// quote, with its first backslash at esc: only the escapes need decoding,
// and the runs between them are found with bytes.IndexByte (a vector
// scan) and copied whole.
func appendValid(dst, s []byte, esc int) ([]byte, bool) {
	if esc < 0 {
		esc = len(s)
	}
	for r := 0; ; {
		dst = append(dst, s[r:r+esc]...)
		if r += esc; r >= len(s) {
			return dst, true
		}
		var ok bool
		if dst, r, ok = AppendEscape(dst, s, r); !ok {
			return dst, false
		}
		if esc = bytes.IndexByte(s[r:], '\\'); esc < 0 {
			esc = len(s) - r
		}
	}
}

// AppendEscape decodes the escape at s[r] (a backslash) onto dst and
// returns the index after it; ok is false for a bad escape. A \u escape
// of a surrogate takes the next one with it when the two make a pair, and
// is U+FFFD otherwise.
func AppendEscape(dst, s []byte, r int) (_ []byte, next int, ok bool) {
	if r+1 >= len(s) {
		return dst, r, false
	}
	switch c := s[r+1]; c {
	case '"', '\\', '/':
		return append(dst, c), r + 2, true
	case 'b':
		return append(dst, '\b'), r + 2, true
	case 'f':
		return append(dst, '\f'), r + 2, true
	case 'n':
		return append(dst, '\n'), r + 2, true
	case 'r':
		return append(dst, '\r'), r + 2, true
	case 't':
		return append(dst, '\t'), r + 2, true
	case 'u':
		rr := hex4(s[r+2:])
		if rr < 0 {
			return dst, r, false
		}
		r += 6
		if utf16.IsSurrogate(rr) {
			if r+1 < len(s) && s[r] == '\\' && s[r+1] == 'u' {
				if rr1 := hex4(s[r+2:]); rr1 >= 0 {
					if dec := utf16.DecodeRune(rr, rr1); dec != unicode.ReplacementChar {
						return utf8.AppendRune(dst, dec), r + 6, true
					}
				}
			}
			rr = unicode.ReplacementChar
		}
		return utf8.AppendRune(dst, rr), r, true
	}
	return dst, r, false
}

// StrIs reports whether the optional string member v is s (absent and
// null count as ""); ok is false when v is neither a string nor null. It
// allocates nothing unless v holds escapes. s must be valid UTF-8.
func StrIs(v []byte, s string) (is, ok bool) {
	if IsNull(v) {
		return s == "", true
	}
	if len(v) < 2 || v[0] != '"' {
		return false, false
	}
	if in := v[1 : len(v)-1]; bytes.IndexByte(in, '\\') < 0 {
		return string(in) == s, true
	}
	got, ok := StringValue(v)
	return ok && got == s, ok
}

// StringOrNull reports whether the located value v is a string or null (or
// absent), without decoding it.
func StringOrNull(v []byte) bool { return IsNull(v) || v[0] == '"' }

// OptString decodes an optional string member: absent and null are "";
// ok is false for another type.
func OptString(v []byte) (string, bool) {
	if IsNull(v) {
		return "", true
	}
	return StringValue(v)
}

// HasControl reports whether b holds a byte below 0x20, 8 bytes at a time.
func HasControl(b []byte) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	for len(b) >= 8 {
		x := binary.LittleEndian.Uint64(b)
		if (x-0x20*ones)&^x&highs != 0 {
			return true
		}
		b = b[8:]
	}
	for _, c := range b {
		if c < 0x20 {
			return true
		}
	}
	return false
}

// appendUnquoted appends the decoded contents of a JSON string (without
// its quotes) to dst, as encoding/json decodes them: invalid UTF-8 and
// unpaired surrogates become U+FFFD.
func appendUnquoted(dst, s []byte) ([]byte, bool) {
	for r := 0; r < len(s); {
		// Plain bytes (most of a prompt), 8 at a time.
		if k := plainPrefix(s[r:]); k > 0 {
			dst = append(dst, s[r:r+k]...)
			if r += k; r >= len(s) {
				break
			}
		}
		// Copy the run up to the next escape in one go when it is valid UTF-8.
		if k := bytes.IndexByte(s[r:], '\\'); k != 0 {
			if k < 0 {
				k = len(s) - r
			}
			if run := s[r : r+k]; utf8.Valid(run) && bytes.IndexByte(run, '"') < 0 {
				dst = append(dst, run...)
				r += k
				continue
			}
		}
		switch c := s[r]; {
		case c == '\\':
			var ok bool
			if dst, r, ok = AppendEscape(dst, s, r); !ok {
				return dst, false
			}
		case c == '"':
			return dst, false
		case c < utf8.RuneSelf:
			dst = append(dst, c)
			r++
		default:
			rr, size := utf8.DecodeRune(s[r:])
			r += size
			dst = utf8.AppendRune(dst, rr)
		}
	}
	return dst, true
}

// plainPrefix returns the length of the longest prefix of s made of bytes
// that stand for themselves in a JSON string: printable ASCII other than
// the quote and the backslash. It looks at 8 bytes at a time.
func plainPrefix(s []byte) int {
	const (
		ones  = 0x0101010101010101
		highs = 0x8080808080808080
	)
	i := 0
	for ; i+8 <= len(s); i += 8 {
		x := binary.LittleEndian.Uint64(s[i:])
		q := x ^ ('"' * ones)
		bs := x ^ ('\\' * ones)
		// A byte below 0x20, a zero byte of q or bs (the quote, the
		// backslash), or a high bit: the lowest flagged byte is exact.
		m := ((x - 0x20*ones) &^ x) | ((q - ones) &^ q) | ((bs - ones) &^ bs) | x
		if m &= highs; m != 0 {
			return i + bits.TrailingZeros64(m)/8
		}
	}
	for ; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= utf8.RuneSelf || c == '"' || c == '\\' {
			break
		}
	}
	return i
}

// hex4 reads four hex digits, or returns -1.
func hex4(s []byte) rune {
	if len(s) < 4 {
		return -1
	}
	n, err := strconv.ParseUint(string(s[:4]), 16, 32)
	if err != nil {
		return -1
	}
	return rune(n)
}

// ObjectShaped reports whether a non-blank line starts with "{" and ends
// with "}" (ignoring surrounding white space): the cheap test that catches
// torn and garbage lines without decoding them. blank is true for a line of
// white space only.
func ObjectShaped(line []byte) (ok, blank bool) {
	t := bytes.Trim(line, " \t\r\n")
	if len(t) == 0 {
		return false, true
	}
	return t[0] == '{' && t[len(t)-1] == '}', false
}
