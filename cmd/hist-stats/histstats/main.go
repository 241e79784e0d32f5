// Package histstats is the hist-stats command; cmd/hist-stats runs it, and the
// tests link it into their binary (internal/testbin).
package histstats

import (
	"bufio"
	"encoding/json"
	"os"

	"hist/lib/cli"
	"hist/lib/history"
	"hist/lib/store"
	"hist/lib/termsafe"
)

const usage = `Usage:
    hist-stats [--project [DIR] | --all] [FILTERS] [--json] [--store DIR]

Prints statistics of the prompts you typed in a scope: how many a day (the
last 30 days, or from --since), per agent and per project (the 10 with the
most), by hour of day, and the 10 prompts you reused most. A prompt typed
again counts again: each of its copies does, copies less than 5 s apart
counting once (a live capture and the transcript's copy of one send).
Deleted (hidden) prompts never count.

On a terminal the charts are in colour; in a pipe they are plain text. They
fit in 80 columns. Prompts and folder names show on one line, their control
characters as control pictures (␛ for ESC).

Scopes:
    --project [DIR]  The project at DIR (default: the working directory): in
                     a git repository, the whole repository. The default.
    --all            Every project, plus history-global.jsonl.

` + cli.FilterUsage + `
Output:
    --json           One JSON object: prompts, distinct, days {day: prompts}
                     (the days charted), agents {agent: prompts}, projects
                     [{project, cwd, prompts}] (every one), hours (24 counts,
                     from 0h), reused [{text, uses}] (the 10 most).

The time now is the clock's, or $HIST_NOW (2026-11-30T14:00, or RFC 3339).
With capture off, hist-stats reads nothing: it prints one warning naming the
control that decides and exits 0.

Exit status:
    0  printed
    1  some store files could not be read (the others were counted; stderr
       names them)
    2  usage error, a --project DIR that does not exist (and is not in the
       store), or HOME unset or not absolute while the store needs it
    3  hidden.json cannot be trusted: nothing is printed; the message says how
       to recover (chmod for a permission problem, cp from its .prev copy)

Examples:
    $ hist-stats
    $ hist-stats --all --since 2026-01-01
    $ hist-stats --all --src claude,codex --since 7d
    $ hist-stats --all --json | jq '.reused[0]'
`

// Main runs hist-stats with the process's arguments and exits with its status.
func Main() { os.Exit(run(cli.OSEnv("hist-stats"))) }

func run(e *cli.Env) int {
	var scope cli.ScopeFlags
	var filters cli.FilterFlags
	fs := e.Flags()
	storeDir := cli.StoreFlag(fs)
	scope.Register(fs)
	filters.Register(fs)
	asJSON := fs.Bool("json", false, "")
	args, code, stop := e.ParseArgs(fs, usage, cli.SplitOptional(e.Args, "project"))
	if stop {
		return code
	}
	if len(args) > 0 {
		e.Errorf("unexpected argument %q: hist-stats takes only flags (see '%s --help')", args[0], e.Name)
		return cli.ExitUsage
	}
	st := e.Store(*storeDir)
	sc, _, ok := e.Scope(&scope, st)
	if !ok {
		return cli.ExitUsage
	}
	filter, ok := e.Filter(&filters)
	if !ok {
		return cli.ExitUsage
	}
	now, _ := e.Now() // e.Filter checked it
	if pol := e.Policy(); !pol.On {
		e.Warnf("%s", pol.OffHint())
		return cli.ExitOK
	}
	hidden, ok := e.LoadHidden(st)
	if !ok {
		return cli.ExitUntrusted
	}
	s := newStats(filter, now)
	res := history.Stream(st, sc, hidden, history.Options{Filter: filter, Uses: s.use}, func(e history.Entry) bool {
		s.texts = append(s.texts, e.Text)
		return true
	})
	out := bufio.NewWriter(e.Stdout)
	reg := st.LoadRegistry()
	if *asJSON {
		enc := json.NewEncoder(out)
		enc.SetEscapeHTML(false)
		enc.Encode(s.json(reg))
	} else {
		s.draw(out, reg, scopeName(sc, scope.Repo, reg), termsafe.IsTerminal(e.Stdout) && e.Getenv("NO_COLOR") == "")
	}
	if out.Flush() != nil || res.Report(e.Warnf, e.Errorf, "counted") {
		return cli.ExitFailure
	}
	return cli.ExitOK
}

// scopeName names the scope in the charts' title.
func scopeName(sc store.Scope, repo string, reg store.Registry) string {
	switch {
	case sc.All:
		return "all projects"
	case repo != "":
		return "the repository " + repo
	}
	return reg.Label(sc.Project)
}
