package testscripts

import (
	"os"
	"regexp"
	"strconv"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

func init() {
	// waitlines SECONDS N FILE REGEXP: waits until FILE holds N lines
	// matching REGEXP (or more), failing after SECONDS with what it holds;
	// it logs how long it waited.
	cmds["waitlines"] = func(ts *testscript.TestScript, neg bool, args []string) {
		if neg || len(args) != 4 {
			ts.Fatalf("usage: waitlines SECONDS N FILE REGEXP")
		}
		secs, err := strconv.ParseFloat(args[0], 64)
		ts.Check(err)
		n, err := strconv.Atoi(args[1])
		ts.Check(err)
		re, err := regexp.Compile("(?m)" + args[3])
		ts.Check(err)
		start := time.Now()
		for {
			data, _ := os.ReadFile(ts.MkAbs(args[2]))
			if got := len(re.FindAllIndex(data, -1)); got >= n {
				ts.Logf("waitlines: %d lines matching %q in %s after %v", got, args[3], args[2], time.Since(start).Round(time.Millisecond))
				return
			}
			if time.Since(start) > time.Duration(secs*float64(time.Second)) {
				ts.Fatalf("waitlines: %s does not hold %d lines matching %q after %vs; it holds:\n%s", args[2], n, args[3], args[0], data)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}
