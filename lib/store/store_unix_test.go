//go:build unix

package store

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// Open reads a regular file, and refuses a folder and a FIFO without
// blocking on the FIFO (no writer ever opens it here).
func TestOpen(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "a.jsonl")
	if err := os.WriteFile(p, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := Open(p)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if _, err := Open(dir); err == nil {
		t.Error("opened a folder")
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := Open(fifo)
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil {
			t.Error("opened a FIFO")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Open blocked on a FIFO for 10 s")
	}
}
