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
	"slices"
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

const hexDigits = "0123456789abcdef"

// AppendString appends s as a JSON string. Bytes that are not valid UTF-8
// are kept as they are (the line then is not strict JSON, but Parse reads
// it back byte for byte, so no prompt is altered by a round trip).
func AppendString(dst []byte, s string) []byte {
	// Room for the text with a few escapes, so that the copies below
	// rarely grow dst.
	dst = slices.Grow(dst, len(s)+len(s)/8+2)
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		// Sixteen, then eight bytes at a time while none needs an escape.
		for i+16 <= len(s) && plain8(s, i) && plain8(s, i+8) {
			i += 16
		}
		if i+8 <= len(s) && plain8(s, i) {
			i += 8
			continue
		}
		end := min(i+8, len(s))
		for ; i < end; i++ {
			c := s[i]
			if c >= 0x20 && c != '"' && c != '\\' && c != 0x7f {
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"':
				dst = append(dst, '\\', '"')
			case '\\':
				dst = append(dst, '\\', '\\')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			start = i + 1
		}
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// plain8 reports whether none of the 8 bytes of s at i needs an escape:
// none is below 0x20, a quote, a backslash or DEL. (A word has a zero
// byte exactly when (w-ones) &^ w & high is not zero; x^c*ones has one
// where x holds c.)
func plain8(s string, i int) bool {
	const (
		ones = 0x0101010101010101
		high = 0x8080808080808080
	)
	b := s[i : i+8]
	x := uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
		uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
	q := x ^ '"'*ones
	bs := x ^ '\\'*ones
	del := x ^ 0x7f*ones
	bad := (x-0x20*ones)&^x | (q-ones)&^q | (bs-ones)&^bs | (del-ones)&^del
	return bad&high == 0
}

// Parse decodes one line (without its newline). A line that is not a JSON
// object, lacks a string "text" or a numeric "ts", or whose "v" is not 1,
// is ErrMalformed.
func Parse(line []byte) (Record, error) {
	var v View
	if parseFast(line, &v) {
		return Record{Text: string(v.Text), TS: v.TS, Src: string(v.Src), Session: string(v.Session)}, nil
	}
	return parseSlow(line)
}

// View is a parsed record whose byte fields point into the line or into
// the scratch buffer passed to ParseView: valid until either changes.
type View struct {
	Text    []byte
	TS      int64
	Src     []byte
	Session []byte
	scratch []byte
}

// ParseView parses line into v without allocating in the common case. It
// accepts and rejects exactly the lines Parse does.
func ParseView(line []byte, v *View) error {
	if parseFast(line, v) {
		return nil
	}
	rec, err := parseSlow(line)
	if err != nil {
		return err
	}
	v.Text, v.TS, v.Src, v.Session = []byte(rec.Text), rec.TS, []byte(rec.Src), []byte(rec.Session)
	return nil
}

type wire struct {
	V       *int64  `json:"v"`
	Text    *string `json:"text"`
	TS      *int64  `json:"ts"`
	Src     string  `json:"src"`
	Session string  `json:"session"`
}

func parseSlow(line []byte) (Record, error) {
	var w wire
	d := json.NewDecoder(bytes.NewReader(line))
	if err := d.Decode(&w); err != nil {
		return Record{}, ErrMalformed
	}
	if _, err := d.Token(); err != io.EOF { // trailing garbage
		return Record{}, ErrMalformed
	}
	if w.V == nil || *w.V != Version || w.Text == nil || w.TS == nil {
		return Record{}, ErrMalformed
	}
	return Record{Text: *w.Text, TS: *w.TS, Src: w.Src, Session: w.Session}, nil
}

// parseFast handles the shape hist itself writes, and any line made of the
// known keys with string or integer values in any order. Whatever it does
// not understand goes to parseSlow, which has the last word.
func parseFast(line []byte, rec *View) bool {
	rec.Text, rec.TS, rec.Src, rec.Session = nil, 0, nil, nil
	rec.scratch = rec.scratch[:0]
	p := jsonscan.SkipSpace(line, 0)
	if p >= len(line) || line[p] != '{' {
		return false
	}
	p++
	var haveV, haveText, haveTS bool
	for first := true; ; first = false {
		p = jsonscan.SkipSpace(line, p)
		if p >= len(line) {
			return false
		}
		if line[p] == '}' {
			if first {
				return false
			}
			p = jsonscan.SkipSpace(line, p+1)
			if p != len(line) || !haveV || !haveText || !haveTS {
				return false
			}
			return true
		}
		if !first {
			if line[p] != ',' {
				return false
			}
			p = jsonscan.SkipSpace(line, p+1)
		}
		key, np, ok := rawString(line, p)
		if !ok {
			return false
		}
		p = jsonscan.SkipSpace(line, np)
		if p >= len(line) || line[p] != ':' {
			return false
		}
		p = jsonscan.SkipSpace(line, p+1)
		switch string(key) {
		case "v":
			if haveV {
				return false
			}
			n, np, ok := integer(line, p)
			if !ok || n != Version {
				return false
			}
			haveV, p = true, np
		case "ts":
			if haveTS {
				return false
			}
			n, np, ok := integer(line, p)
			if !ok {
				return false
			}
			rec.TS, haveTS, p = n, true, np
		case "text", "src", "session":
			var sp *[]byte
			if string(key) == "text" {
				sp = &rec.scratch
			}
			s, np, ok := decodeString(line, p, sp)
			if !ok {
				return false
			}
			switch string(key) {
			case "text":
				if haveText {
					return false
				}
				rec.Text, haveText = s, true
			case "src":
				rec.Src = s
			case "session":
				rec.Session = s
			}
			p = np
		default:
			return false
		}
	}
}

// rawString returns the bytes of a JSON string without escapes (keys).
func rawString(b []byte, p int) ([]byte, int, bool) {
	if p >= len(b) || b[p] != '"' {
		return nil, p, false
	}
	for i := p + 1; i < len(b); i++ {
		switch c := b[i]; {
		case c == '"':
			return b[p+1 : i], i + 1, true
		case c == '\\' || c < 0x20:
			return nil, p, false
		}
	}
	return nil, p, false
}

func integer(b []byte, p int) (int64, int, bool) {
	start := p
	if p < len(b) && b[p] == '-' {
		p++
	}
	digits := p
	for p < len(b) && b[p] >= '0' && b[p] <= '9' {
		p++
	}
	if p == digits || p-digits > 19 || (b[digits] == '0' && p-digits > 1) {
		return 0, start, false
	}
	if p < len(b) && (b[p] == '.' || b[p] == 'e' || b[p] == 'E') {
		return 0, start, false
	}
	n, err := strconv.ParseInt(string(b[start:p]), 10, 64)
	if err != nil {
		return 0, start, false
	}
	return n, p, true
}

// decodeString decodes the JSON string at b[p]. It refuses (so parseSlow
// decides) control characters; invalid UTF-8 is kept byte for byte, which
// is what AppendString writes.
func decodeString(b []byte, p int, scratch *[]byte) ([]byte, int, bool) {
	if p >= len(b) || b[p] != '"' {
		return nil, p, false
	}
	i := p + 1
	// Fast path: no escape before the closing quote.
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
	for i < len(b) {
		c := b[i]
		switch {
		case c == '"':
			return out, i + 1, true
		case c < 0x20:
			return nil, p, false
		case c != '\\':
			j := i + 1
			for j < len(b) && b[j] != '"' && b[j] != '\\' && b[j] >= 0x20 {
				j++
			}
			out = append(out, b[i:j]...)
			i = j
			continue
		}
		var ok bool
		if out, i, ok = jsonscan.AppendEscape(out, b, i); !ok {
			return nil, p, false
		}
	}
	return nil, p, false
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

// Record returns the line's record as strings that outlive the callback.
func (l *Line) Record() Record {
	return Record{Text: string(l.Text), TS: l.TS, Src: string(l.Src), Session: string(l.Session)}
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
		if err != nil {
			if err == io.EOF {
				if len(line) > 0 {
					st.Malformed++ // torn last line
				}
				return st, nil
			}
			return st, err
		}
		st.Lines++
		body := line[:len(line)-1]
		if len(bytes.TrimSpace(body)) == 0 {
			off += n
			continue
		}
		if perr := ParseView(body, &l.View); perr != nil {
			st.Malformed++
			off += n
			continue
		}
		l.Offset, l.Raw = off, body
		off += n
		st.Records++
		if err := fn(&l); err != nil {
			return st, err
		}
	}
}
