package testscripts

import (
	"bufio"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"hist/lib/store/storetest"
)

func init() {
	// bigline PATH MB TEXT TS: appends to PATH one store record whose text
	// is TEXT followed by "x" repeated to MB megabytes, ending in "\n".
	// Huge lines are generated, never committed.
	cmds["bigline"] = func(ts *testscript.TestScript, neg bool, args []string) {
		if len(args) != 4 || neg {
			ts.Fatalf("usage: bigline PATH MB TEXT TS")
		}
		mb, err := strconv.Atoi(args[1])
		ts.Check(err)
		p := ts.MkAbs(args[0])
		ts.Check(os.MkdirAll(filepath.Dir(p), 0o700))
		f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
		ts.Check(err)
		w := bufio.NewWriterSize(f, 1<<20)
		fmt.Fprintf(w, `{"v":1,"text":"%s`, args[2])
		chunk := make([]byte, 1<<20)
		for i := range chunk {
			chunk[i] = 'x'
		}
		for range mb {
			w.Write(chunk)
		}
		fmt.Fprintf(w, `","ts":%s}`+"\n", args[3])
		ts.Check(w.Flush())
		ts.Check(f.Close())
	}
	// zeros PATH N: writes N NUL bytes to PATH (0600).
	cmds["zeros"] = func(ts *testscript.TestScript, neg bool, args []string) {
		if len(args) != 2 || neg {
			ts.Fatalf("usage: zeros PATH N")
		}
		n, err := strconv.Atoi(args[1])
		ts.Check(err)
		p := ts.MkAbs(args[0])
		ts.Check(os.MkdirAll(filepath.Dir(p), 0o700))
		ts.Check(os.WriteFile(p, make([]byte, n), 0o600))
	}
	// writehex PATH HEX: writes the bytes HEX decodes to (0600).
	cmds["writehex"] = func(ts *testscript.TestScript, neg bool, args []string) {
		if len(args) != 2 || neg {
			ts.Fatalf("usage: writehex PATH HEX")
		}
		b, err := hex.DecodeString(args[1])
		ts.Check(err)
		p := ts.MkAbs(args[0])
		ts.Check(os.MkdirAll(filepath.Dir(p), 0o700))
		ts.Check(os.WriteFile(p, b, 0o600))
	}
	// mkfifo PATH: makes a named pipe.
	cmds["mkfifo"] = func(ts *testscript.TestScript, neg bool, args []string) {
		if len(args) != 1 || neg {
			ts.Fatalf("usage: mkfifo PATH")
		}
		p := ts.MkAbs(args[0])
		ts.Check(os.MkdirAll(filepath.Dir(p), 0o700))
		ts.Check(storetest.Mkfifo(p))
	}
	// within SECS N CMD ARGS...: runs CMD like exec, checks that it exits
	// with status N and fails when it takes longer than SECS seconds; with a FIFO in the
	// store a blocking open would hang here instead of failing, so the
	// command is killed at the limit.
	cmds["within"] = func(ts *testscript.TestScript, neg bool, args []string) {
		if len(args) < 3 || neg {
			ts.Fatalf("usage: within SECS N CMD ARGS...")
		}
		secs, err := strconv.ParseFloat(args[0], 64)
		ts.Check(err)
		want, err := strconv.Atoi(args[1])
		ts.Check(err)
		args = args[1:]
		limit := time.Duration(secs * float64(time.Second))
		done := make(chan error, 1)
		start := time.Now()
		go func() { done <- ts.Exec(args[1], args[2:]...) }()
		select {
		case err := <-done:
			took := time.Since(start)
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
			ts.Logf("%s took %v (limit %v)", args[1], took.Round(time.Millisecond), limit)
			if took > limit {
				ts.Fatalf("%s took %v, more than %v", args[1], took, limit)
			}
		case <-time.After(limit + 10*time.Second):
			ts.Fatalf("%s still running after %v: it blocks", args[1], limit+10*time.Second)
		}
	}
}
