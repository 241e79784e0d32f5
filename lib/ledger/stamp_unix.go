//go:build unix

package ledger

import (
	"io/fs"
	"syscall"

	"golang.org/x/sys/unix"
)

// devIno returns the device and inode of fi, or zeros. The transcript
// readers' listings stat with package unix, os.Stat with syscall.
func devIno(fi fs.FileInfo) (dev, ino uint64) {
	switch st := fi.Sys().(type) {
	case *syscall.Stat_t:
		return uint64(st.Dev), uint64(st.Ino)
	case *unix.Stat_t:
		return uint64(st.Dev), uint64(st.Ino)
	}
	return 0, 0
}
