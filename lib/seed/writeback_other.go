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
