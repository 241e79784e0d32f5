package instance

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// processStart returns the start time of process pid and the boot time,
// from sysctl (kern.proc.pid and kern.boottime).
func processStart(pid int) (start, boot string, err error) {
	kp, err := unix.SysctlKinfoProc("kern.proc.pid", pid)
	if err != nil {
		return "", "", err
	}
	bt, err := unix.SysctlTimeval("kern.boottime")
	if err != nil {
		return "", "", err
	}
	t := kp.Proc.P_starttime
	return fmt.Sprintf("%d.%06d", t.Sec, t.Usec), fmt.Sprintf("%d.%06d", bt.Sec, bt.Usec), nil
}
