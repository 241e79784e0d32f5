//go:build unix

package testscripts

import (
	"os"
	"syscall"
)

func delInode(fi os.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return st.Ino
	}
	return 0
}
