package integrations

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestSameAsScripts: the copies under scripts/, which the documentation
// tells people to copy by hand, are byte for byte the embedded ones.
func TestSameAsScripts(t *testing.T) {
	for name, c := range map[string]struct {
		file     string
		embedded []byte
	}{
		"scripts/pi/hist.ts":                   {"hist.ts", PiExtension},
		"scripts/opencode/hist.js":             {"hist.js", OpencodePlugin},
		"scripts/cursor/hooks/hist-capture.sh": {"hist-capture.sh", CursorHook},
	} {
		data, err := os.ReadFile(filepath.Join("..", "..", filepath.FromSlash(name)))
		if err != nil {
			t.Fatal(err)
		}
		if len(c.embedded) == 0 || !bytes.Equal(data, c.embedded) {
			t.Errorf("%s differs from lib/integrations/%s, the copy hist-capture --install writes: change both the same way (cp lib/integrations/%s %s)",
				name, c.file, c.file, name)
		}
	}
}
