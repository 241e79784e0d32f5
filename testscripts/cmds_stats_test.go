package testscripts

import (
	"bytes"
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
		master, slave := openPty(ts)
		defer master.Close()
		cmd := exec.Command(filepath.Join(ts.Getenv(binDirVar), args[1]), args[2:]...)
		cmd.Dir = ts.MkAbs(".")
		cmd.Env = envOf(ts)
		for _, k := range []string{"TZ", "HIST_NOW", "NO_COLOR"} {
			if v := ts.Getenv(k); v != "" {
				cmd.Env = append(cmd.Env, k+"="+v)
			}
		}
		cmd.Stdout = slave
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
		if werr != nil {
			ts.Fatalf("%s: %v", args[1], werr)
		}
	}
}
