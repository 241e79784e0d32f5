// Package instance names capture files: one stable ID per calling agent
// process, so every prompt of one agent process lands in one file.
package instance

import (
	"crypto/rand"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"os"
)

// namespace is the name-based UUIDs' namespace,
// 5b0e7a44-33a4-4c52-9d6f-6a0d3c2f1e11.
var namespace = [16]byte{0x5b, 0x0e, 0x7a, 0x44, 0x33, 0xa4, 0x4c, 0x52, 0x9d, 0x6f, 0x6a, 0x0d, 0x3c, 0x2f, 0x1e, 0x11}

// nameUUID is the RFC 9562 version 5 UUID of name in namespace (what
// github.com/google/uuid's NewSHA1 makes, without the package: it links
// the net package, and with it cgo and the dynamic loader, into
// hist-capture, which runs once per prompt).
func nameUUID(name []byte) string {
	h := sha1.New()
	h.Write(namespace[:])
	h.Write(name)
	var u [16]byte
	copy(u[:], h.Sum(nil))
	u[6] = u[6]&0x0f | 0x50
	u[8] = u[8]&0x3f | 0x80
	return format(u)
}

// randomUUID is a version 4 UUID.
func randomUUID() string {
	var u [16]byte
	rand.Read(u[:])
	u[6] = u[6]&0x0f | 0x40
	u[8] = u[8]&0x3f | 0x80
	return format(u)
}

func format(u [16]byte) string {
	var b [36]byte
	hex.Encode(b[0:8], u[0:4])
	b[8] = '-'
	hex.Encode(b[9:13], u[4:6])
	b[13] = '-'
	hex.Encode(b[14:18], u[6:8])
	b[18] = '-'
	hex.Encode(b[19:23], u[8:10])
	b[23] = '-'
	hex.Encode(b[24:], u[10:])
	return string(b[:])
}

// ForParent returns a UUID derived from the parent process's pid, its
// start time and the time (or id) of the boot, so that every call made by
// one agent process yields the same ID and no other process ever does.
// Linux reads them from /proc, macOS from sysctl; where they cannot be
// read it returns a random UUID.
func ForParent() string {
	ppid := os.Getppid()
	start, boot, err := processStart(ppid)
	if err != nil {
		return randomUUID()
	}
	return nameUUID(fmt.Appendf(nil, "%s/%d/%s", boot, ppid, start))
}

// ForSession returns a UUID derived from an agent and its session id, for
// captures made by an agent's hook (a new process each prompt).
func ForSession(src, session string) string {
	return nameUUID([]byte(src + "\x00" + session))
}
