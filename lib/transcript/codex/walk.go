package codex

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"

	"hist/lib/jsonscan"
)

// The three line types the reader decodes for a handful of short fields
// out of many kilobytes (session_meta carries the whole base instructions,
// turn_context the sandbox policy, event_msg the rest of an event) are
// walked with jsonscan, which skips the values the reader does not need
// without decoding them. Members are matched as encoding/json matches a
// struct's fields (case folded, the last of a repeated one). Any shape the
// walk does not vouch for is decoded with encoding/json instead.

// strTo decodes the raw string val into dst; a value that is not a string
// clears good for good (encoding/json would fail the line, whatever else
// it holds).
func strTo(dst *string, val []byte, good *bool) {
	s, ok := jsonscan.StrictString(val)
	if !ok {
		*good = false
	}
	*dst = s
}

// walkLine walks a rollout line: its timestamp into rawTS, and its
// payload, which must be an object, member by member with payload, where
// it stands (not skipped, then walked again). It reports false when the
// walk cannot vouch for the line: a shape that is not one JSON object, no
// payload, or good cleared (by a timestamp that is not a string, or by
// payload).
func walkLine(b []byte, rawTS *string, good *bool, payload func(key []byte, at int) (int, bool)) bool {
	saw := false
	end, ok := jsonscan.WalkObject(b, 0, func(key []byte, at int) (int, bool) {
		switch canon(key) {
		case "timestamp":
			return value(b, at, func(val []byte) { strTo(rawTS, val, good) })
		case "payload":
			saw = true
			return jsonscan.WalkObject(b, at, payload)
		}
		return jsonscan.SkipValue(b, at)
	})
	return ok && jsonscan.SkipSpace(b, end) == len(b) && *good && saw
}

// value reads the value at b[at] for a WalkObject member: f gets it raw.
func value(b []byte, at int, f func(val []byte)) (int, bool) {
	end, ok := jsonscan.SkipValue(b, at)
	if ok {
		f(b[at:end])
	}
	return end, ok
}

// fastMeta reads a session_meta line's timestamp and the payload fields the
// reader uses. ok is false when the walk cannot vouch for the line. The
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
		if !jsonscan.EachMember(item, func(key, val []byte) {
			switch canon(key) {
			case "type":
				strTo(&it.Type, val, &good)
			case "id":
				if string(val) != "null" {
					strTo(&it.ID, val, &good)
				}
			case "content":
				content = val
			}
		}) || !good {
			return e, "", false
		}
		if content != nil && string(content) != "null" {
			if !jsonscan.EachElement(content, func(val []byte) {
				var ti textItem
				if good && jsonscan.EachMember(val, func(key, v []byte) {
					switch canon(key) {
					case "type":
						strTo(&ti.Type, v, &good)
					case "text":
						if ti.Type == "" || ti.Type == "text" || ti.Type == "Text" {
							strTo(&ti.Text, v, &good)
						}
					}
				}) {
					it.Content = append(it.Content, ti)
				} else {
					good = false
				}
			}) || !good {
				return e, "", false
			}
		}
		e.Item = it
	}
	return e, rawTS, true
}

// walkerKeys are the member names the fast readers look for.
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
