package picker

import (
	"strings"
	"unicode/utf8"
)

// newline is how a newline shows in a list row.
const newline = "↵"

// row is a prompt as one list row: each newline (and "\r\n") shows as ↵,
// other control characters as their control pictures (␛ for ESC), and
// bytes that are not UTF-8 as U+FFFD, so a row is one line and can never
// drive the terminal. Tabs stay (fzf expands them).
func row(text string) string {
	clean := true
	for i := 0; i < len(text); i++ {
		c := text[i]
		if c < 0x20 && c != '\t' || c == 0x7f || c >= 0x80 {
			clean = false
			break
		}
	}
	if clean {
		return text
	}
	var b strings.Builder
	b.Grow(len(text) + 8)
	for i := 0; i < len(text); {
		c := text[i]
		switch {
		case c == '\r' && i+1 < len(text) && text[i+1] == '\n':
			b.WriteString(newline)
			i += 2
			continue
		case c == '\n':
			b.WriteString(newline)
		case c == '\t':
			b.WriteByte(c)
		case c < 0x20:
			b.WriteRune(0x2400 + rune(c))
		case c == 0x7f:
			b.WriteRune('␡')
		case c < 0x80:
			b.WriteByte(c)
		default:
			r, n := utf8.DecodeRuneInString(text[i:])
			if r >= 0x80 && r < 0xa0 || r == utf8.RuneError && n == 1 {
				b.WriteRune(utf8.RuneError)
			} else {
				b.WriteString(text[i : i+n])
			}
			i += n
			continue
		}
		i++
	}
	return b.String()
}

// safe makes text safe to print in the preview pane: newlines and tabs
// stay, other control characters show as control pictures.
func safe(text string) string {
	var b strings.Builder
	for _, line := range strings.SplitAfter(text, "\n") {
		body := strings.TrimSuffix(line, "\n")
		body = strings.TrimSuffix(body, "\r")
		b.WriteString(row(body))
		if strings.HasSuffix(line, "\n") {
			b.WriteByte('\n')
		}
	}
	return b.String()
}
