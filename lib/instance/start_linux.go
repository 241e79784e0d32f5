package instance

import (
	"errors"
	"fmt"
	"os"
	"strings"
)

// processStart returns the start time of process pid (field 22,
// starttime, of /proc/PID/stat) and the boot id.
func processStart(pid int) (start, boot string, err error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return "", "", err
	}
	s := string(data)
	i := strings.LastIndexByte(s, ')') // the command name may hold spaces
	f := strings.Fields(s[i+1:])
	if i < 0 || len(f) < 20 {
		return "", "", errors.New("malformed stat")
	}
	id, _ := os.ReadFile("/proc/sys/kernel/random/boot_id")
	return f[19], strings.TrimSpace(string(id)), nil // fields after ")" start at field 3
}
