//go:build !linux

package seed

import (
	"errors"
	"os"
)

// startWriteback does nothing where sync_file_range is missing: the fsync
// before the rename does all the work.
func startWriteback(*os.File) {}

// setDirect fails to turn direct I/O on: the page cache is used.
func setDirect(_ *os.File, on bool) error {
	if on {
		return errors.New("no direct I/O here")
	}
	return nil
}

// newArena allocates n bytes on the heap (nothing to unmap).
func newArena(n int) (a, unmap []byte) { return make([]byte, n), nil }

// freeArena is never called here.
func freeArena([]byte) {}

// writev writes pieces one after the other.
func writev(f *os.File, pieces [][]byte) (int, error) {
	n := 0
	for _, p := range pieces {
		m, err := f.Write(p)
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}
