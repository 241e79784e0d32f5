package testscripts

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"hist/internal/testbin"
)

// repoRoot is the module's root folder.
func repoRoot(t *testing.T) string {
	t.Helper()
	return testbin.Root()
}

// TestReadmeInstallLines runs the first command of every row of README's
// integration table in a fresh HOME, as a newcomer pastes it, and checks
// that each one succeeds and leaves its file in place.
func TestReadmeInstallLines(t *testing.T) {
	root := repoRoot(t)
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile("(?m)^\\| [^|]+ \\| [^|]+ \\| `([^`]*cp scripts/[^`]*)`")
	rows := row.FindAllSubmatch(readme, -1)
	if len(rows) < 3 {
		t.Fatalf("README's integration table has %d install commands; expected the table with one per agent", len(rows))
	}
	for _, r := range rows {
		line := string(r[1])
		t.Run(line, func(t *testing.T) {
			home := t.TempDir()
			cmd := exec.Command("sh", "-c", line)
			cmd.Dir = root
			cmd.Env = append(os.Environ(), "HOME="+home)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("%s: %v\n%s", line, err, out)
			}
			// The file copied is the last word that names a file under scripts/.
			var src string
			for _, w := range strings.Fields(line) {
				if strings.HasPrefix(w, "scripts/") {
					src = w
				}
			}
			found := false
			filepath.WalkDir(home, func(p string, d os.DirEntry, err error) error {
				if err == nil && !d.IsDir() && d.Name() == filepath.Base(src) {
					found = true
				}
				return nil
			})
			if !found {
				t.Errorf("%s: no %s under the fresh HOME", line, filepath.Base(src))
			}
		})
	}
}

// TestDocsOwnWords: README and docs/ state behaviour in the project's own
// words; they do not refer to a document that is not in the repository.
func TestDocsOwnWords(t *testing.T) {
	root := repoRoot(t)
	files, _ := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	files = append(files, filepath.Join(root, "README.md"))
	bad := regexp.MustCompile(`(?i)\bthe spec\b|\bspec's\b|\bPoint [0-9]+\b`)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, l := range strings.Split(string(b), "\n") {
			if m := bad.FindString(l); m != "" {
				rel, _ := filepath.Rel(root, f)
				t.Errorf("%s:%d says %q: say it in the project's words or link docs/", rel, i+1, m)
			}
		}
	}
}

// TestQuickstartSaysFirstBuildIsSlow: the first `go install` compiles for
// minutes; the script says so before it starts.
func TestQuickstartSaysFirstBuildIsSlow(t *testing.T) {
	root := repoRoot(t)
	bin := t.TempDir()
	// A go that fails at once: the notice must come before it is run.
	stub := "#!/bin/sh\necho go-called >&2\nexit 3\n"
	if err := os.WriteFile(filepath.Join(bin, "go"), []byte(stub), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("bash", filepath.Join(root, "scripts", "quickstart.sh"))
	cmd.Env = append(os.Environ(), "PATH="+bin+":/usr/bin:/bin", "HOME="+t.TempDir())
	out, _ := cmd.CombinedOutput()
	s := string(out)
	i := strings.Index(s, "go-called")
	if i < 0 {
		t.Fatalf("quickstart did not run go:\n%s", s)
	}
	if !regexp.MustCompile(`(?i)first build.*minutes`).MatchString(s[:i]) {
		t.Errorf("quickstart runs go without saying the first build takes a few minutes:\n%s", s)
	}
}

// TestReadmeDeleteExample runs README's "delete what you listed" line, as
// written, on a store where a prompt held a secret (stored redacted) and
// checks that it deletes that prompt and only it.
func TestReadmeDeleteExample(t *testing.T) {
	root := repoRoot(t)
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^(hist-list [^\n#]*\| hist-delete --all --stdin)\s*#`).FindSubmatch(readme)
	if m == nil {
		t.Fatal("README has no hist-list | ... | hist-delete --all --stdin example")
	}
	line := strings.TrimSpace(string(m[1]))
	home := t.TempDir()
	env := append(os.Environ(), "HOME="+home, "PATH="+BinDir+":"+os.Getenv("PATH"),
		"GENTLE_PI_HISTORY_CAPTURE=1", "GENTLE_PI_HISTORY_REDACT=")
	run := func(script string) string {
		t.Helper()
		cmd := exec.Command("bash", "-c", script)
		cmd.Dir = home
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", script, err, out)
		}
		return string(out)
	}
	run(`hist-capture 'push with AKIAIOSFODNN7EXAMPLE to the bucket' && hist-capture 'fix the flaky test'`)
	if out := run(`hist-list --all`); !strings.Contains(out, "[REDACTED:") {
		t.Fatalf("the key was not redacted:\n%s", out)
	}
	run(line)
	out := run(`hist-list --all`)
	if strings.Contains(out, "bucket") || !strings.Contains(out, "fix the flaky test") {
		t.Errorf("after README's %q the store lists:\n%s", line, out)
	}
}

// TestCIRunsReadmeCommands: .ci/run runs exactly the commands README's
// "Tests" section gives, and README names every package .ci/run installs.
func TestCIRunsReadmeCommands(t *testing.T) {
	root := repoRoot(t)
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	ci, err := os.ReadFile(filepath.Join(root, ".ci", "run"))
	if err != nil {
		t.Fatal(err)
	}
	sec := string(readme)
	i := strings.Index(sec, "\n## Tests\n")
	if i < 0 {
		t.Fatal(`README has no "## Tests" section`)
	}
	sec = sec[i+1:]
	if j := strings.Index(sec[1:], "\n## "); j >= 0 {
		sec = sec[:j+1]
	}
	block := regexp.MustCompile("(?s)```sh\n(.*?)```").FindStringSubmatch(sec)
	if block == nil {
		t.Fatal("README's Tests section has no sh block of commands")
	}
	var want []string
	for _, l := range strings.Split(block[1], "\n") {
		if l, _, _ = strings.Cut(l, "#"); strings.TrimSpace(l) != "" {
			want = append(want, strings.TrimSpace(l))
		}
	}
	_, cmds, ok := strings.Cut(string(ci), "# README's test commands:\n")
	if !ok {
		t.Fatal(`.ci/run has no "# README's test commands:" line`)
	}
	var got []string
	for _, l := range strings.Split(cmds, "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			got = append(got, l)
		}
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf(".ci/run runs:\n%s\nREADME's Tests section gives:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, m := range regexp.MustCompile(`need\+=\(([a-z0-9-]+)\)`).FindAllStringSubmatch(string(ci), -1) {
		if !strings.Contains(sec, m[1]) {
			t.Errorf(".ci/run installs %s, which README's Tests section does not name", m[1])
		}
	}
}
