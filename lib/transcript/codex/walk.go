package codex

import (
	"bytes"
	"encoding/json"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"

	"hist/lib/transcript/internal/jsonscan"
)

// A small JSON object walker for the two line types the reader decodes for
// a handful of short fields out of many kilobytes (session_meta carries the
// whole base instructions, turn_context the sandbox policy): it skips the
// values it does not need without decoding them. Any shape it does not
// understand makes it give up, and the caller decodes the line with
// encoding/json instead, so it never decides alone that a line is valid.

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func skipSpace(b []byte, i int) int {
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	return i
}

// skipString returns the index just past the string that starts at b[i]
// (a quote).
func skipString(b []byte, i int) (int, bool) {
	j := i + 1
	for {
		k := bytes.IndexByte(b[j:], '"')
		if k < 0 {
			return 0, false
		}
		j += k
		n := 0
		for m := j - 1; m > i && b[m] == '\\'; m-- {
			n++
		}
		j++
		if n%2 == 0 {
			return j, true
		}
	}
}

// skipValue returns the index just past the value that starts at or after
// b[i].
func skipValue(b []byte, i int) (int, bool) {
	i = skipSpace(b, i)
	if i >= len(b) {
		return 0, false
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				k, ok := skipString(b, j)
				if !ok {
					return 0, false
				}
				j = k - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1, true
				}
			}
		}
		return 0, false
	default:
		j := i
		for j < len(b) && b[j] != ',' && b[j] != '}' && b[j] != ']' && !isSpace(b[j]) {
			j++
		}
		if j == i {
			return 0, false
		}
		return j, true
	}
}

// walkObject calls f with the raw key (between its quotes) and raw value of
// each member of the object that starts at or after b[i]. It reports false
// for a shape it does not handle (then nothing can be concluded).
func walkObject(b []byte, i int, f func(key, val []byte)) bool {
	_, ok := walkObjectAt(b, i, func(key []byte, at int) (int, bool) {
		end, ok := skipValue(b, at)
		if ok {
			f(key, b[at:end])
		}
		return end, ok
	})
	return ok
}

// walkObjectAt is walkObject, except that member reads each value itself,
// from its index in b, and returns the index after it: a member can walk a
// nested object there instead of having it skipped, then walked again. It
// returns the index after the object.
func walkObjectAt(b []byte, i int, member func(key []byte, at int) (int, bool)) (int, bool) {
	i = skipSpace(b, i)
	if i >= len(b) || b[i] != '{' {
		return 0, false
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return i + 1, true
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return 0, false
		}
		k, ok := skipString(b, i)
		if !ok {
			return 0, false
		}
		key := b[i+1 : k-1]
		if bytes.IndexByte(key, '\\') >= 0 {
			return 0, false
		}
		i = skipSpace(b, k)
		if i >= len(b) || b[i] != ':' {
			return 0, false
		}
		end, ok := member(key, skipSpace(b, i+1))
		if !ok {
			return 0, false
		}
		i = skipSpace(b, end)
		if i >= len(b) {
			return 0, false
		}
		if b[i] == '}' {
			return i + 1, true
		}
		if b[i] != ',' {
			return 0, false
		}
		i = skipSpace(b, i+1)
	}
}

// strTo decodes the raw string val into dst; a value that is not a string
// clears good for good (encoding/json would fail the line, whatever else
// it holds).
func strTo(dst *string, val []byte, good *bool) {
	s, ok := str(val)
	if !ok {
		*good = false
	}
	*dst = s
}

// walkLine walks a rollout line: its timestamp into rawTS, and its
// payload, which must be an object, member by member with payload, where
// it stands (not skipped, then walked again). It reports false when the
// walker cannot vouch for the line: a shape it does not handle, no
// payload, or good cleared (by a timestamp that is not a string, or by
// payload).
func walkLine(b []byte, rawTS *string, good *bool, payload func(key []byte, at int) (int, bool)) bool {
	saw := false
	_, ok := walkObjectAt(b, 0, func(key []byte, at int) (int, bool) {
		switch canon(key) {
		case "timestamp":
			return value(b, at, func(val []byte) { strTo(rawTS, val, good) })
		case "payload":
			saw = true
			return walkObjectAt(b, at, payload)
		}
		return skipValue(b, at)
	})
	return ok && *good && saw
}

