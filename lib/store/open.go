package store

import (
	"errors"
	"io/fs"
	"os"
	"syscall"

	"hist/lib/atomicfile"
)

// Open opens a store file for reading, refusing what is not a regular file:
// the open does not block on a FIFO put in a store file's place, which
// would hold a reader forever, and a folder is "not a regular file" too.
func Open(path string) (*os.File, error) {
	f, err := atomicfile.OpenRegular(path)
	if errors.Is(err, syscall.EISDIR) {
		err = &fs.PathError{Op: "read", Path: path, Err: atomicfile.ErrNotRegular}
	}
	return f, err
}
