package testscripts

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestFuzzingDocNamesTargets: docs/fuzzing.md names every fuzz target in
// its Targets table, and names no target that does not exist.
func TestFuzzingDocNamesTargets(t *testing.T) {
	root := repoRoot(t)
	doc, err := os.ReadFile(filepath.Join(root, "docs", "fuzzing.md"))
	if err != nil {
		t.Fatal(err)
	}
	name := regexp.MustCompile(`\bFuzz[A-Z]\w*`)
	decl := regexp.MustCompile(`(?m)^func (Fuzz[A-Z]\w*)\(`)
	have := map[string]string{} // target -> a file declaring it
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); p != root && (strings.HasPrefix(n, ".") || n == "testdata" || n == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, m := range decl.FindAllSubmatch(b, -1) {
			have[string(m[1])], _ = filepath.Rel(root, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(have) == 0 {
		t.Fatal("no fuzz targets found under " + root)
	}
	text := string(doc)
	for i, l := range strings.Split(text, "\n") {
		for _, n := range name.FindAllString(l, -1) {
			if _, ok := have[n]; !ok {
				t.Errorf("docs/fuzzing.md:%d names %s, which no test file declares", i+1, n)
			}
		}
	}
	_, targets, ok := strings.Cut(text, "\n## Targets\n")
	if !ok {
		t.Fatal(`docs/fuzzing.md has no "## Targets" section`)
	}
	if j := strings.Index(targets, "\n## "); j >= 0 {
		targets = targets[:j]
	}
	listed := name.FindAllString(targets, -1)
	var missing []string
	for n, f := range have {
		if !slices.Contains(listed, n) {
			missing = append(missing, n+" ("+f+")")
		}
	}
	slices.Sort(missing)
	for _, m := range missing {
		t.Errorf("docs/fuzzing.md's Targets table does not name %s", m)
	}
}
