package testscripts

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
	"unsafe"

	"github.com/rogpeppe/go-internal/testscript"
)

func init() {
	// seeddata NAME DEST: copies testdata/seed/NAME (a folder of real or
	// hand-made transcripts) to DEST, keeping the tree.
	cmds["seeddata"] = func(ts *testscript.TestScript, neg bool, args []string) {
		if len(args) != 2 || neg {
			ts.Fatalf("usage: seeddata NAME DEST")
		}
		src := filepath.Join("testdata", "seed", args[0])
		dst := ts.MkAbs(args[1])
		ts.Check(filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(src, p)
			out := filepath.Join(dst, rel)
			if d.IsDir() {
				return os.MkdirAll(out, 0o755)
			}
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			return os.WriteFile(out, data, 0o644)
		}))
	}
	// ptyexec OUT CMD ARGS...: runs CMD with its stderr on a pseudo
	// terminal and writes what the terminal received to OUT; stdout is
	// the script's stdout. It fails when CMD fails.
	cmds["ptyexec"] = func(ts *testscript.TestScript, neg bool, args []string) {
		if len(args) < 2 || neg {
			ts.Fatalf("usage: ptyexec OUT CMD ARGS...")
		}
		master, slave, err := openPty()
		if err != nil {
			ts.Fatalf("opening a pseudo terminal: %v", err)
		}
		defer master.Close()
		path, err := exec.LookPath(args[1])
		if err != nil {
			// The binaries are registered commands: run them from the
			// folder TestMain built them in.
			path = filepath.Join(ts.Getenv(binDirVar), args[1])
		}
		cmd := exec.Command(path, args[2:]...)
		cmd.Dir = ts.MkAbs(".")
		cmd.Env = envOf(ts)
		var stdout bytes.Buffer
		cmd.Stdout = &stdout
		cmd.Stderr = slave
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
		fmt.Fprint(ts.Stdout(), stdout.String())
		if werr != nil {
			ts.Fatalf("%s: %v", args[1], werr)
		}
	}
	// lines N FILE: FILE has exactly N lines.
	cmds["lines"] = func(ts *testscript.TestScript, neg bool, args []string) {
		if len(args) != 2 || neg {
			ts.Fatalf("usage: lines N FILE")
		}
		want, err := strconv.Atoi(args[0])
		ts.Check(err)
		data, err := os.ReadFile(ts.MkAbs(args[1]))
		ts.Check(err)
		if got := bytes.Count(data, []byte("\n")); got != want {
			ts.Fatalf("%s has %d lines, want %d", args[1], got, want)
		}
	}
}

func envOf(ts *testscript.TestScript) []string {
	var env []string
	for _, k := range []string{"HOME", "PATH", "STORE", "CONFIG", "GENTLE_PI_HISTORY_CAPTURE", "GENTLE_PI_CONFIG_HOME",
		"PI_CODING_AGENT_DIR", "PI_CODING_AGENT_SESSION_DIR", "CLAUDE_CONFIG_DIR", "CODEX_HOME",
		"XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CONFIG_HOME", "OPENCODE_DB", binDirVar, "TMPDIR"} {
		if v := ts.Getenv(k); v != "" {
			env = append(env, k+"="+v)
		}
	}
	return append(env, "TERM=xterm")
}

// openPty opens a pseudo terminal pair (Linux).
func openPty() (master, slave *os.File, err error) {
	master, err = os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		return nil, nil, err
	}
	var unlock int32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, master.Fd(), syscall.TIOCSPTLCK, uintptr(unsafe.Pointer(&unlock))); e != 0 {
		master.Close()
		return nil, nil, e
	}
	var n uint32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, master.Fd(), syscall.TIOCGPTN, uintptr(unsafe.Pointer(&n))); e != 0 {
		master.Close()
		return nil, nil, e
	}
	slave, err = os.OpenFile("/dev/pts/"+strconv.Itoa(int(n)), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		master.Close()
		return nil, nil, errors.Join(err, errors.New("no pseudo terminals here"))
	}
	return master, slave, nil
}
