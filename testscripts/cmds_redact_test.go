package testscripts

import (
	"github.com/rogpeppe/go-internal/testscript"

	"hist/lib/identity"
)

func init() {
	// idkey TEXT VAR: sets VAR to TEXT's identity key (a hidden.json entry).
	cmds["idkey"] = func(ts *testscript.TestScript, neg bool, args []string) {
		if len(args) != 2 || neg {
			ts.Fatalf("usage: idkey TEXT VAR")
		}
		ts.Setenv(args[1], identity.Key(args[0]))
	}
}
