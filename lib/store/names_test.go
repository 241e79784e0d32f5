package store

import (
	"strings"
	"testing"
)

func TestValidInstance(t *testing.T) {
	for _, id := range []string{"a", "pi-123", "0b1c2d3e-aaaa-5bbb-8ccc-0123456789ab", "x.y_z", "seedling", "compact", "importer", "x.sync-conflict", "A9"} {
		if !ValidInstance(id) {
			t.Errorf("ValidInstance(%q) = false", id)
		}
	}
	for _, id := range []string{"", ".x", "-x", "a/b", "..", "a b", "é", "seed", "seed-pi", "seed@m", "import-x", "import-claude-1-2", "compact-1-2", "a.gc-1-2",
		"a.carry-1-2", "history-global", strings.Repeat("a", 201), "a\x00", "a\n"} {
		if ValidInstance(id) {
			t.Errorf("ValidInstance(%q) = true", id)
		}
	}
}
