package install

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// The settings files are edited as ordered JSON, so that the user's keys
// stay in the order they were written: an object is a list of members
// (duplicates kept), numbers keep their literal text. A rewritten file is
// indented with two spaces; everything else in it is kept.

type member struct {
	key string
	val any
}

// object is a JSON object; arrays are []any, strings string, numbers
// json.Number, and true, false and null bool and nil.
type object struct{ members []member }

func (o *object) get(key string) (any, bool) {
	for _, m := range o.members {
		if m.key == key {
			return m.val, true
		}
	}
	return nil, false
}

// set replaces the first member named key, or appends one.
func (o *object) set(key string, val any) {
	for i := range o.members {
		if o.members[i].key == key {
			o.members[i].val = val
			return
		}
	}
	o.members = append(o.members, member{key, val})
}

func (o *object) del(key string) {
	for i := range o.members {
		if o.members[i].key == key {
			o.members = append(o.members[:i], o.members[i+1:]...)
			return
		}
	}
}

// syntaxError says where data stops being JSON.
type syntaxError struct{ line int }

func (e *syntaxError) Error() string { return fmt.Sprintf("is not valid JSON (line %d)", e.line) }

// parseJSON reads data, one JSON value and nothing after it. Data that is
// only white space is an empty object.
func parseJSON(data []byte) (any, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return &object{}, nil
	}
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	v, err := decodeValue(d)
	if err == nil {
		if _, err = d.Token(); err == io.EOF {
			return v, nil
		} else if err == nil {
			err = errors.New("data after the end")
		}
	}
	off := d.InputOffset()
	var se *json.SyntaxError
	switch {
	case errors.As(err, &se):
		off = se.Offset
	case errors.Is(err, io.ErrUnexpectedEOF):
		off = int64(len(bytes.TrimRight(data, " \t\r\n"))) // the last line with text
	}
	off = min(max(off, 0), int64(len(data)))
	return nil, &syntaxError{line: 1 + bytes.Count(data[:off], []byte("\n"))}
}

func decodeValue(d *json.Decoder) (any, error) {
	t, err := d.Token()
	if err == io.EOF {
		return nil, io.ErrUnexpectedEOF
	}
	if err != nil {
		return nil, err
	}
	switch t {
	case json.Delim('{'):
		o := &object{}
		for d.More() {
			k, err := d.Token()
			if err != nil {
				return nil, err
			}
			key, ok := k.(string)
			if !ok {
				return nil, errors.New("object key is not a string")
			}
			v, err := decodeValue(d)
			if err != nil {
				return nil, err
			}
			o.members = append(o.members, member{key, v})
		}
		_, err := d.Token() // '}'
		return o, err
	case json.Delim('['):
		a := []any{}
		for d.More() {
			v, err := decodeValue(d)
			if err != nil {
				return nil, err
			}
			a = append(a, v)
		}
		_, err := d.Token() // ']'
		return a, err
	}
	return t, nil
}

// formatJSON is v indented with two spaces, with a final newline.
func formatJSON(v any) []byte {
	var compact bytes.Buffer
	writeValue(&compact, v)
	var out bytes.Buffer
	json.Indent(&out, compact.Bytes(), "", "  ") // compact is valid JSON: no error
	out.WriteByte('\n')
	return out.Bytes()
}

func writeValue(b *bytes.Buffer, v any) {
	switch v := v.(type) {
	case *object:
		b.WriteByte('{')
		for i, m := range v.members {
			if i > 0 {
				b.WriteByte(',')
			}
			writeString(b, m.key)
			b.WriteByte(':')
			writeValue(b, m.val)
		}
		b.WriteByte('}')
	case []any:
		b.WriteByte('[')
		for i, e := range v {
			if i > 0 {
				b.WriteByte(',')
			}
			writeValue(b, e)
		}
		b.WriteByte(']')
	case string:
		writeString(b, v)
	case json.Number:
		b.WriteString(v.String())
	case bool:
		fmt.Fprint(b, v)
	default: // nil
		b.WriteString("null")
	}
}

// writeString writes s as a JSON string, leaving <, > and & as they are.
func writeString(b *bytes.Buffer, s string) {
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	enc.Encode(s)           // a string always encodes
	b.Truncate(b.Len() - 1) // Encode's newline
}
