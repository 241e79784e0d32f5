package opencode

import (
	"bufio"
	"os"

	"hist/lib/transcript"
)

// spill holds the texts of the prompts found while they are sorted, in a
// private temporary file (0600, removed when the scan ends): a large
// database's texts are not held in memory. Texts are appended, then read
// back by their span.
type spill struct {
	f *os.File // created by the first put
	w *bufio.Writer
	n int64 // bytes put
}

// span is where a text is in the spill.
type span struct{ at, n int64 }

func (s *spill) put(text string) (span, error) {
	if s.f == nil {
		f, err := os.CreateTemp("", "hist-opencode-*")
		if err != nil {
			return span{}, &transcript.ReadError{Path: os.TempDir(), Err: err}
		}
		os.Remove(f.Name()) // gone when closed, even after a crash (where the system allows it)
		s.f, s.w = f, bufio.NewWriterSize(f, 1<<16)
	}
	if _, err := s.w.WriteString(text); err != nil {
		return span{}, &transcript.ReadError{Path: s.f.Name(), Err: err}
	}
	sp := span{s.n, int64(len(text))}
	s.n += sp.n
	return sp, nil
}

func (s *spill) get(sp span) (string, error) {
	if sp.n == 0 {
		return "", nil
	}
	if err := s.w.Flush(); err != nil { // a no-op once flushed
		return "", &transcript.ReadError{Path: s.f.Name(), Err: err}
	}
	b := make([]byte, sp.n)
	if _, err := s.f.ReadAt(b, sp.at); err != nil {
		return "", &transcript.ReadError{Path: s.f.Name(), Err: err}
	}
	return string(b), nil
}

func (s *spill) close() {
	if s.f != nil {
		s.f.Close()
		os.Remove(s.f.Name())
	}
}
