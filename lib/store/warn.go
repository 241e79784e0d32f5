package store

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"hist/lib/termsafe"
)

// Warnings go to WarnTo (stderr; tests change it).
var WarnTo io.Writer = os.Stderr

var warned sync.Map

// Warn says on stderr, once per key in a process, what a command works
// around in the store (a peer file over its size limit, skipped), as
// "<command>: warning: …", escaped on a terminal (termsafe).
func Warn(key, format string, args ...any) {
	if _, done := warned.LoadOrStore(key, true); done {
		return
	}
	fmt.Fprintf(WarnTo, "%s: warning: %s\n", filepath.Base(os.Args[0]), termsafe.Message(WarnTo, fmt.Sprintf(format, args...)))
}

// SyncTempAge is how long a temp file of Syncthing's says that Syncthing
// is writing its file: an older one is from a transfer that stopped.
const SyncTempAge = time.Minute

// SyncTempFresh reports whether e, a temp file of Syncthing's, changed
// less than SyncTempAge ago, or is gone already (renamed into place).
func SyncTempFresh(e os.DirEntry) bool {
	fi, err := e.Info()
	return err != nil || time.Since(fi.ModTime()) < SyncTempAge
}
