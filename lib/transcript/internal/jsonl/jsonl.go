// Package jsonl reads lines of any length while holding at most one line
// (plus a fixed buffer) in memory.
package jsonl

import (
	"bufio"
	"io"
)

// BufSize is the reader's fixed buffer; longer lines are assembled in a
// separate slice that is reused from line to line.
const BufSize = 256 << 10

// MaxLine is the longest line handed out whole. A longer one is read
// through to its newline without being held and handed out as Oversize,
// which is not JSON, so callers count it as malformed: memory stays
// bounded whatever the input.
const MaxLine = 32 << 20

// Oversize stands in for a line longer than MaxLine.
var Oversize = []byte("\x00oversize line")

// Reader reads lines.
type Reader struct {
	br   *bufio.Reader
	long []byte
	n    int64
}

// NewReader returns a Reader reading r.
func NewReader(r io.Reader) *Reader {
	return &Reader{br: bufio.NewReaderSize(r, BufSize)}
}

// Line returns the next line without its "\n" (a "\r" before it is kept).
// The slice is valid until the next call. At the end it returns io.EOF; a
// last line without "\n" is returned first, with a nil error. Any other
// error is a read error.
func (r *Reader) Line() ([]byte, error) {
	chunk, err := r.br.ReadSlice('\n')
	r.n += int64(len(chunk))
	if err == nil {
		return chunk[:len(chunk)-1], nil
	}
	if err != bufio.ErrBufferFull {
		if err == io.EOF && len(chunk) > 0 {
			return chunk, nil
		}
		return nil, err
	}
	if cap(r.long) > 8<<20 {
		r.long = nil // a buffer grown by an earlier long line is released
	}
	r.long = append(r.long[:0], chunk...)
	for {
		chunk, err = r.br.ReadSlice('\n')
		r.n += int64(len(chunk))
		if len(r.long)+len(chunk) > MaxLine+1 {
			r.long = nil
			return r.skipRest(err)
		}
		r.long = append(r.long, chunk...)
		switch err {
		case bufio.ErrBufferFull:
			continue
		case nil:
			return r.long[:len(r.long)-1], nil
		case io.EOF:
			return r.long, nil
		default:
			return nil, err
		}
	}
}

// skipRest reads the rest of an oversize line (err is the last read's).
func (r *Reader) skipRest(err error) ([]byte, error) {
	for err == bufio.ErrBufferFull {
		var chunk []byte
		chunk, err = r.br.ReadSlice('\n')
		r.n += int64(len(chunk))
	}
	if err != nil && err != io.EOF {
		return nil, err
	}
	return Oversize, nil
}

// Bytes returns the number of bytes read so far.
func (r *Reader) Bytes() int64 { return r.n }
