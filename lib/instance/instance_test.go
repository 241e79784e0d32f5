package instance

import (
	"os"
	"regexp"
	"runtime"
	"testing"

	"github.com/google/uuid"
)

func TestForParent(t *testing.T) {
	a, b := ForParent(), ForParent()
	if a != b {
		t.Errorf("ForParent not stable in one process: %s %s", a, b)
	}
	u, err := uuid.Parse(a)
	if err != nil || a == "" {
		t.Fatalf("%q is not a valid instance UUID: %v", a, err)
	}
	if _, err := os.Stat("/proc/self/stat"); err == nil && u.Version() != 5 {
		t.Errorf("with /proc the ID is derived (v5), got v%d", u.Version())
	}
}

func TestForSession(t *testing.T) {
	a := ForSession("claude", "s1")
	// The ID of a session never changes: its capture file keeps its name.
	if a != "f2cb22dd-9e74-565f-88a6-b9727a99861c" {
		t.Errorf("ForSession(claude, s1) = %s", a)
	}
	if a != ForSession("claude", "s1") || a == ForSession("cursor", "s1") || a == ForSession("claude", "s2") {
		t.Errorf("ForSession: %s", a)
	}
	// The separator keeps ("a","bc") and ("ab","c") apart.
	if ForSession("a", "bc") == ForSession("ab", "c") {
		t.Error("ambiguous session IDs")
	}
}

// On Linux and macOS a process's start and the boot are known, and the
// same at every call: the parent's id is stable without /proc on macOS.
func TestProcessStart(t *testing.T) {
	start, boot, err := processStart(os.Getpid())
	if runtime.GOOS != "linux" && runtime.GOOS != "darwin" {
		if err == nil {
			t.Errorf("processStart on %s = %q, %q", runtime.GOOS, start, boot)
		}
		t.Skip("no process start time on " + runtime.GOOS)
	}
	if err != nil || !regexp.MustCompile(`^[0-9]+(\.[0-9]{6})?$`).MatchString(start) || boot == "" {
		t.Fatalf("processStart = %q, %q, %v", start, boot, err)
	}
	if s2, b2, _ := processStart(os.Getpid()); s2 != start || b2 != boot {
		t.Errorf("processStart changed: %q %q, then %q %q", start, boot, s2, b2)
	}
	if _, _, err := processStart(-1); err == nil {
		t.Error("processStart(-1) succeeded")
	}
}
