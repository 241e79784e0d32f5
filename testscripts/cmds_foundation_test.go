package testscripts

import (
	"errors"
	"os"
	"os/exec"
	"strconv"

	"github.com/rogpeppe/go-internal/testscript"
)

func init() {
	// exits N CMD ARGS...: runs CMD like exec (stdout and stderr can be
	// checked afterwards) and checks that it exits with status N.
	cmds["exits"] = func(ts *testscript.TestScript, neg bool, args []string) {
		if len(args) < 2 || neg {
			ts.Fatalf("usage: exits N CMD ARGS...")
		}
		want, err := strconv.Atoi(args[0])
		ts.Check(err)
		err = ts.Exec(args[1], args[2:]...)
		got := 0
		var ee *exec.ExitError
		switch {
		case errors.As(err, &ee):
			got = ee.ExitCode()
		case err != nil:
			ts.Fatalf("running %s: %v", args[1], err)
		}
		if got != want {
			ts.Fatalf("%s exited with status %d, want %d", args[1], got, want)
		}
	}
	// expand SRC DST: writes SRC with $VAR and ${VAR} replaced by the
	// script's variables to DST (0600).
	cmds["expand"] = func(ts *testscript.TestScript, neg bool, args []string) {
		if len(args) != 2 || neg {
			ts.Fatalf("usage: expand SRC DST")
		}
		out := os.Expand(ts.ReadFile(args[0]), ts.Getenv)
		ts.Check(os.WriteFile(ts.MkAbs(args[1]), []byte(out), 0o600))
	}
}
