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
	deadline := time.Now().Add(wait)
	delay := 2 * time.Millisecond
	for {
		err := tryLock(f, true)
		if err == nil {
			return &Lock{f: f}, nil
		}
		if err != errBusy {
			f.Close()
			return nil, fmt.Errorf("locking %s: %w", path, err)
		}
		if time.Now().After(deadline) {
			f.Close()
			return nil, ErrTimeout
		}
		time.Sleep(delay)
		delay = min(delay*2, 100*time.Millisecond)
	}
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

// Held reports whether a rewriter holds the lock at path now (a reader
// never takes it: it only asks).
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
