// Package record holds the store's line format: one JSON object a line,
//
//	{"v":1,"text":"the prompt as delivered","ts":1700000000000}
//
// with optional provenance fields ("src", "session") that imported records
// carry. Readers ignore unknown fields and skip malformed lines, counting
// them; they never stop at one.
package record

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"strings"
	"sync"

	"hist/lib/jsonscan"
)

// Version is the only record version hist reads and writes.
const Version = 1

// Record is one stored prompt.
type Record struct {
	Text    string `json:"text"`
	TS      int64  `json:"ts"`
	Src     string `json:"src,omitempty"`
	Session string `json:"session,omitempty"`
}

// ErrMalformed is returned by Parse for a line that is not a record.
var ErrMalformed = errors.New("malformed record")

// Append appends rec's JSON line (with the trailing newline) to dst. The
// text is stored as StoredText makes it.
func Append(dst []byte, rec Record) []byte {
	dst = append(dst, `{"v":1,"text":`...)
	dst = AppendString(dst, StoredText(rec.Text))
	dst = append(dst, `,"ts":`...)
	dst = strconv.AppendInt(dst, rec.TS, 10)
	if rec.Src != "" {
		dst = append(dst, `,"src":`...)
		dst = AppendString(dst, rec.Src)
	}
	if rec.Session != "" {
		dst = append(dst, `,"session":`...)
		dst = AppendString(dst, rec.Session)
	}
	return append(dst, "}\n"...)
}

// Marshal returns rec's JSON line with its trailing newline.
func Marshal(rec Record) []byte { return Append(nil, rec) }

// StoredText is the text a new record keeps for a prompt: each NUL byte
// becomes U+FFFD, since a prompt holding a NUL cannot be listed with
// hist-list -0, whose records NUL bytes end (docs/store-format.md).
// Every other byte is kept as it is.
func StoredText(text string) string {
	if strings.IndexByte(text, 0) < 0 {
		return text
	}
	return strings.ReplaceAll(text, "\x00", "\uFFFD")
}

// AppendString appends s as a JSON string. Bytes that are not valid UTF-8
// are kept as they are (the line then is not strict JSON, but Parse reads
// it back byte for byte, so no prompt is altered by a round trip).
func AppendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c != 0x7f {
			continue
		}
		dst = append(dst, s[start:i]...)
		if k := strings.IndexByte("\"\\\n\r\t", c); k >= 0 {
			dst = append(dst, '\\', `"\nrt`[k])
		} else {
			dst = append(dst, '\\', 'u', '0', '0', "0123456789abcdef"[c>>4], "0123456789abcdef"[c&0xf])
		}
		start = i + 1
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// Parse decodes one line (without its newline). A line is a record when
// encoding/json decodes it into {v, text, ts, src, session} without error,
// with v 1 and a text and a ts (ParseView tells how); any other line is
// ErrMalformed.
func Parse(line []byte) (Record, error) {
	var v View
	if err := ParseView(line, &v); err != nil {
		return Record{}, err
	}
	return v.Record(), nil
}

// View is a parsed record whose byte fields point into the line or into
// the View's own buffer: valid until either changes.
type View struct {
	Text    []byte
	TS      int64
	Src     []byte
	Session []byte
	scratch []byte // the text's decoded escapes
}

// The fields of a record, in the order of fieldNames.
const (
	fieldV = iota
	fieldText
	fieldTS
	fieldSrc
	fieldSession
	fieldOther
)

var fieldNames = [...]string{"v", "text", "ts", "src", "session"}

