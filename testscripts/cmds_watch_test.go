package testscripts

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

func init() {
	// waitfor SECONDS GLOB [REGEXP]: waits until a file matching GLOB
	// exists (and, with REGEXP, holds a match), failing after SECONDS;
	// it logs how long it waited.
	cmds["waitfor"] = func(ts *testscript.TestScript, neg bool, args []string) {
		if neg || len(args) < 2 || len(args) > 3 {
			ts.Fatalf("usage: waitfor SECONDS GLOB [REGEXP]")
		}
		secs, err := strconv.ParseFloat(args[0], 64)
		ts.Check(err)
		var re *regexp.Regexp
		if len(args) == 3 {
			re = regexp.MustCompile(args[2])
		}
		start := time.Now()
		for {
			files, _ := filepath.Glob(ts.MkAbs(args[1]))
			for _, f := range files {
				if re == nil {
					ts.Logf("waitfor: %s after %v", f, time.Since(start).Round(time.Millisecond))
					return
				}
				if data, err := os.ReadFile(f); err == nil && re.Match(data) {
					ts.Logf("waitfor: %q in %s after %v", args[2], f, time.Since(start).Round(time.Millisecond))
					return
				}
			}
			if time.Since(start) > time.Duration(secs*float64(time.Second)) {
				ts.Fatalf("waitfor: nothing matched %s after %vs", args[1], args[0])
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}
