package store

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"time"

	"hist/lib/atomicfile"
	"hist/lib/lock"
)

// maxReappends bounds how often Append follows a file renamed away under
// it: each rename is a rewrite that finished.
const maxReappends = 8

// Append appends one complete record line (ending in "\n") to the file at
// path with one O_APPEND write, creating the file (0600) and its folders
// (0700) as needed, without a lock; after a torn line (a writer that died)
// the record starts a fresh line. If path no longer names the file written
// to (a delete renamed its new file over it, which may or may not carry
// the record), the record goes to the new file by AppendMissing: no timing
// of a rename loses it or stores it twice. (After a compaction's claim the
// compact file and a fresh file may both hold it, until the next one.)
func Append(path string, line []byte) error {
	if moved, err := appendOnce(path, line, false); err != nil || !moved {
		return err
	}
	return AppendMissing(path, line)
}

// AppendMissing appends to the file at path those of lines (each ending
// in "\n") that it does not hold already, with one O_APPEND write under
// the file's lock (lock.File): a delete putting back the lines that
// reached the old file after its rename and a writer adding its record
// again never both add it.
func AppendMissing(path string, lines []byte) error {
	for range maxReappends {
		moved, err := appendOnce(path, lines, true)
		if err != nil || !moved {
			return err
		}
	}
	return nil
}

// lockWait bounds AppendMissing's wait for the file's lock, which is held
// only while a few lines are read and written.
const lockWait = 10 * time.Second

func appendOnce(path string, line []byte, missing bool) (moved bool, err error) {
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
	if missing {
		// Without the lock (a file system without locks, or a holder
		// that never lets go) the check still runs: a duplicate at worst,
		// never a lost record.
		if release, err := lock.File(f, lockWait); err == nil {
			defer release()
		}
		if now, err := os.Stat(path); err != nil || !os.SameFile(now, fi) {
			return true, nil // replaced since the open: again by path
		}
		if line, err = notIn(f, line); err != nil || len(line) == 0 {
			return false, err
		}
		if fi, err = f.Stat(); err != nil {
			return false, err
		}
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

// notIn returns the lines of lines that f does not hold.
func notIn(f *os.File, lines []byte) ([]byte, error) {
	want := map[string]bool{}
	for l := range bytes.Lines(lines) {
		want[string(l)] = true
	}
	br := bufio.NewReader(io.NewSectionReader(f, 0, math.MaxInt64))
	for len(want) > 0 {
		l, err := br.ReadBytes('\n')
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		delete(want, string(l))
	}
	var out []byte
	for l := range bytes.Lines(lines) {
		if want[string(l)] {
			out = append(out, l...)
			delete(want, string(l)) // a line given twice is added once
		}
	}
	return out, nil
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
