package claude

import (
	"bytes"
	"os"
	"testing"
)

// lines.go and jsonscan.go are shared with package pi by copy: they must
// not drift apart.
func TestSharedFilesInSync(t *testing.T) {
	for _, name := range []string{"lines.go", "jsonscan.go"} {
		mine, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		theirs, err := os.ReadFile("../pi/" + name)
		if err != nil {
			t.Fatal(err)
		}
		mine = bytes.Replace(mine, []byte("package claude\n"), []byte("package pi\n"), 1)
		if !bytes.Equal(mine, theirs) {
			t.Errorf("%s differs from ../pi/%s (edit one, copy it over, change the package line)", name, name)
		}
	}
}
