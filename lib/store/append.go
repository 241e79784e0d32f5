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

// maxReappends bounds how often Append follows a file that was renamed
// away under it; each rename is a rewrite that finished, so a handful is
// plenty.
const maxReappends = 8

// Append appends one complete record line (ending in "\n") to the file at
// path with a single O_APPEND write, creating the file (0600) and its
// folders (0700) as needed. On the usual path it takes no lock and waits
// for nothing.
//
// If the file does not end with a newline (a torn line from a process that
// died mid-write), the record starts on a fresh line so it cannot glue
// onto the torn one.
//
// After the write it checks that path still names the file written to. A
// delete may have renamed its new file over it between the open and the
// stat; then the record may or may not be among the lines the delete
// carries over to the new file, so it is added by AppendMissing: only if
// the new file does not hold it already. No timing of a rename loses the
// record or stores it twice. (A compaction's claim is another file: the
// compact file and a fresh file under the old name may then both hold it,
// and the next compaction merges them into one.)
func Append(path string, line []byte) error {
	moved, err := appendOnce(path, line, false)
	for range maxReappends {
		if err != nil || !moved {
			return err
		}
		moved, err = appendOnce(path, line, true)
	}
	return err
}

// AppendMissing appends to the file at path those of lines (complete
// lines, each ending in "\n") that it does not hold already, with one
// O_APPEND write, under the file's lock (lock.File): a delete putting
// back the lines that reached the old file after its rename and a writer
// adding its record again never both add it.
func AppendMissing(path string, lines []byte) error {
	for range maxReappends {
		moved, err := appendOnce(path, lines, true)
		if err != nil || !moved {
			return err
		}
	}
	return nil
}

// lockWait bounds how long AppendMissing waits for the file's lock, which
// is held only while a few lines are read and written.
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