// value reads the value at b[at] for a walkObjectAt member: f gets it raw.
func value(b []byte, at int, f func(val []byte)) (int, bool) {
	end, ok := skipValue(b, at)
	if ok {
		f(b[at:end])
	}
	return end, ok
}

// str decodes a raw JSON string value; ok is false for anything else. It
// decodes exactly as encoding/json does (invalid UTF-8 and lone surrogates
// become U+FFFD).
func str(raw []byte) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return "", false
	}
	body := raw[1 : len(raw)-1]
	n := jsonscan.PlainPrefix(body)
	if n == len(body) {
		return string(body), true
	}
	return unquote(body, n)
}

// unquote decodes the body of a JSON string whose first n bytes are plain.
func unquote(s []byte, n int) (string, bool) {
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); {
		j := i + n
		if i > 0 {
			j = i + jsonscan.PlainPrefix(s[i:])
		}
		n = 0
		b = append(b, s[i:j]...)
		if i = j; i >= len(s) {
			break
		}
		c := s[i]
		switch {
		case c == '\\':
			if i+1 >= len(s) {
				return "", false
			}
			switch s[i+1] {
			case '"', '\\', '/':
				b = append(b, s[i+1])
			case 'b':
				b = append(b, '\b')
			case 'f':
				b = append(b, '\f')
			case 'n':
				b = append(b, '\n')
			case 'r':
				b = append(b, '\r')
			case 't':
				b = append(b, '\t')
			case 'u':
				r, ok := hex4(s[i+2:])
				if !ok {
					return "", false
				}
				i += 6
				if utf16.IsSurrogate(r) {
					if i+6 <= len(s) && s[i] == '\\' && s[i+1] == 'u' {
						r2, _ := hex4(s[i+2:])
						if d := utf16.DecodeRune(r, r2); d != unicode.ReplacementChar {
							b = utf8.AppendRune(b, d)
							i += 6
							continue
						}
					}
					r = unicode.ReplacementChar
				}
				b = utf8.AppendRune(b, r)
				continue
			default:
				return "", false
			}
			i += 2
		case c == '"' || c < 0x20:
			return "", false
		default:
			r, size := utf8.DecodeRune(s[i:])
			if r == utf8.RuneError && size == 1 {
				b = utf8.AppendRune(b, unicode.ReplacementChar)
			} else {
				b = append(b, s[i:i+size]...)
			}
			i += size
		}
	}
	// b is new and never written again: make it the string, without a copy.
	return unsafe.String(unsafe.SliceData(b), len(b)), true
}

// hex4 reads the four hex digits of a \u escape.
func hex4(s []byte) (rune, bool) {
	if len(s) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range s[:4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r*16 + rune(c)
	}
	return r, true
}

// fastMeta reads a session_meta line's timestamp and the payload fields the
// reader uses. ok is false when the walker cannot vouch for the line. The
// payload (which carries the whole base instructions) is read as the line
// is walked, not skipped then walked again; repeated members are taken as
// encoding/json takes them (the payloads' fields merged, the last of each).
func fastMeta(b []byte) (m metaPayload, rawTS string, ok bool) {
	good := true
	set := func(dst *string, val []byte) {
		if string(val) != "null" {
			strTo(dst, val, &good)
		}
	}
	payload := func(key []byte, at int) (int, bool) {
		return value(b, at, func(val []byte) {
			switch canon(key) {
			case "id":
				set(&m.ID, val)
			case "session_id":
				set(&m.SessionID, val)
			case "timestamp":
				set(&m.Timestamp, val)
			case "cwd":
				set(&m.Cwd, val)
			case "forked_from_id":
				set(&m.ForkedFromID, val)
			case "history_mode":
				set(&m.HistoryMode, val)
			case "source":
				m.Source = json.RawMessage(val)
			}
		})
	}
	if !walkLine(b, &rawTS, &good, payload) {
		return m, "", false
	}
	if len(m.Source) > 0 && !json.Valid(m.Source) {
		return m, "", false
	}
	return m, rawTS, true
}

