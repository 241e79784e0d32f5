package histcompact

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"hist/lib/cli"
	"hist/lib/compact"
	"hist/lib/store"
	"hist/lib/words"
)

// redactReport is the --redact --json output.
type redactReport struct {
	Capture string `json:"capture"` // "on" or "off"
	Reason  string `json:"reason,omitempty"`
	DryRun  bool   `json:"dry_run"`
	*compact.RedactReport
}

// runRedact is --redact: one rewrite pass over the scope's files.
func runRedact(e *cli.Env, st store.Store, sc store.Scope, dry, asJSON bool, wait time.Duration) int {
	out := &redactReport{Capture: "on", DryRun: dry, RedactReport: &compact.RedactReport{Rewritten: []string{}}}
	done := func(code int) int { return finish(e, out, asJSON, code) }
	pol := e.Policy()
	if !pol.On {
		out.Capture, out.Reason = "off", pol.OffHint()
		e.Say("nothing to do: %s", pol.OffHint())
		return done(cli.ExitOK)
	}
	if code := e.NeedMachine(&st); code != cli.ExitOK {
		return done(code)
	}
	// A scope with no file has nothing to redact: no lock (which would
	// create the store) is taken. Redact lists the files again under it.
	if files, err := st.Files(sc); err == nil && len(files) == 0 {
		e.Say("nothing to do: no store file in the scope")
		return done(cli.ExitOK)
	}
	if !dry {
		l, code := lockStore(e, st, wait)
		if l == nil {
			return done(code)
		}
		defer l.Release()
	}
	hidden, ok := e.LoadHidden(st)
	if !ok {
		out.Reason = "hidden.json cannot be trusted"
		return done(cli.ExitUntrusted)
	}
	r := compact.Redact(st, sc, hidden, dry)
	out.RedactReport = r
	verb, rewrote := "redacted", "rewrote"
	if dry {
		verb, rewrote = "would redact", "would rewrite"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s; %s %d of %s", verb, words.Plural(r.Redacted, "prompt", "prompts"), rewrote, len(r.Rewritten), words.Plural(r.Files, "file", "files"))
	if r.Hidden > 0 {
		fmt.Fprintf(&b, "; %s holding a secret removed", words.Plural(r.Hidden, "hidden prompt", "hidden prompts"))
		if dry {
			b.WriteString(" (would be)")
		}
	}
	if r.Foreign > 0 {
		fmt.Fprintf(&b, "; %s of other machines left to their machine's --redact", words.Plural(r.Foreign, "file", "files"))
	}
	e.Say("%s", b.String())
	for _, c := range r.Carries {
		e.Say("lines that arrived last are in %s", filepath.Base(c))
	}
	for _, fe := range r.Errors {
		e.Errorf("%s: %s: left as it is; run hist-compact --redact again once fixed", fe.Path, fe.Err)
	}
	if len(r.Errors) > 0 {
		return done(cli.ExitFailure)
	}
	return done(cli.ExitOK)
}
