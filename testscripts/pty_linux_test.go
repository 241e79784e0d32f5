package testscripts

import (
	"errors"
	"os"
	"strconv"
	"syscall"
	"unsafe"

	"github.com/rogpeppe/go-internal/testscript"
)

// openPty opens a pseudo terminal pair; the script fails when it cannot.
func openPty(ts *testscript.TestScript) (master, slave *os.File) {
	master, slave, err := openPtyLinux()
	if err != nil {
		ts.Fatalf("opening a pseudo terminal: %v", err)
	}
	return master, slave
}

func openPtyLinux() (master, slave *os.File, err error) {
	master, err = os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		return nil, nil, err
	}
	var unlock int32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, master.Fd(), syscall.TIOCSPTLCK, uintptr(unsafe.Pointer(&unlock))); e != 0 {
		master.Close()
		return nil, nil, e
	}
	var n uint32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, master.Fd(), syscall.TIOCGPTN, uintptr(unsafe.Pointer(&n))); e != 0 {
		master.Close()
		return nil, nil, e
	}
	slave, err = os.OpenFile("/dev/pts/"+strconv.Itoa(int(n)), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		master.Close()
		return nil, nil, errors.Join(err, errors.New("no pseudo terminals here"))
	}
	return master, slave, nil
}
