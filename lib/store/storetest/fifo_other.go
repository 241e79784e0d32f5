//go:build !unix

package storetest

import "errors"

// Mkfifo makes a FIFO at path, where the system has them.
func Mkfifo(string) error { return errors.New("no FIFO on this system") }
