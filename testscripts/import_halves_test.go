package testscripts

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"hist/lib/record"
	"hist/lib/store"
)

// TestImportInHalves imports each agent's real transcripts (testdata/seed)
// in two halves, as an agent writing them would leave them between two
// runs of hist-seed (each file cut after half its lines and half of the
// next one, imported; then the rest appended, imported again), and requires the
// same store content as importing them whole: every prompt once, with its
// time, source and session, in its project.
func TestImportInHalves(t *testing.T) {
	if BinDir == "" {
		t.Skip("the binaries were not built")
	}
	for _, fx := range []struct{ name, from, dest string }{
		{"pi", "pi", ".pi/agent"},
		{"claude", "claude", ".claude"},
		{"claude-tui", "claude", ".claude"},
		{"codex", "codex", ".codex"},
		{"codex-tui", "codex", ".codex"},
	} {
		t.Run(fx.name, func(t *testing.T) {
			src := filepath.Join("testdata", "seed", fx.name)
			whole := newImportHome(t)
			copyTree(t, src, filepath.Join(whole.home, fx.dest), false)
			whole.seed(t, fx.from)
			want := whole.records(t)
			if len(want) == 0 {
				t.Fatal("the whole import found no prompt")
			}

			halves := newImportHome(t)
			dest := filepath.Join(halves.home, fx.dest)
			copyTree(t, src, dest, true)
			halves.seed(t, fx.from)
			first := halves.records(t)
			copyTree(t, src, dest, false)
			halves.seed(t, fx.from)
			got := halves.records(t)
			if !slices.Equal(got, want) {
				t.Errorf("imported in halves (%d prompts after the first half):\n%s\nwhole:\n%s",
					len(first), strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			t.Logf("%d prompts: %d after the first half, the rest after the second", len(want), len(first))
		})
	}
}

type importHome struct{ home, store string }

func newImportHome(t *testing.T) importHome {
	d := t.TempDir()
	return importHome{home: filepath.Join(d, "home"), store: filepath.Join(d, "store")}
}

func (h importHome) seed(t *testing.T, from string) {
	t.Helper()
	cmd := exec.Command(filepath.Join(BinDir, "hist-seed"), "--store", h.store, "--all-projects", "--from", from, "-q")
	cmd.Env = append(os.Environ(), "HOME="+h.home, "GENTLE_PI_HISTORY_CAPTURE=1", "PI_CODING_AGENT_DIR=",
		"PI_CODING_AGENT_SESSION_DIR=", "CLAUDE_CONFIG_DIR=", "CODEX_HOME=", "GENTLE_PI_CONFIG_HOME=")
	cmd.Dir = h.home
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("hist-seed: %v\n%s", err, out)
	}
}

// records lists every record of the store's project files as "project
// text ts src session", sorted.
func (h importHome) records(t *testing.T) []string {
	t.Helper()
	var out []string
	root := filepath.Join(h.store, store.ProjectsDir)
	if _, err := os.Stat(root); os.IsNotExist(err) {
		return nil
	}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || store.Classify(d.Name()) == store.NotStore {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		project := filepath.Base(filepath.Dir(path))
		_, err = record.Scan(bytes.NewReader(data), func(l *record.Line) error {
			r, err := record.Parse(l.Raw)
			if err != nil {
				return err
			}
			out = append(out, fmt.Sprintf("%s %q %d %s %s", project, r.Text, r.TS, r.Src, r.Session))
			return nil
		})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

// copyTree copies the files under src to dst, whole or their first half.
func copyTree(t *testing.T, src, dst string, half bool) {
	t.Helper()
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		to := filepath.Join(dst, rel)
		if err := os.MkdirAll(filepath.Dir(to), 0o700); err != nil {
			return err
		}
		if half {
			data = firstHalf(data)
		}
		return os.WriteFile(to, data, 0o600)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// firstHalf is data's first half of lines, then half of the next line.
func firstHalf(data []byte) []byte {
	n := bytes.Count(data, []byte("\n"))
	end := 0
	for range (n + 1) / 2 {
		end += bytes.IndexByte(data[end:], '\n') + 1
	}
	next := bytes.IndexByte(data[end:], '\n')
	if next < 0 {
		next = len(data) - end
	}
	return data[:end+next/2]
}