// ParseView parses line into v, allocating nothing for a line of the
// shape hist writes. It accepts the lines encoding/json decodes into a
// struct of the record's fields without error, and reads them as it
// would: a member name matches a field exactly, else case-folded; of
// duplicate members the last wins; null leaves src and session as they
// were and makes v, text and ts absent; any other member must hold valid
// JSON. Unlike encoding/json it keeps invalid UTF-8 in a string byte for
// byte, as AppendString writes it.
func ParseView(line []byte, v *View) error {
	v.Text, v.TS, v.Src, v.Session = nil, 0, nil, nil
	v.scratch = v.scratch[:0]
	var ver int64
	var have [fieldOther]bool // v, text and ts are present
	p := jsonscan.SkipSpace(line, 0)
	if p >= len(line) || line[p] != '{' {
		return ErrMalformed
	}
	p = jsonscan.SkipSpace(line, p+1)
	for {
		f, np, ok := member(line, p)
		if !ok {
			return ErrMalformed
		}
		p = jsonscan.SkipSpace(line, np)
		if p >= len(line) || line[p] != ':' {
			return ErrMalformed
		}
		p = jsonscan.SkipSpace(line, p+1)
		null := p < len(line) && line[p] == 'n' && bytes.HasPrefix(line[p:], []byte("null"))
		switch {
		case f == fieldOther:
			np, ok = jsonscan.SkipValue(line, p)
			ok = ok && json.Valid(line[p:np])
		case null:
			np = p + len("null")
		case f == fieldV:
			ver, np, ok = integer(line, p)
		case f == fieldTS:
			v.TS, np, ok = integer(line, p)
		case f == fieldText:
			v.Text, np, ok = decodeString(line, p, &v.scratch)
		case f == fieldSrc:
			v.Src, np, ok = decodeString(line, p, nil)
		case f == fieldSession:
			v.Session, np, ok = decodeString(line, p, nil)
		}
		if !ok {
			return ErrMalformed
		}
		if f != fieldOther {
			have[f] = !null
		}
		p = jsonscan.SkipSpace(line, np)
		if p < len(line) && line[p] == ',' {
			p = jsonscan.SkipSpace(line, p+1)
			continue
		}
		if p >= len(line) || line[p] != '}' || jsonscan.SkipSpace(line, p+1) != len(line) ||
			!have[fieldV] || ver != Version || !have[fieldText] || !have[fieldTS] {
			return ErrMalformed
		}
		return nil
	}
}

// member reads the member name at b[p] and returns the field it sets and
// the index after it.
func member(b []byte, p int) (field int, next int, ok bool) {
	if p >= len(b) || b[p] != '"' {
		return 0, p, false
	}
	end := p + 1
	for end < len(b) && b[end] > 0x20 && b[end] < 0x80 && b[end] != '"' && b[end] != '\\' {
		end++
	}
	if end < len(b) && b[end] == '"' { // printable ASCII: as it is
		return fieldOf(string(b[p+1 : end])), end + 1, true
	}
	if end, ok = jsonscan.SkipValue(b, p); ok {
		if name, ok := jsonscan.StrictString(b[p:end]); ok {
			return fieldOf(name), end, true
		}
	}
	return 0, p, false
}

// fieldOf is the field a member name sets, matched as encoding/json
// matches struct fields: exactly, or else as strings.EqualFold does (so
// "TEXT" and "ſrc", with a long s, match too; no two field names fold
// alike, so the one that matches is the exact one when there is one).
func fieldOf(name string) int {
	for i, n := range fieldNames {
		if strings.EqualFold(name, n) {
			return i
		}
	}
	return fieldOther
}

// integer reads the JSON number at b[p] as encoding/json decodes one into
// an int64: without a fraction or an exponent, and in range.
func integer(b []byte, p int) (int64, int, bool) {
	start := p
	if p < len(b) && b[p] == '-' {
		p++
	}
	digits := p
	for p < len(b) && b[p] >= '0' && b[p] <= '9' {
		p++
	}
	if p == digits || p-digits > 19 || b[digits] == '0' && p-digits > 1 || p < len(b) && strings.IndexByte(".eE", b[p]) >= 0 {
		return 0, start, false
	}
	n, err := strconv.ParseInt(string(b[start:p]), 10, 64)
	if err != nil {
		return 0, start, false
	}
	return n, p, true
}

// DecodeString decodes v, a whole JSON string value, keeping invalid
// UTF-8 byte for byte as AppendString writes it.
func DecodeString(v []byte) (string, bool) {
	s, end, ok := decodeString(v, 0, nil)
	return string(s), ok && end == len(v)
}

