// Package testscripts runs the txtar scripts in this folder against the
// hist commands: TestMain puts every command on PATH (testbin.Main), so a
// script (and any shell it starts) runs "hist-list" as a user does.
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

// BinDir is the folder of the commands TestMain put on PATH.
var BinDir string

// cmds holds the scripts' custom commands; each cmds_*_test.go file adds
// its own in an init function.
var cmds = map[string]func(ts *testscript.TestScript, neg bool, args []string){}

// binDirVar names the folder of the commands in a script's environment.
const binDirVar = "HIST_TEST_BINDIR"

// TestMain puts every command on PATH (testbin.Main) and runs the tests.
func TestMain(m *testing.M) { testbin.Main(m, &BinDir) }

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
