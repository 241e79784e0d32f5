package words

import (
	"errors"
	"fmt"
	"os"
	"syscall"
	"testing"
)

func TestPlural(t *testing.T) {
	for n, want := range map[int]string{0: "0 entries", 1: "1 entry", 2: "2 entries"} {
		if got := Plural(n, "entry", "entries"); got != want {
			t.Errorf("Plural(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestDescribe(t *testing.T) {
	_, err := os.Open("/nonexistent/x")
	if got := Describe(err); got != "no such file or directory" {
		t.Errorf("PathError: %q", got)
	}
	err = os.Rename("/nonexistent/a", "/nonexistent/b")
	if got := Describe(err); got != "no such file or directory" {
		t.Errorf("LinkError: %q", got)
	}
	if got := Describe(fmt.Errorf("reading: %w", syscall.EISDIR)); got != "is a directory" {
		t.Errorf("EISDIR: %q", got)
	}
	if got := Describe(errors.New("plain")); got != "plain" {
		t.Errorf("plain: %q", got)
	}
}
