// Package words holds the wording shared by every message hist prints:
// counts with their noun, errors without the path a message names
// itself, and the chmod that fixes a permission error.
package words

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"syscall"

	"hist/lib/shellquote"
)

// Plural is n and the word for it: "1 file", "2 files", "0 entries".
func Plural(n int, one, many string) string {
	if n != 1 {
		one = many
	}
	return strconv.Itoa(n) + " " + one
}

// Count is n (0 or more) with thousands separators: "1,234,567".
func Count(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// Describe is err without the path that an *fs.PathError or
// *os.LinkError carries, for messages that name the file themselves.
func Describe(err error) string {
	var pe *fs.PathError
	var le *os.LinkError
	switch {
	case errors.As(err, &pe):
		return pe.Err.Error()
	case errors.As(err, &le):
		return le.Err.Error()
	case errors.Is(err, syscall.EISDIR):
		return "is a directory"
	}
	return err.Error()
}

// Chmod is the command that gives hist back a path a permission error
// kept it from: "chmod 700 DIR" for the first folder on the way to path
// that it cannot search, or for the folder a missing path would be made
// in; else "chmod 700" for path itself when it is a folder, "chmod 600"
// for a file. "" when err is not a permission error: the fix is never to
// delete anything.
func Chmod(path string, err error) string {
	if !errors.Is(err, fs.ErrPermission) {
		return ""
	}
	path = filepath.Clean(path)
	mode := "600"
	for i := 1; i <= len(path); i++ {
		if i < len(path) && path[i] != filepath.Separator {
			continue
		}
		fi, err := os.Stat(path[:i])
		if err != nil { // the folder above cannot be searched, or path[:i] is to be made in it
			return "chmod 700 " + shellquote.Quote(filepath.Dir(path[:i]), shellquote.Any)
		}
		if i == len(path) && fi.IsDir() {
			mode = "700"
		}
	}
	return "chmod " + mode + " " + shellquote.Quote(path, shellquote.Any)
}
