// Package lineenc holds hist-list's line format: one prompt a line, with
// "\" written "\\", a newline written "\n" and a NUL byte (which older
// builds stored) written "\0", so that every prompt is one
// line and the encoding is reversible. hist-delete --stdin and hist-pick
// read it back.
package lineenc

import "strings"

// Append appends the encoded text (without a line end) to dst.
func Append(dst []byte, text string) []byte {
	if strings.IndexByte(text, '\n') < 0 && strings.IndexByte(text, '\\') < 0 && strings.IndexByte(text, 0) < 0 {
		return append(dst, text...)
	}
	start := 0
	for i := 0; i < len(text); i++ {
		switch text[i] {
		case '\\':
			dst = append(dst, text[start:i]...)
			dst = append(dst, '\\', '\\')
			start = i + 1
		case '\n':
			dst = append(dst, text[start:i]...)
			dst = append(dst, '\\', 'n')
			start = i + 1
		case 0:
			dst = append(dst, text[start:i]...)
			dst = append(dst, '\\', '0')
			start = i + 1
		}
	}
	return append(dst, text[start:]...)
}

// Encode returns the encoded text.
func Encode(text string) string { return string(Append(nil, text)) }

// Decode reverses Encode. A backslash followed by anything but "\", "n" or "0"
// (which Encode never writes) is kept as it is.
func Decode(line string) string {
	if strings.IndexByte(line, '\\') < 0 {
		return line
	}
	var b strings.Builder
	b.Grow(len(line))
	for i := 0; i < len(line); i++ {
		c := line[i]
		if c == '\\' && i+1 < len(line) {
			switch line[i+1] {
			case '\\':
				b.WriteByte('\\')
				i++
				continue
			case 'n':
				b.WriteByte('\n')
				i++
				continue
			case '0':
				b.WriteByte(0)
				i++
				continue
			}
		}
		b.WriteByte(c)
	}
	return b.String()
}