// fastTurn reads a turn_context line's timestamp and cwd (the payload
// read as the line is walked, as in fastMeta).
func fastTurn(b []byte) (cwd, rawTS string, ok bool) {
	good := true
	payload := func(key []byte, at int) (int, bool) {
		return value(b, at, func(val []byte) {
			if canon(key) == "cwd" && string(val) != "null" {
				strTo(&cwd, val, &good)
			}
		})
	}
	if !walkLine(b, &rawTS, &good, payload) {
		return "", "", false
	}
	return cwd, rawTS, true
}

// walkArray calls f with each element of the array that starts at or after
// b[i].
func walkArray(b []byte, i int, f func(val []byte) bool) bool {
	i = skipSpace(b, i)
	if i >= len(b) || b[i] != '[' {
		return false
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == ']' {
		return true
	}
	for {
		start := skipSpace(b, i)
		end, ok := skipValue(b, start)
		if !ok || !f(b[start:end]) {
			return false
		}
		i = skipSpace(b, end)
		if i >= len(b) {
			return false
		}
		if b[i] == ']' {
			return true
		}
		if b[i] != ',' {
			return false
		}
		i++
	}
}

// fastEvent reads an event_msg line. ok is false when the walker cannot
// vouch for the line.
func fastEvent(b []byte) (e eventPayload, rawTS string, ok bool) {
	good := true
	var item []byte
	// The payload is read as the line is walked (see fastMeta).
	payload := func(key []byte, at int) (int, bool) {
		return value(b, at, func(val []byte) {
			switch canon(key) {
			case "type":
				strTo(&e.Type, val, &good)
			case "message":
				e.Message = json.RawMessage(val)
			case "kind":
				e.Kind = json.RawMessage(val)
			case "item":
				item = val
			}
		})
	}
	if !walkLine(b, &rawTS, &good, payload) {
		return e, "", false
	}
	if len(e.Kind) > 0 && !json.Valid(e.Kind) {
		return e, "", false
	}
	if item != nil && string(item) != "null" {
		it := &itemPayload{}
		var content []byte
		if !walkObject(item, 0, func(key, val []byte) {
			switch canon(key) {
			case "type":
				it.Type, good = str(val)
			case "id":
				if string(val) != "null" {
					it.ID, good = str(val)
				}
			case "content":
				content = val
			}
		}) || !good {
			return e, "", false
		}
		if content != nil && string(content) != "null" {
			if !walkArray(content, 0, func(val []byte) bool {
				var ti textItem
				if !walkObject(val, 0, func(key, v []byte) {
					switch canon(key) {
					case "type":
						ti.Type, good = str(v)
					case "text":
						if ti.Type == "" || ti.Type == "text" || ti.Type == "Text" {
							ti.Text, good = str(v)
						}
					}
				}) || !good {
					return false
				}
				it.Content = append(it.Content, ti)
				return true
			}) {
				return e, "", false
			}
		}
		e.Item = it
	}
	return e, rawTS, true
}

// walkerKeys are the member names the walker looks for.
var walkerKeys = []string{"timestamp", "payload", "id", "session_id", "cwd", "forked_from_id",
	"history_mode", "source", "type", "message", "kind", "item", "content", "text"}

// canon returns the member name key stands for, matched the way
// encoding/json matches names (case folded), or "".
func canon(key []byte) string {
	var low [16]byte
	if len(key) > len(low) {
		for _, c := range key {
			if c >= utf8.RuneSelf {
				return canonFold(key)
			}
		}
		return ""
	}
	for i, c := range key {
		switch {
		case c >= utf8.RuneSelf:
			return canonFold(key)
		case 'A' <= c && c <= 'Z':
			c += 'a' - 'A'
		}
		low[i] = c
	}
	switch k := string(low[:len(key)]); k {
	case "timestamp", "payload", "id", "session_id", "cwd", "forked_from_id",
		"history_mode", "source", "type", "message", "kind", "item", "content", "text":
		return k
	}
	return ""
}

// canonFold matches a non-ASCII key (Unicode folding: "ſ" is "s", the
// Kelvin sign is "k").
func canonFold(key []byte) string {
	for _, k := range walkerKeys {
		if bytes.EqualFold(key, []byte(k)) {
			return k
		}
	}
	return ""
}
