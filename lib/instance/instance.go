// Package instance names capture files: one stable ID per calling agent
// process, so every prompt of one agent process lands in one file.
package instance

import (
	"fmt"
	"os"

	"github.com/google/uuid"
)

// namespace is the name-based UUIDs' namespace.
var namespace = uuid.MustParse("5b0e7a44-33a4-4c52-9d6f-6a0d3c2f1e11")

// ForParent returns a UUID derived from the parent process's pid, its
// start time and the boot's time or id (/proc, sysctl), so that every call
// made by one agent process yields the same ID and no other process ever
// does; a random UUID where they cannot be read.
func ForParent() string {
	ppid := os.Getppid()
	start, boot, err := processStart(ppid)
	if err != nil {
		return uuid.NewString()
	}
	return uuid.NewSHA1(namespace, fmt.Appendf(nil, "%s/%d/%s", boot, ppid, start)).String()
}

// ForSession returns a UUID derived from an agent and its session id, for
// captures made by an agent's hook (a new process each prompt).
func ForSession(src, session string) string {
	return uuid.NewSHA1(namespace, []byte(src+"\x00"+session)).String()
}
