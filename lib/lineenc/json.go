package lineenc

import (
	"encoding/json"
	"strconv"

	"hist/lib/record"
)

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
