package testscripts

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

func projectHash(canon string) string {
	sum := sha256.Sum256([]byte(canon))
	return hex.EncodeToString(sum[:8])
}

func init() {
	// nowms VAR [OFFSET]: sets VAR to the time now in Unix milliseconds,
	// plus OFFSET milliseconds.
	cmds["nowms"] = func(ts *testscript.TestScript, neg bool, args []string) {
		if neg || len(args) < 1 || len(args) > 2 {
			ts.Fatalf("usage: nowms VAR [OFFSET]")
		}
		ms := time.Now().UnixMilli()
		if len(args) == 2 {
			off, err := strconv.ParseInt(args[1], 10, 64)
			ts.Check(err)
			ms += off
		}
		ts.Setenv(args[0], strconv.FormatInt(ms, 10))
	}
	// hash DIR VAR: sets VAR to the project hash of DIR (canonicalized).
	cmds["hash"] = func(ts *testscript.TestScript, neg bool, args []string) {
		if len(args) != 2 || neg {
			ts.Fatalf("usage: hash DIR VAR")
		}
		dir := ts.MkAbs(args[0])
		if c, err := filepath.EvalSymlinks(dir); err == nil {
			dir = c
		}
		ts.Setenv(args[1], projectHash(filepath.Clean(dir)))
	}
	// perm MODE PATH...: each path has exactly this permission (octal).
	cmds["perm"] = func(ts *testscript.TestScript, neg bool, args []string) {
		if len(args) < 2 {
			ts.Fatalf("usage: perm MODE PATH...")
		}
		want, err := strconv.ParseUint(args[0], 8, 32)
		ts.Check(err)
		for _, p := range args[1:] {
			fi, err := os.Stat(ts.MkAbs(p))
			ts.Check(err)
			got := uint64(fi.Mode().Perm())
			if (got == want) == neg {
				ts.Fatalf("%s has mode %#o, want %s%#o", p, got, map[bool]string{true: "not ", false: ""}[neg], want)
			}
		}
	}
	// permtree DIRMODE FILEMODE ROOT: every folder and file below ROOT (ROOT included) has these modes.
	cmds["permtree"] = func(ts *testscript.TestScript, neg bool, args []string) {
		if len(args) != 3 || neg {
			ts.Fatalf("usage: permtree DIRMODE FILEMODE ROOT")
		}
		dm, _ := strconv.ParseUint(args[0], 8, 32)
		fm, _ := strconv.ParseUint(args[1], 8, 32)
		n := 0
		ts.Check(filepath.Walk(ts.MkAbs(args[2]), func(p string, fi os.FileInfo, err error) error {
			if err != nil {
				return err
			}
			n++
			want := fm
			if fi.IsDir() {
				want = dm
			}
			if uint64(fi.Mode().Perm()) != want {
				return fmt.Errorf("%s has mode %#o, want %#o", p, fi.Mode().Perm(), want)
			}
			return nil
		}))
		ts.Logf("permtree: %d entries checked", n)
	}
	// count N GLOB: GLOB (relative to the cwd) matches exactly N paths.
	cmds["count"] = func(ts *testscript.TestScript, neg bool, args []string) {
		if len(args) != 2 || neg {
			ts.Fatalf("usage: count N GLOB")
		}
		n, err := strconv.Atoi(args[0])
		ts.Check(err)
		m, err := filepath.Glob(ts.MkAbs(args[1]))
		ts.Check(err)
		if len(m) != n {
			ts.Fatalf("%s matches %d paths, want %d: %v", args[1], len(m), n, m)
		}
	}
	// mtime PATH VAR: sets VAR to PATH's mtime in ns; with neg and three args (! mtime PATH VAR) checks that it changed.
	cmds["mtime"] = func(ts *testscript.TestScript, neg bool, args []string) {
		if len(args) != 2 {
			ts.Fatalf("usage: mtime PATH VAR")
		}
		fi, err := os.Stat(ts.MkAbs(args[0]))
		ts.Check(err)
		ts.Setenv(args[1], strconv.FormatInt(fi.ModTime().UnixNano(), 10))
	}
	// setmtime PATH UNIXSECONDS
	cmds["setmtime"] = func(ts *testscript.TestScript, neg bool, args []string) {
		if len(args) != 2 || neg {
			ts.Fatalf("usage: setmtime PATH UNIXSECONDS")
		}
		sec, err := strconv.ParseInt(args[1], 10, 64)
		ts.Check(err)
		t := time.Unix(sec, 0)
		ts.Check(os.Chtimes(ts.MkAbs(args[0]), t, t))
	}
	// eq A B: the two strings are equal (use with $VARS).
	cmds["eq"] = func(ts *testscript.TestScript, neg bool, args []string) {
		if len(args) != 2 {
			ts.Fatalf("usage: eq A B")
		}
		if (args[0] == args[1]) == neg {
			ts.Fatalf("%q %s %q", args[0], map[bool]string{true: "==", false: "!="}[neg], args[1])
		}
	}
	// writefile PATH TEXT...: writes the args joined by spaces, with \n and \0 and \t escapes decoded, no trailing newline.
	cmds["writefile"] = func(ts *testscript.TestScript, neg bool, args []string) {
		if len(args) < 1 || neg {
			ts.Fatalf("usage: writefile PATH TEXT...")
		}
		s := strings.Join(args[1:], " ")
		s = strings.NewReplacer(`\n`, "\n", `\0`, "\x00", `\t`, "\t").Replace(s)
		p := ts.MkAbs(args[0])
		ts.Check(os.MkdirAll(filepath.Dir(p), 0o700))
		ts.Check(os.WriteFile(p, []byte(s), 0o600))
	}
}
