// Package testscripts runs the txtar scripts in this folder against the
// real hist binaries: TestMain builds every command under cmd/ once into a
// folder put first on PATH, so a script (and any shell it starts) runs
// "hist-list" as the binary a user installs.
package testscripts

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"hist/internal/testbin"
)

// Commands are the binaries under cmd/.
var Commands = []string{"hist-capture", "hist-list", "hist-delete", "hist-compact", "hist-seed", "hist-pick", "hist-stats"}

// BinDir is where TestMain built the binaries.
var BinDir string

// cmds holds the scripts' custom commands; each cmds_*_test.go file adds
// its own in an init function.
var cmds = map[string]func(ts *testscript.TestScript, neg bool, args []string){}

// binDirVar names the folder of the built binaries in a script's
// environment.
const binDirVar = "HIST_TEST_BINDIR"

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "hist-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	BinDir = dir
	os.Setenv(binDirVar, dir)
	// The binaries themselves, not the test binary standing in for them
	// (testscript.Main's commands): a command run costs one process start,
	// not two, which is a third of this package's time.
	os.Setenv("PATH", dir+string(filepath.ListSeparator)+os.Getenv("PATH"))
	if err := testbin.Build(dir); err != nil {
		// Build the commands one by one so that one broken command does
		// not stop the scripts of the others; TestBuild reports it.
		buildErr = err
		for _, c := range Commands {
			if _, err := os.Stat(filepath.Join(testbin.Root(), "cmd", c)); err != nil {
				continue // not written yet
			}
			if err := testbin.Build(dir, c); err != nil {
				fmt.Fprintln(os.Stderr, err)
			}
		}
	}
	testscript.Main(removeAfter{m, dir}, nil)
}

// removeAfter runs the tests, then removes the binaries' folder
// (testscript.Main exits, so a deferred call would never run).
type removeAfter struct {
	m   *testing.M
	dir string
}

func (r removeAfter) Run() int {
	code := r.m.Run()
	os.RemoveAll(r.dir)
	return code
}

// buildErr is why building every command at once failed.
var buildErr error

// TestBuild fails when some command under cmd/ does not build.
func TestBuild(t *testing.T) {
	if buildErr != nil {
		t.Fatal(buildErr)
	}
}

// Setup gives every script a private HOME and the binaries' folder.
func Setup(env *testscript.Env) error {
	work := env.Getenv("WORK")
	home := filepath.Join(work, "home")
	if err := os.MkdirAll(home, 0o755); err != nil {
		return err
	}
	env.Setenv("HOME", home)
	env.Setenv(binDirVar, BinDir)
	env.Setenv("STORE", filepath.Join(home, ".pi", "agent", "history"))
	env.Setenv("CONFIG", filepath.Join(home, ".pi", "gentle-ai"))
	// One machine id for every script, so store file names are known
	// (docs/store-format.md); sync_machine_id.txtar unsets it.
	env.Setenv("HIST_MACHINE", "m1")
	// The hash of $WORK, the folder scripts start in.
	canon, err := filepath.EvalSymlinks(work)
	if err != nil {
		canon = work
	}
	env.Setenv("WORKHASH", projectHash(canon))
	env.Values[scriptT{}] = env.T()
	return nil
}

// scriptT is the key of the script's testscript.T in its Values, for the
// commands that skip the script.
type scriptT struct{}

func TestScripts(t *testing.T) {
	files, _ := filepath.Glob("*.txtar")
	if len(files) == 0 {
		t.Fatal("no scripts")
	}
	testscript.Run(t, testscript.Params{
		Dir:                 ".",
		Setup:               Setup,
		Cmds:                cmds,
		RequireExplicitExec: true,
		Condition: func(cond string) (bool, error) {
			switch cond {
			case "unshare":
				return exec.Command("unshare", "-m", "true").Run() == nil, nil
			case "root":
				return os.Geteuid() == 0, nil
			}
			return false, fmt.Errorf("unknown condition %q", cond)
		},
	})
}

// TestSourcesTracked makes go test's cached result of this package depend
// on the sources of the binaries it runs (testbin.Track).
func TestSourcesTracked(t *testing.T) { testbin.Track(t) }
