// Package termsafe shows text from prompts, transcripts and folder names on
// a terminal without letting it drive the terminal: control characters
// show as their control pictures (␛ for ESC, ␇ for BEL), C1 controls and
// bytes that are not UTF-8 as U+FFFD. So a stored "ESC]0;title BEL" or
// "ESC[2J" cannot retitle the window, clear the screen or write the
// clipboard (OSC 52). Output to a pipe or a file keeps the raw bytes: only
// Writer and the callers that check IsTerminal escape.
package termsafe

import (
	"io"
	"os"
	"unicode/utf8"

	"github.com/mattn/go-isatty"
)

// Newline is how Line shows a newline.
const Newline = "↵"

// Line is text as one line: each newline (and "\r\n") shows as ↵, other
// control characters as control pictures; tabs stay.
func Line(text string) string { return LineSep(text, Newline) }

// LineSep is Line with each newline shown as sep.
func LineSep(text, sep string) string {
	if clean(text) {
		return text
	}
	return string(appendSafe(make([]byte, 0, len(text)+8), text, sep))
}

// Text is text with its newlines and tabs kept ("\r\n" becomes "\n") and
// every other control character shown as a control picture, for text
// printed over several lines (hist-pick's preview).
func Text(text string) string {
	if clean(text) {
		return text
	}
	return string(appendSafe(make([]byte, 0, len(text)+8), text, "\n"))
}

// clean reports whether text is printable ASCII, tabs and spaces only.
func clean(text string) bool {
	for i := 0; i < len(text); i++ {
		if c := text[i]; c < 0x20 && c != '\t' || c >= 0x7f {
			return false
		}
	}
	return true
}

// appendSafe appends text to b with newlines ("\n" and "\r\n") as nl and
// other control characters as control pictures.
func appendSafe(b []byte, text, nl string) []byte {
	for i := 0; i < len(text); {
		c := text[i]
		switch {
		case c == '\r' && i+1 < len(text) && text[i+1] == '\n':
			b = append(b, nl...)
			i += 2
			continue
		case c == '\n':
			b = append(b, nl...)
		case c == '\t':
			b = append(b, c)
		case c < 0x20:
			b = utf8.AppendRune(b, 0x2400+rune(c))
		case c == 0x7f:
			b = append(b, "␡"...)
		case c < 0x80:
			b = append(b, c)
		default:
			r, n := utf8.DecodeRuneInString(text[i:])
			if r >= 0x80 && r < 0xa0 || r == utf8.RuneError && n == 1 {
				b = utf8.AppendRune(b, utf8.RuneError)
			} else {
				b = append(b, text[i:i+n]...)
			}
			i += n
			continue
		}
		i++
	}
	return b
}

// IsTerminal reports whether w is a terminal.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && (isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd()))
}

// Writer is w itself when w is not a terminal, else a writer that shows
// what is written as Text does: newlines and tabs kept, every other control
// character as a control picture. A UTF-8 sequence split between two
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
