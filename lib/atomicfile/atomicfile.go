// Package atomicfile replaces files atomically: the new content goes to a
// temp file created exclusively in the same folder, is fsynced, renamed over
// the target, and the folder is fsynced. On every failure path the temp
// file is removed and the target is left as it was.
//
// Temp files are named ".<base>.tmp-<pid>-<rand>", so that a later run
// can remove a stale one (its process is gone): IsTemp, Stale.
package atomicfile

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// FilePerm and DirPerm are the store's permissions: private to the user.
const (
	FilePerm os.FileMode = 0o600
	DirPerm  os.FileMode = 0o700
)

const tmpMarker = ".tmp-"

// Pending is a temp file that replaces Path when committed.
type Pending struct {
	*os.File
	Path string
	done bool
}

// Create creates the temp file for path in path's folder.
func Create(path string) (*Pending, error) {
	dir, base := filepath.Split(path)
	for range 100 {
		name := filepath.Join(dir, "."+base+tmpMarker+strconv.Itoa(os.Getpid())+"-"+RandHex(4))
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, FilePerm)
		if errors.Is(err, os.ErrExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		return &Pending{File: f, Path: path}, nil
	}
	return nil, fmt.Errorf("creating a temp file for %s: too many collisions", path)
}

// Commit fsyncs the temp file, renames it over Path and fsyncs the folder.
// After a failed Commit the temp file is gone and Path is untouched.
func (p *Pending) Commit() error {
	if p.done {
		return errors.New("atomicfile: already committed or cleaned up")
	}
	p.done = true
	err := p.File.Sync()
	if cerr := p.File.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(p.File.Name(), p.Path)
	}
	if err != nil {
		os.Remove(p.File.Name())
		return err
	}
	return SyncDir(filepath.Dir(p.Path))
}

// Cleanup closes and removes the temp file unless it was committed. It is
// safe to defer.
func (p *Pending) Cleanup() {
	if p.done {
		return
	}
	p.done = true
	p.File.Close()
	os.Remove(p.File.Name())
}

// WriteFile replaces path with what write writes.
func WriteFile(path string, write func(w io.Writer) error) error {
	p, err := Create(path)
	if err != nil {
		return err
	}
	defer p.Cleanup()
	if err := write(p.File); err != nil {
		return err
	}
	return p.Commit()
}

// WriteBytes replaces path with data.
func WriteBytes(path string, data []byte) error {
	return WriteFile(path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// SyncDir fsyncs a folder so that a rename or create in it is durable.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, syscall.EINVAL) {
		return err
	}
	return nil
}

// ErrNotRegular says a path names something other than a regular file.
var ErrNotRegular = errors.New("not a regular file")

// ReadRegular reads the regular file at path. Anything else (a FIFO, which
// would block the read forever, a device) is refused with an
// *os.PathError wrapping ErrNotRegular (syscall.EISDIR for a folder),
// without reading from it.
func ReadRegular(path string) ([]byte, error) { return ReadLimited(path, math.MaxInt64-1) }

// ErrTooLarge says a file holds more than the reader takes.
var ErrTooLarge = errors.New("larger than expected")

// ReadLimited is ReadRegular for a file that holds at most limit bytes: a
// larger one is refused with an *os.PathError wrapping ErrTooLarge, after
// reading limit+1 bytes at most.
func ReadLimited(path string, limit int64) ([]byte, error) {
	f, err := OpenRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err == nil && int64(len(data)) > limit {
		return nil, &os.PathError{Op: "read", Path: path, Err: ErrTooLarge}
	}
	return data, err
}

// OpenRegular opens the regular file at path for reading, refusing
// anything else as ReadRegular does, without blocking on it.
func OpenRegular(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	switch {
	case err != nil:
	case fi.IsDir():
		err = &os.PathError{Op: "read", Path: path, Err: syscall.EISDIR}
	case !fi.Mode().IsRegular():
		err = &os.PathError{Op: "read", Path: path, Err: ErrNotRegular}
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// IsTemp reports whether name (a base name) is a temp file of this package.
func IsTemp(name string) bool {
	return strings.HasPrefix(name, ".") && strings.Contains(name, tmpMarker)
}

// Stale reports whether the temp file name belongs to a process that no
// longer runs, so that removing it cannot disturb a write in progress.
func Stale(name string) bool {
	i := strings.LastIndex(name, tmpMarker)
	if i < 0 || !IsTemp(name) {
		return false
	}
	digits, _, ok := strings.Cut(name[i+len(tmpMarker):], "-")
	pid, err := strconv.Atoi(digits)
	return ok && err == nil && pid > 0 && pid != os.Getpid() && processGone(pid)
}

// RandHex returns 2n random hex digits, for the store's unique file names.
func RandHex(n int) string {
	b := make([]byte, n)
	rand.Read(b) // never fails (crypto/rand)
	return hex.EncodeToString(b)
}

// WriteNew creates path holding data, never over a file that is there
// (an error wrapping fs.ErrExist then): the file appears whole or not at
// all, a hard link of a complete temp file, so that concurrent creators
// and readers agree on one content.
func WriteNew(path string, data []byte) error {
	p, err := Create(path)
	if err != nil {
		return err
	}
	defer p.Cleanup()
	if _, err := p.Write(data); err != nil {
		return err
	}
	if err := p.Sync(); err != nil {
		return err
	}
	if err := os.Link(p.Name(), path); err != nil {
		return err
	}
	return SyncDir(filepath.Dir(path))
}

// processGone reports whether no process has the id pid; never where that
// cannot be told (Windows): a killed rewrite's temp file stays there
// until it is removed by hand.
func processGone(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	defer p.Release()
	return errors.Is(p.Signal(syscall.Signal(0)), os.ErrProcessDone)
}
