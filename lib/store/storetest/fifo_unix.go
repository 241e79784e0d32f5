//go:build unix

package storetest

import "syscall"

// Mkfifo makes a FIFO at path, where the system has them.
func Mkfifo(path string) error { return syscall.Mkfifo(path, 0o600) }
