// Package termsafe is the one rule for text from prompts, transcripts,
// session ids, folder names and peer files that reaches a terminal: a
// character that would act on the terminal or hide instead of showing as
// itself (Cut finds them: control and format characters, line and
// paragraph separators, bytes that are not UTF-8) is shown visibly, as
// docs/store-format.md ("On a terminal") lists. Output to a pipe or a
// file keeps the raw bytes: only Writer and the callers that check
// IsTerminal escape. lib/shellquote quotes the same characters with the
// shell's own escapes.
package termsafe

import (
	"fmt"
	"io"
	"os"
	"unicode"
	"unicode/utf8"

	"github.com/mattn/go-isatty"
)

// Cut returns where the first character of s that does not show as
// itself on a terminal starts, i, and its length in bytes, n (1 for a byte
// that is not UTF-8); len(s) and 0 when every character shows as itself.
// Tabs and newlines are such characters too: each caller says how it
// shows them.
func Cut(s string) (i, n int) {
	for i < len(s) {
		c := s[i]
		switch {
		case c >= 0x20 && c < 0x7f:
			i++
			continue
		case c < 0x80:
			return i, 1
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 || unicode.In(r, unicode.Cc, unicode.Cf, unicode.Zl, unicode.Zp) {
			return i, n
		}
		i += n
	}
	return len(s), 0
}

// Line is text as one line: each newline (and "\r\n") shows as ↵, tabs
// stay, and every other character Cut finds shows visibly.
func Line(text string) string { return LineSep(text, "↵") }

// LineSep is Line with each newline shown as sep.
func LineSep(text, sep string) string {
	if i, _ := Cut(text); i == len(text) {
		return text
	}
	return string(appendSafe(make([]byte, 0, len(text)+8), text, sep))
}

// Text is text with its newlines and tabs kept ("\r\n" becomes "\n") and
// every other character Cut finds shown visibly, for text printed over
// several lines (hist-pick's preview).
func Text(text string) string { return LineSep(text, "\n") }

// appendSafe appends text to b with newlines ("\n" and "\r\n") as nl,
// tabs kept, and the other characters Cut finds shown visibly.
func appendSafe(b []byte, text, nl string) []byte {
	for text != "" {
		i, n := Cut(text)
		b = append(b, text[:i]...)
		if n == 0 {
			break
		}
		switch c := text[i]; {
		case c == '\r' && i+1 < len(text) && text[i+1] == '\n':
			b, n = append(b, nl...), 2
		case c == '\n':
			b = append(b, nl...)
		case c == '\t':
			b = append(b, c)
		case c < 0x20:
			b = utf8.AppendRune(b, 0x2400+rune(c))
		case c == 0x7f:
			b = append(b, "␡"...)
		case n == 1:
			b = fmt.Appendf(b, "<0x%02X>", c)
		default:
			r, _ := utf8.DecodeRuneInString(text[i:])
			b = fmt.Appendf(b, "<U+%04X>", r)
		}
		text = text[i+n:]
	}
	return b
}

// Message is msg for a one-line message on w: Line when w is a terminal,
// msg itself otherwise.
func Message(w io.Writer, msg string) string {
	if IsTerminal(w) {
		return Line(msg)
	}
	return msg
}

// IsTerminal reports whether w is a terminal.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && (isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd()))
}

// Writer is w itself when w is not a terminal, else a writer that shows
// what is written as Text does: newlines and tabs kept, every other
// character Cut finds shown visibly. A UTF-8 sequence split between two
// writes is held until the next one.
func Writer(w io.Writer) io.Writer {
	if !IsTerminal(w) {
		return w
	}
	return &writer{w: w}
}

type writer struct {
	w       io.Writer
	pending []byte // the start of a UTF-8 sequence the last write ended in
	buf     []byte
}

func (t *writer) Write(p []byte) (int, error) {
	data := p
	if len(t.pending) > 0 {
		data = append(t.pending, p...)
		t.pending = nil
	}
	// Hold back a trailing sequence that may still complete.
	cut := len(data)
	for k := 1; k <= utf8.UTFMax-1 && k <= len(data); k++ {
		c := data[len(data)-k]
		if c < 0x80 {
			break
		}
		if utf8.RuneStart(c) {
			if !utf8.FullRune(data[len(data)-k:]) {
				cut = len(data) - k
			}
			break
		}
	}
	t.pending = append(t.pending[:0], data[cut:]...)
	t.buf = appendSafe(t.buf[:0], string(data[:cut]), "\n")
	if _, err := t.w.Write(t.buf); err != nil {
		return 0, err
	}
	return len(p), nil
}