// decodeString decodes the JSON string at b[p], into *scratch when it
// holds escapes (a new slice when scratch is nil). It refuses control
// characters, as encoding/json does; invalid UTF-8 is kept byte for byte,
// which is what AppendString writes.
func decodeString(b []byte, p int, scratch *[]byte) ([]byte, int, bool) {
	if p >= len(b) || b[p] != '"' {
		return nil, p, false
	}
	i := p + 1
	q := bytes.IndexByte(b[i:], '"')
	if q < 0 {
		return nil, p, false
	}
	if seg := b[i : i+q]; bytes.IndexByte(seg, '\\') < 0 {
		if jsonscan.HasControl(seg) {
			return nil, p, false
		}
		return seg, i + q + 1, true
	}
	var out []byte
	if scratch != nil {
		out = (*scratch)[:0]
		defer func() { *scratch = out[:0] }()
	}
	for {
		k := bytes.IndexAny(b[i:], `"\`)
		if k < 0 || jsonscan.HasControl(b[i:i+k]) {
			return nil, p, false
		}
		if out, i = append(out, b[i:i+k]...), i+k; b[i] == '"' {
			return out, i + 1, true
		}
		var ok bool
		if out, i, ok = jsonscan.AppendEscape(out, b, i); !ok {
			return nil, p, false
		}
	}
}

// Stats counts what a Scan saw.
type Stats struct {
	Lines     int   // complete lines read, blank ones included
	Records   int   // records handed to the callback
	Malformed int   // lines skipped: bad JSON, missing text or ts, wrong v, a torn last line
	Bytes     int64 // bytes read
}

// Add adds o's counts to s.
func (s *Stats) Add(o Stats) {
	s.Lines += o.Lines
	s.Records += o.Records
	s.Malformed += o.Malformed
	s.Bytes += o.Bytes
}

// Line is one record with where it came from. Its views and Raw are only
// valid during the callback.
type Line struct {
	View
	Offset int64  // byte offset of the line in its file
	Raw    []byte // the line without its newline
}

// Record returns the record as strings that outlive the view.
func (v *View) Record() Record {
	return Record{Text: string(v.Text), TS: v.TS, Src: string(v.Src), Session: string(v.Session)}
}

// readerSize is the buffer of a Scan. Longer lines are assembled in a
// growing buffer, so a line of any size is read whole, one at a time.
const readerSize = 256 << 10

// readers recycles Scan's buffers: a scope is many small files.
var readers = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, readerSize) }}

// Scan reads records from r, one a line, and calls fn for each. Malformed
// lines (and a last line with no newline, which a writer may still be
// finishing) are skipped and counted. The Line and its Raw bytes are only
// valid during the call. An error from fn stops the scan and is returned;
// a read error is returned as it is.
func Scan(r io.Reader, fn func(l *Line) error) (Stats, error) {
	var st Stats
	br := readers.Get().(*bufio.Reader)
	br.Reset(r)
	defer func() {
		br.Reset(nil)
		readers.Put(br)
	}()
	var long []byte
	var l Line
	var off int64
	for {
		line, err := br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			long = append(long[:0], line...)
			for err == bufio.ErrBufferFull {
				line, err = br.ReadSlice('\n')
				long = append(long, line...)
			}
			line = long
		}
		n := int64(len(line))
		st.Bytes += n
		off += n
		if err == io.EOF && len(line) > 0 {
			st.Malformed++ // torn last line
		}
		if err == io.EOF {
			return st, nil
		} else if err != nil {
			return st, err
		}
		st.Lines++
		body := line[:len(line)-1]
		if len(bytes.TrimSpace(body)) == 0 {
			continue
		}
		if ParseView(body, &l.View) != nil {
			st.Malformed++
			continue
		}
		l.Offset, l.Raw = off-n, body
		st.Records++
		if err := fn(&l); err != nil {
			return st, err
		}
	}
}
