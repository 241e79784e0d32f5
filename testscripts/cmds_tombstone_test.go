package testscripts

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/rogpeppe/go-internal/testscript"

	"hist/lib/identity"
)

func init() {
	// hiddenfile PATH ITEM...: writes a tombstone file at PATH holding, in
	// order, the key of each ITEM; an ITEM "N*WORD" stands for the keys of
	// "WORD 0" ... "WORD N-1".
	cmds["hiddenfile"] = func(ts *testscript.TestScript, neg bool, args []string) {
		if len(args) < 1 || neg {
			ts.Fatalf("usage: hiddenfile PATH ITEM...")
		}
		entries := []string{}
		for _, a := range args[1:] {
			n, word, ok := strings.Cut(a, "*")
			count, err := strconv.Atoi(n)
			if !ok || err != nil {
				entries = append(entries, identity.Key(a))
				continue
			}
			for i := range count {
				entries = append(entries, identity.Key(fmt.Sprint(word, " ", i)))
			}
		}
		data, _ := json.Marshal(entries)
		p := ts.MkAbs(args[0])
		ts.Check(os.MkdirAll(filepath.Dir(p), 0o700))
		ts.Check(os.WriteFile(p, data, 0o600))
	}
}
