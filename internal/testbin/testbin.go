// Package testbin is for tests only: it puts the hist commands on PATH for
// the tests that run them as a user would, and says how long the long
// tests run. No binary imports it.
package testbin

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"hist/cmd/hist-capture/histcapture"
	"hist/cmd/hist-compact/histcompact"
	"hist/cmd/hist-delete/histdelete"
	"hist/cmd/hist-list/histlist"
	"hist/cmd/hist-pick/histpick"
	"hist/cmd/hist-seed/histseed"
	"hist/cmd/hist-stats/histstats"
)

// Root is the module's root folder.
func Root() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// Commands are the hist commands, by the name a user runs.
var Commands = map[string]func(){
	"hist-capture": histcapture.Main,
	"hist-compact": histcompact.Main,
	"hist-delete":  histdelete.Main,
	"hist-list":    histlist.Main,
	"hist-pick":    histpick.Main,
	"hist-seed":    histseed.Main,
	"hist-stats":   histstats.Main,
}

// Main runs the tests with every command on PATH, sets *dir to the folder
// that holds them, and exits. The test binary is the commands
// (testscript.Main): a copy of it is put on PATH under each command's
// name, and run under that name it runs that command. go test's cached
// result therefore depends on the commands' code, since the test binary
// holds it.
func Main(m *testing.M, dir *string) {
	testscript.Main(onPath{m, dir}, Commands)
}

// onPath sets the folder of the commands once testscript.Main has put
// them on PATH, then runs the tests.
type onPath struct {
	m   *testing.M
	dir *string
}

func (r onPath) Run() int {
	p, err := exec.LookPath("hist-list")
	if err != nil {
		fmt.Fprintln(os.Stderr, "testbin: the commands are not on PATH:", err)
		return 1
	}
	*r.dir = filepath.Dir(p)
	return r.m.Run()
}

// Long says whether the long tests run at full length: HIST_LONG=1.
// Without it they run fewer rounds, enough to catch a regression quickly.
func Long() bool {
	return os.Getenv("HIST_LONG") == "1"
}

// Scale is long under HIST_LONG=1 and short otherwise: a loop's rounds,
// kills or seconds.
func Scale(short, long int) int {
	if Long() {
		return long
	}
	return short
}
