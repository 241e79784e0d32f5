// Package words holds the wording shared by every message hist prints:
// counts with their noun, and errors without the path a message names
// itself.
package words

import (
	"errors"
	"io/fs"
	"os"
	"strconv"
	"syscall"
)

// Plural is n and the word for it: "1 file", "2 files", "0 entries".
func Plural(n int, one, many string) string {
	if n == 1 {
		return strconv.Itoa(n) + " " + one
	}
	return strconv.Itoa(n) + " " + many
}

// Describe is err without the path that an *fs.PathError or
// *os.LinkError carries, for messages that name the file themselves.
func Describe(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err.Error()
	}
	if errors.Is(err, syscall.EISDIR) {
		return "is a directory"
	}
	return err.Error()
}
