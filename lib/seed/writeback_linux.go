package seed

import (
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// startWriteback asks the kernel to start writing f's dirty pages to disk
// now, without waiting: the fsync that makes the seed durable then has
// little left to wait for, and the disk works while transcripts are read.
func startWriteback(f *os.File) {
	unix.SyncFileRange(int(f.Fd()), 0, 0, unix.SYNC_FILE_RANGE_WRITE)
}

// setDirect turns direct I/O on or off for f's writes. Turning it on fails
// where the file system has none.
func setDirect(f *os.File, on bool) error {
	fd := int(f.Fd())
	fl, err := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0)
	if err != nil {
		return err
	}
	if on {
		fl |= unix.O_DIRECT
	} else {
		fl &^= unix.O_DIRECT
	}
	_, err = unix.FcntlInt(uintptr(fd), unix.F_SETFL, fl)
	return err
}

// newArena maps n bytes of memory outside the Go heap, at a huge page
// boundary and marked for huge pages (where the kernel gives them only on
// request): a fault per 2 MB instead of one per 4 KB page, and direct
// writes from it pin fewer pages. unmap is what freeArena takes; when
// mapping fails, a is on the heap and unmap is nil.
func newArena(n int) (a, unmap []byte) {
	m, err := unix.Mmap(-1, 0, n+hugePage, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return make([]byte, n), nil
	}
	off := 0
	if r := int(uintptr(unsafe.Pointer(unsafe.SliceData(m))) & (hugePage - 1)); r != 0 {
		off = hugePage - r
	}
	a = m[off : off+n : off+n]
	unix.Madvise(a, unix.MADV_HUGEPAGE) // a hint: without it, small pages
	return a, m
}

// hugePage is the size of a transparent huge page on amd64 and arm64.
const hugePage = 2 << 20

// freeArena unmaps what newArena mapped.
func freeArena(m []byte) { unix.Munmap(m) }

// writev writes pieces with one system call (a direct write takes them as
// one request), and returns how many bytes it wrote.
func writev(f *os.File, pieces [][]byte) (int, error) {
	return unix.Writev(int(f.Fd()), pieces)
}
