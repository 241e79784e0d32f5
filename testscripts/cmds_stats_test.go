package testscripts

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

func init() {
	// termout OUT CMD ARGS...: runs CMD with its stdout on a pseudo
	// terminal and writes what the terminal received to OUT. It fails
	// when CMD fails.
	cmds["termout"] = func(ts *testscript.TestScript, neg bool, args []string) {
		if len(args) < 2 || neg {
			ts.Fatalf("usage: termout OUT CMD ARGS...")
		}
		onTerminal(ts, args, false)
	}
	// ptyexec OUT CMD ARGS...: runs CMD with its stderr on a pseudo
	// terminal and writes what the terminal received to OUT; stdout is
	// the script's stdout. It fails when CMD fails.
	cmds["ptyexec"] = func(ts *testscript.TestScript, neg bool, args []string) {
		if len(args) < 2 || neg {
			ts.Fatalf("usage: ptyexec OUT CMD ARGS...")
		}
		onTerminal(ts, args, true)
	}
}

// onTerminal runs args[1:] with its stdout (stderr: its stderr) on a
// pseudo terminal, writes what the terminal received to args[0], and
// fails when the command fails. The other stream goes to the script's
// stdout. The project's binaries come from the folder TestMain built
// them in, whatever PATH holds.
func onTerminal(ts *testscript.TestScript, args []string, stderr bool) {
	master, slave := openPty(ts)
	defer master.Close()
	path := filepath.Join(ts.Getenv(binDirVar), args[1])
	if _, err := os.Stat(path); err != nil {
		path, err = exec.LookPath(args[1])
		ts.Check(err)
	}
	cmd := exec.Command(path, args[2:]...)
	cmd.Dir = ts.MkAbs(".")
	cmd.Env = envOf(ts)
	for _, k := range []string{"TZ", "HIST_NOW", "NO_COLOR"} {
		if v := ts.Getenv(k); v != "" {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
	}
	var other bytes.Buffer
	cmd.Stdout, cmd.Stderr = slave, &other
	if stderr {
		cmd.Stdout, cmd.Stderr = &other, slave
	}
	if err := cmd.Start(); err != nil {
		slave.Close()
		ts.Fatalf("starting %s: %v", args[1], err)
	}
	slave.Close()
	var got bytes.Buffer
	done := make(chan struct{})
	go func() {
		io.Copy(&got, master) // ends with EIO once the child closed the terminal
		close(done)
	}()
	werr := cmd.Wait()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
	}
	ts.Check(os.WriteFile(ts.MkAbs(args[0]), got.Bytes(), 0o644))
	fmt.Fprint(ts.Stdout(), other.String())
	if werr != nil {
		ts.Fatalf("%s: %v", args[1], werr)
	}
}
