package hugepages

import (
	"bytes"
	"os"
	"runtime"
	"runtime/debug"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// hugePage is the size of a transparent huge page on amd64 and arm64 (with
// 4 KB base pages).
const hugePage = 2 << 20

// modeFile says which of always, madvise or never is in force, in brackets.
var modeFile = "/sys/kernel/mm/transparent_hugepage/enabled"

func forHeap(n int) {
	if n < 2*hugePage || !onRequest() || !roomFor(n) {
		return
	}
	b := make([]byte, n) // fresh pages from the kernel: not written to
	// From the huge page b starts in (the heap below b is mapped too) to
	// the last whole one in b.
	base := uintptr(unsafe.Pointer(&b[0]))
	beg := base &^ (hugePage - 1)
	end := (base + uintptr(n)) &^ (hugePage - 1)
	// A kernel without huge pages says EINVAL: the heap stays as it was.
	_, _, _ = syscall.Syscall(syscall.SYS_MADVISE, beg, end-beg, unix.MADV_HUGEPAGE)
	runtime.KeepAlive(b)
	b = nil
	// Collect b and give its pages back to the kernel at once (untouched,
	// they cost nothing), rather than have the memory limit do it bit by bit.
	debug.FreeOSMemory()
}

// onRequest reports whether the kernel gives huge pages to the memory that
// asks for them, and only to it.
func onRequest() bool {
	b, err := os.ReadFile(modeFile)
	return err == nil && bytes.Contains(b, []byte("[madvise]"))
}

// roomFor reports whether n more bytes of address space are sure not to
// hit RLIMIT_AS (where the runtime would stop the program, not fail the
// allocation).
func roomFor(n int) bool {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_AS, &lim); err != nil {
		return false
	}
	return lim.Cur == unix.RLIM_INFINITY || lim.Cur >= 1<<40
}
