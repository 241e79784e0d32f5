// Package lineenc holds the formats hist-list and hist-pick print prompts
// in, and reads them back for hist-delete --stdin, so that a filtered
// listing piped to it deletes exactly what was listed:
//
//   - Lines, hist-list's default: one prompt a line, with "\" written
//     "\\", a newline written "\n" and a NUL byte (which older builds
//     stored) written "\0", so that every prompt is one line and the
//     encoding is reversible;
//   - Raw, hist-pick's default: the prompt as it was typed, then a newline;
//   - NUL: the prompt as it was typed, ended by a NUL byte;
//   - JSON: one object a line (Listed).
package lineenc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"hist/lib/identity"
	"hist/lib/jsonscan"
	"hist/lib/record"
)

// Format is a way of printing prompts.
type Format string

// The formats (see the package comment). Their names are hist-delete's
// --stdin values.
const (
	Lines Format = "lines"
	Raw   Format = "raw"
	NUL   Format = "nul"
	JSON  Format = "json"
)

// Fits reports whether f can print text: a record that a NUL byte ends
// cannot hold one (its parts would read as other prompts).
func (f Format) Fits(text string) bool { return f != NUL || strings.IndexByte(text, 0) < 0 }

// Append appends l printed in f to dst.
func (f Format) Append(dst []byte, l Listed) []byte {
	switch f {
	case Raw:
		return append(append(dst, l.Text...), '\n')
	case NUL:
		return append(append(dst, l.Text...), 0)
	case JSON:
		return AppendJSON(dst, l)
	}
	return append(append(dst, encode(l.Text)...), '\n')
}

// The Lines format's escapes: encode writes them, decode reverses it. In
// decode, a backslash followed by anything but "\", "n" or "0" (which
// encode never writes) is kept as it is.
var (
	encode = strings.NewReplacer(`\`, `\\`, "\n", `\n`, "\x00", `\0`).Replace
	decode = strings.NewReplacer(`\\`, `\`, `\n`, "\n", `\0`, "\x00").Replace
)

// Parse reads back the prompts of data printed in f (Lines, NUL or
// JSON), leaving out blank ones. Lines input that holds NUL bytes, or
// whose every line is one of the JSON format's objects, is refused: it
// was printed in another format.
func Parse(data []byte, f Format) ([]string, error) {
	var out []string
	switch f {
	case NUL:
		for _, p := range bytes.Split(data, []byte{0}) {
			if !identity.IsBlank(string(p)) {
				out = append(out, string(p))
			}
		}
		return out, nil
	case JSON:
		for i, line := range bytes.Split(data, []byte{'\n'}) {
			if len(bytes.TrimSpace(line)) == 0 {
				continue
			}
			// Bytes that are not UTF-8 are kept as AppendJSON wrote them
			// (encoding/json would make them U+FFFD).
			text, found := "", false
			ok := jsonscan.EachMember(line, func(key, val []byte) {
				if string(key) == "text" {
					text, found = record.DecodeString(val)
				}
			})
			if !ok || !found {
				return nil, fmt.Errorf("--stdin=json: line %d of standard input is not a JSON object with a \"text\" string (hist-list --json writes those)", i+1)
			}
			if !identity.IsBlank(text) {
				out = append(out, text)
			}
		}
		return out, nil
	}
	if bytes.IndexByte(data, 0) >= 0 {
		return nil, errors.New("--stdin: standard input holds NUL bytes, as hist-list -0 writes: read it with -0")
	}
	jsonish := 0
	for _, line := range bytes.Split(data, []byte{'\n'}) {
		if identity.IsBlank(string(line)) {
			continue
		}
		if looksListedJSON(line) {
			jsonish++
		}
		out = append(out, decode(string(line)))
	}
	if jsonish > 0 && jsonish == len(out) {
		return nil, errors.New("--stdin: standard input looks like hist-list --json output: read it with --stdin=json")
	}
	return out, nil
}

// looksListedJSON reports whether line is one of the JSON format's objects.
func looksListedJSON(line []byte) bool {
	if !bytes.HasPrefix(line, []byte(`{"text":`)) {
		return false
	}
	var o map[string]json.RawMessage
	if json.Unmarshal(line, &o) != nil {
		return false
	}
	_, t := o["ts"]
	_, f := o["file"]
	return t && f
}

// Listed is one prompt as hist-list and hist-pick print it; the JSON
// format prints every field.
type Listed struct {
	Text    string
	TS      int64
	Cwd     string // the project folder from registry.json, "" when unknown
	File    string // the store file of its richest copy
	Src     string // the agent, for imported prompts
	Session string // its session id, for imported prompts
	Resume  string // the command that resumes the session (hist-pick's ctrl-o)
}

// AppendJSON appends l as one JSON object and a newline: text, ts, cwd and
// file always; src, session and resume when set. The text keeps invalid
// UTF-8 byte for byte, as the store does.
func AppendJSON(buf []byte, l Listed) []byte {
	buf = append(buf, `{"text":`...)
	buf = record.AppendString(buf, l.Text)
	buf = append(buf, `,"ts":`...)
	buf = strconv.AppendInt(buf, l.TS, 10)
	buf = append(buf, `,"cwd":`...)
	buf = jsonString(buf, l.Cwd)
	buf = append(buf, `,"file":`...)
	buf = jsonString(buf, l.File)
	if l.Src != "" {
		buf = append(buf, `,"src":`...)
		buf = record.AppendString(buf, l.Src)
	}
	if l.Session != "" {
		buf = append(buf, `,"session":`...)
		buf = record.AppendString(buf, l.Session)
	}
	if l.Resume != "" {
		buf = append(buf, `,"resume":`...)
		buf = jsonString(buf, l.Resume)
	}
	return append(buf, "}\n"...)
}

func jsonString(buf []byte, s string) []byte {
	b, _ := json.Marshal(s)
	return append(buf, b...)
}
