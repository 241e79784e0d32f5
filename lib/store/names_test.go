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

// Every machine's global file is of the global scope, and so are its
// carry and claim files; a capture cannot take its name.
func TestGlobalFiles(t *testing.T) {
	for _, name := range []string{GlobalName, "history-global@m1.jsonl", "history-global@m1.jsonl.carry-1-ab.jsonl"} {
		if !IsGlobal(Origin(name)) {
			t.Errorf("IsGlobal(Origin(%q)) = false", name)
		}
	}
	if Classify("history-global@m1.jsonl") != GlobalFile || Classify("history-global-x@m1.jsonl") != Capture {
		t.Error("Classify")
	}
	if ImportLog("pi", "m1") != "import-pi@m1.jsonl" || Classify(ImportLog("pi", "m1")) != Import {
		t.Error("ImportLog")
	}
}
