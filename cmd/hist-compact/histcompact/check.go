package histcompact

import (
	"hist/lib/audit"
	"hist/lib/cli"
	"hist/lib/redact"
	"hist/lib/store"
	"hist/lib/termsafe"
)

// runCheck is --check: the store's health report, read-only.
func runCheck(e *cli.Env, st store.Store) int {
	v, set := e.Lookup(redact.EnvVar)
	r := audit.Check(st, v, set)
	r.Print(termsafe.Writer(e.Stdout)) // folder names shown escaped on a terminal
	if len(r.Problems()) > 0 {
		return exitProblems
	}
	return cli.ExitOK
}
