package instance

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/google/uuid"
)

func TestForParent(t *testing.T) {
	a, b := ForParent(), ForParent()
	if a != b {
		t.Errorf("ForParent not stable in one process: %s %s", a, b)
	}
	u, err := uuid.Parse(a)
	if err != nil || !Valid(a) {
		t.Fatalf("%q is not a valid instance UUID: %v", a, err)
	}
	if _, err := os.Stat("/proc/self/stat"); err == nil && u.Version() != 5 {
		t.Errorf("with /proc the ID is derived (v5), got v%d", u.Version())
	}
}

// TestSameAsLibrary: the IDs are the ones github.com/google/uuid makes, so
// files named by earlier builds keep their names.
func TestSameAsLibrary(t *testing.T) {
	ns := uuid.MustParse("5b0e7a44-33a4-4c52-9d6f-6a0d3c2f1e11")
	for _, name := range []string{"", "claude\x00s1", "boot/123/456", strings.Repeat("x", 1000)} {
		if got, want := nameUUID([]byte(name)), uuid.NewSHA1(ns, []byte(name)).String(); got != want {
			t.Errorf("nameUUID(%q) = %s, want %s", name, got, want)
		}
	}
	r := randomUUID()
	u, err := uuid.Parse(r)
	if err != nil || u.Version() != 4 || u.Variant() != uuid.RFC4122 || r == randomUUID() {
		t.Errorf("randomUUID() = %s (%v)", r, err)
	}
}

func TestForSession(t *testing.T) {
	a := ForSession("claude", "s1")
	if a != ForSession("claude", "s1") || a == ForSession("cursor", "s1") || a == ForSession("claude", "s2") || !Valid(a) {
		t.Errorf("ForSession: %s", a)
	}
	// The separator keeps ("a","bc") and ("ab","c") apart.
	if ForSession("a", "bc") == ForSession("ab", "c") {
		t.Error("ambiguous session IDs")
	}
}

func TestStartTime(t *testing.T) {
	st, err := startTime(os.Getpid())
	if _, serr := os.Stat("/proc/self/stat"); serr != nil {
		t.Skip("no /proc")
	}
	if err != nil || !regexp.MustCompile(`^[0-9]+$`).MatchString(st) {
		t.Errorf("startTime = %q, %v", st, err)
	}
	if _, err := startTime(-1); err == nil {
		t.Error("startTime(-1) succeeded")
	}
}

func TestValid(t *testing.T) {
	for _, id := range []string{"a", "pi-123", "0b1c2d3e-aaaa-5bbb-8ccc-0123456789ab", "x.y_z", "seedling", "compact", "A9"} {
		if !Valid(id) {
			t.Errorf("Valid(%q) = false", id)
		}
	}
	for _, id := range []string{"", ".x", "-x", "a/b", "..", "a b", "é", "seed", "seed-pi", "compact-1-2", "a.gc-1-2",
		"a.carry-1-2", "history-global", strings.Repeat("a", 201), "a\x00", "a\n"} {
		if Valid(id) {
			t.Errorf("Valid(%q) = true", id)
		}
	}
}
