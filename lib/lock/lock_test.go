package lock

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestAcquire(t *testing.T) {
	p := filepath.Join(t.TempDir(), "store", ".rewrite.lock")
	l, err := Acquire(p, 0)
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(filepath.Dir(p)); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("lock folder: %v %v", fi.Mode(), err)
	}
	// A second holder (its own open file description) waits, then times out.
	start := time.Now()
	if _, err := Acquire(p, 30*time.Millisecond); !errors.Is(err, ErrTimeout) {
		t.Fatalf("second Acquire = %v, want ErrTimeout", err)
	}
	if d := time.Since(start); d < 30*time.Millisecond {
		t.Errorf("gave up after %v", d)
	}
	// Released while another waits: the waiter gets it.
	done := make(chan error, 1)
	go func() {
		l2, err := Acquire(p, 5*time.Second)
		if err == nil {
			l2.Release()
		}
		done <- err
	}()
	time.Sleep(20 * time.Millisecond)
	l.Release()
	if err := <-done; err != nil {
		t.Errorf("waiter: %v", err)
	}
	l.Release() // twice is harmless
	var nilLock *Lock
	nilLock.Release()
}

func TestAcquireUnderAFile(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "file"), nil, 0o600)
	if _, err := Acquire(filepath.Join(dir, "file", ".rewrite.lock"), 0); err == nil {
		t.Error("locked under a file")
	}
}
