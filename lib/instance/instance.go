// Package instance names capture files: one stable ID per calling agent
// process, so every prompt of one agent process lands in one file.
package instance

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/google/uuid"
)

var namespace = uuid.MustParse("5b0e7a44-33a4-4c52-9d6f-6a0d3c2f1e11")

// ForParent returns a UUID derived from the parent process's pid, its
// start time and the boot id (from /proc), so that every call made by one
// agent process yields the same ID and no other process ever does. Where
// /proc is missing it returns a random UUID.
func ForParent() string {
	ppid := os.Getppid()
	start, err := startTime(ppid)
	if err != nil {
		return uuid.NewString()
	}
	boot, _ := os.ReadFile("/proc/sys/kernel/random/boot_id")
	return uuid.NewSHA1(namespace, fmt.Appendf(nil, "%s/%d/%s", strings.TrimSpace(string(boot)), ppid, start)).String()
}

// ForSession returns a UUID derived from an agent and its session id, for
// captures made by an agent's hook (a new process each prompt).
func ForSession(src, session string) string {
	return uuid.NewSHA1(namespace, []byte(src+"\x00"+session)).String()
}

// startTime reads field 22 (starttime) of /proc/PID/stat.
func startTime(pid int) (string, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return "", err
	}
	s := string(data)
	i := strings.LastIndexByte(s, ')') // the command name may hold spaces
	if i < 0 {
		return "", errors.New("malformed stat")
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 20 {
		return "", errors.New("malformed stat")
	}
	return f[19], nil // fields after ")" start at field 3
}

// Valid reports whether id can name a capture file: letters, digits, ".",
// "_" and "-", not starting with "." or "-", and not a name the store
// reserves (seed, compact, carry and claim files).
func Valid(id string) bool {
	if id == "" || len(id) > 200 || id[0] == '.' || id[0] == '-' {
		return false
	}
	for _, r := range id {
		ok := r == '.' || r == '_' || r == '-' || ('0' <= r && r <= '9') || ('a' <= r && r <= 'z') || ('A' <= r && r <= 'Z')
		if !ok {
			return false
		}
	}
	if id == "seed" || strings.HasPrefix(id, "seed-") || strings.HasPrefix(id, "compact-") ||
		strings.Contains(id, ".gc-") || strings.Contains(id, ".carry-") || id == "history-global" {
		return false
	}
	return true
}
