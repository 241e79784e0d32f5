package store

import (
	"errors"
	"io/fs"
	"os"
	"syscall"
)

// Open opens a store file for reading, refusing what is not a regular file:
// the open does not block on a FIFO put in a store file's place, which
// would hold a reader forever, and a folder cannot be read.
func Open(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, &fs.PathError{Op: "read", Path: path, Err: errors.New("not a regular file")}
	}
	return f, nil
}
