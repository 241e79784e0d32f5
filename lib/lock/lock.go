// Package lock serialises the store's rewriters (delete, compact, seed)
// against each other with an advisory flock on one file. Captures never
// take it: appends never wait. The kernel drops the lock when its process
// dies, so a killed rewriter never leaves the store locked.
package lock

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"hist/lib/atomicfile"
)

// Lock is a held lock.
type Lock struct{ f *os.File }

// ErrTimeout says another rewriter held the lock for the whole wait.
var ErrTimeout = errors.New("another hist rewrite (delete, compact or seed) is still running")

// Acquire takes the exclusive lock at path, waiting up to wait.
func Acquire(path string, wait time.Duration) (*Lock, error) {
	if err := os.MkdirAll(filepath.Dir(path), atomicfile.DirPerm); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, atomicfile.FilePerm)
	if err != nil {
		return nil, err
	}
	if err := wait1(f, wait, 100*time.Millisecond); err != nil {
		f.Close()
		if err != ErrTimeout {
			err = fmt.Errorf("locking %s: %w", path, err)
		}
		return nil, err
	}
	return &Lock{f: f}, nil
}

// wait1 takes f's exclusive lock, trying again at growing intervals (up
// to most) for up to wait: ErrTimeout when another process held it all
// along.
func wait1(f *os.File, wait, most time.Duration) error {
	deadline := time.Now().Add(wait)
	for delay := time.Millisecond; ; delay = min(delay*2, most) {
		err := tryLock(f, true)
		if err != errBusy {
			return err
		}
		if time.Now().After(deadline) {
			return ErrTimeout
		}
		time.Sleep(delay)
	}
}

// File takes an exclusive lock on the open file f, waiting up to wait,
// and returns its release (store.AppendMissing).
func File(f *os.File, wait time.Duration) (release func(), err error) {
	if err := wait1(f, wait, 10*time.Millisecond); err != nil {
		return nil, err
	}
	return func() { unlock(f) }, nil
}

// Release drops the lock.
func (l *Lock) Release() {
	if l == nil || l.f == nil {
		return
	}
	unlock(l.f)
	l.f.Close()
	l.f = nil
}

// Held reports whether a rewriter holds the lock at path now; a reader
// only asks, never takes it.
func Held(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	err = tryLock(f, false)
	if err == nil {
		unlock(f)
	}
	return err == errBusy
}

// errBusy says another process holds the lock.
var errBusy = errors.New("locked by another process")

// WaitFree waits until no rewriter holds the lock at path, or deadline.
func WaitFree(path string, deadline time.Time) {
	for Held(path) && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
}
