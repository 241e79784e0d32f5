// Package storetest holds what the tests of several packages do to a
// store from outside. Only tests import it.
package storetest

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// Replace replaces the file at path with data again and again, as
// Syncthing's puller does: data written to ".syncthing.<name>.tmp" beside
// it, the file removed, then, 20 ms later, the temp file renamed into
// place, and again 7 ms after that (the file is gone 20 ms of every 27).
// It stops when the test ends, and fails the test if a step fails.
func Replace(t testing.TB, path string, data []byte) {
	t.Helper()
	temp := filepath.Join(filepath.Dir(path), ".syncthing."+filepath.Base(path)+".tmp")
	stop := make(chan struct{})
	done := make(chan error)
	go func() {
		for {
			select {
			case <-stop:
				done <- nil
				return
			default:
			}
			err := os.WriteFile(temp, data, 0o600)
			if err == nil {
				os.Remove(path)
				time.Sleep(20 * time.Millisecond)
				err = os.Rename(temp, path)
			}
			if err != nil {
				done <- err
				return
			}
			time.Sleep(7 * time.Millisecond)
		}
	}()
	t.Cleanup(func() {
		close(stop)
		if err := <-done; err != nil {
			t.Errorf("replacing %s: %v", path, err)
		}
	})
}
