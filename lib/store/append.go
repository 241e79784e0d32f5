package store

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"hist/lib/atomicfile"
)

// maxReappends bounds how often Append follows a file that was renamed
// away under it; each rename is a rewrite that finished, so a handful is
// plenty.
const maxReappends = 8

// Append appends one complete record line (ending in "\n") to the file at
// path with a single O_APPEND write, creating the file (0600) and its
// folders (0700) as needed. It never waits on a lock.
//
// If the file does not end with a newline (a torn line from a process that
// died mid-write), the record starts on a fresh line so it cannot glue
// onto the torn one.
//
// After the write it checks that path still names the file written to. A
// delete or a compaction may have renamed a new file over it (or claimed
// it) between the open and the write; then the record is appended again by
// path. The rewriter may also carry the first copy over, and the duplicate
// is harmless because readers drop duplicates: no timing of a rename can
// lose the record.
func Append(path string, line []byte) error {
	for range maxReappends {
		moved, err := appendOnce(path, line)
		if err != nil || !moved {
			return err
		}
	}
	return nil
}

func appendOnce(path string, line []byte) (moved bool, err error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND|os.O_CREATE, atomicfile.FilePerm)
	if errors.Is(err, fs.ErrNotExist) {
		if err := EnsureDir(filepath.Dir(path)); err != nil {
			return false, err
		}
		f, err = os.OpenFile(path, os.O_RDWR|os.O_APPEND|os.O_CREATE, atomicfile.FilePerm)
	}
	if err != nil {
		return false, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return false, err
	}
	if !fi.Mode().IsRegular() {
		return false, &fs.PathError{Op: "append", Path: path, Err: errors.New("not a regular file")}
	}
	buf := line
	if fi.Size() > 0 && tornEnd(f, fi.Size()) {
		buf = append([]byte{'\n'}, line...)
	}
	if _, err := f.Write(buf); err != nil {
		return false, err
	}
	now, err := os.Stat(path)
	if err != nil {
		return true, nil // renamed away and not recreated yet: append by path again
	}
	return !os.SameFile(now, fi), nil
}

// tornEnd reports whether the file, size bytes long, ends without a
// newline: a torn line from a writer that died. Another writer's line
// still landing looks the same for a moment (a write longer than what is
// left of a page makes the size grow a page at a time), so a missing
// newline is believed only once the size has stayed the same for a few
// milliseconds; otherwise two live writers would leave a blank line.
func tornEnd(f *os.File, size int64) bool {
	stable := 0
	for range 50 {
		var last [1]byte
		if _, err := f.ReadAt(last[:], size-1); err != nil || last[0] == '\n' {
			return false
		}
		if stable == 5 {
			return true
		}
		time.Sleep(time.Millisecond)
		fi, err := f.Stat()
		if err != nil {
			return true
		}
		if fi.Size() == size {
			stable++
		} else {
			size, stable = fi.Size(), 0
		}
	}
	return true
}
