// Package histseed is the hist-seed command; cmd/hist-seed runs it, and the
// tests link it into their binary (internal/testbin).
package histseed

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"

	"github.com/mattn/go-isatty"

	"hist/lib/cli"
	"hist/lib/install"
	"hist/lib/redact"
	"hist/lib/seed"
	"hist/lib/store"
	"hist/lib/transcript"
)

// usageTemplate is the help text; the {{...}} lines are the passages
// that name the agents, written from agent.List (see usage).
const usageTemplate = `Usage:
    hist-seed [--project [DIR] | --all-projects] [--from SOURCES] [--sessions DIR]
              [--dry-run] [--json] [-q] [--legacy-only] [--store DIR]
    hist-seed --watch [--project [DIR] | --all-projects] [--from SOURCES]
              [--sessions DIR] [-q] [--store DIR]

Imports the prompts you typed before hist was capturing, once, when capture
is on:

 1. The legacy migration: the agents' own prompt-recall files are added to
    the machine's global file, history-global@<machine>.jsonl, which
    belongs to the global scope only (hist-list --all). Each file is
    migrated once per machine and recorded in
    history-global.migrated@<machine>.json; one that cannot be read is
    tried again by the next run. While it runs, the migration holds the
    folder history-global.jsonl.migration-lock.
{{recall}}
 2. The bootstrap: for each project, each agent's session transcripts are
    read and the prompts typed in that project (by the cwd the transcript
    records, never by its folder name) that no earlier run imported are
    written: to the project's seed file, one per agent, the first time;
    appended to its import file, import-<agent>@<machine>.jsonl, later. A
    prompt imported once is never imported again, so a prompt deleted since
    does not come back. Each record keeps the prompt's own time and
    carries "src" (the agent) and "session" (its session id).
{{seedfiles}}

Prompts hidden by hidden.json, empty prompts and command-like prompts
("/name ...") are never imported. A source with a transcript that cannot be
read (an I/O error, a lock) writes nothing at all, so the next run retries
it; a file whose content cannot be decoded (a .zst cut short, a corrupt
database) is passed over and named, and read again once it changes;
malformed lines are skipped and counted. The agents' files are only read.
Secrets in the prompts are replaced by [REDACTED:<kind>] before anything
else is checked or written, unless GENTLE_PI_HISTORY_REDACT=0 (see
docs/redaction.md).

Options:
    --project [DIR]  Bootstrap the project at DIR (default: the working
                     directory). The default.
    --all-projects   Bootstrap every project any transcript names (what a new
                     user runs once after installing). --all is the same.
    --from SOURCES   Comma-separated sources, or all (the default: every
                     source found); it also selects the prompt-recall files
                     to migrate. The sources:
{{from}}
    --sessions DIR   Read pi's sessions from DIR instead of
                     $PI_CODING_AGENT_SESSION_DIR, $PI_CODING_AGENT_DIR/sessions
                     or ~/.pi/agent/sessions. The folder may be flat: sessions
                     are matched to projects by the cwd in their header.
    --dry-run        Read everything and report what would be written; write
                     nothing (no seed file, no lock folder, no migration).
    --json           Print a report (one JSON object) on stdout.
    -q               No summary lines and no progress line; problems are
                     still reported.
    --legacy-only    Run only the legacy migration.
    --watch          Stay running, for use without hooks: import once, then
                     again soon after a write to a transcript of the
                     sources (a folder that cannot be watched, or does not
                     exist yet, is looked at every 2 s). An import that wrote
                     nothing says only its problems; one that failed is tried
                     again at the next change or after 30 s. SIGINT or
                     SIGTERM stops it with exit 0. Not with --dry-run, --json
                     or --legacy-only.
    --store DIR      The store. Default: $PI_CODING_AGENT_DIR/history or
                     ~/.pi/agent/history.

Where the transcripts are read from (and the prompt-recall files):
{{where}}

On a terminal, a progress line on stderr shows files and MB read, prompts
found and the rate; it is cleared at the end. Then one summary line per
source and per project and source is printed on stderr.

With capture off, hist-seed reads and writes nothing: it prints one line
naming the control that decides and exits 0; with --watch, capture turned
off while it runs ends it the same way.

Exit status:
    0  done, or nothing to do
    1  the store could not be written (the message says which file)
    2  usage error
    3  hidden.json cannot be trusted: nothing was imported; the import waits
       until the file is restored or removed
    4  a source could not be read (or another rewrite held the store): nothing
       was written for it; run hist-seed again later
    5  the legacy migration was skipped: its lock folder exists; remove it by
       hand once no hist-seed runs (the bootstrap still ran)
    6  a source's layout was not recognised: it was skipped
    When several apply, the first in the order 1, 3, 4, 5, 6 is returned.

Examples:
    $ hist-capture --enable && hist-seed --all-projects
    $ hist-seed --dry-run --from claude,codex
    $ hist-seed --project ~/src/app --sessions /mnt/backup/pi-sessions
    $ hist-seed --all-projects --json -q | jq '.seeds[] | select(.status=="written")'
    $ hist-seed --watch --all-projects -q    # what hist-seed-watch.service runs
`

// Exit codes above cli's.
const (
	exitRetry      = 4
	exitMigLock    = 5
	exitLayout     = 6
	exitInterrupt  = 128
	allSourcesWord = "all"
)

// Main runs hist-seed with the process's arguments and exits with its status.
func Main() { os.Exit(run(cli.OSEnv("hist-seed"))) }

type options struct {
	scope      cli.ScopeFlags // --all-projects sets its All
	allFlag    string         // the scope flag as typed, for the messages
	from       string
	sessions   string
	dryRun     bool
	json       bool
	quiet      bool
	legacyOnly bool
	storeDir   string
	watch      bool
}

func run(e *cli.Env) int {
	o, code, ok := parseOptions(e)
	if !ok {
		return code
	}
	names, all, _ := parseFrom(o.from)
	st := e.Store(o.storeDir)
	var canon string
	if !o.legacyOnly {
		if _, canon, ok = e.Scope(&o.scope, st); !ok {
			return cli.ExitUsage
		}
	}
	if pol := e.Policy(); !pol.On {
		e.Errorf("%s: nothing was imported", pol.OffHint())
		return cli.ExitOK
	}
	// Every file an import writes carries this machine's id.
	if !o.dryRun {
		if code := e.NeedMachine(&st); code != cli.ExitOK {
			return code
		}
	}
	srcs, legs := sources(e, names, o.sessions)
	im := &importer{e: e, o: o, st: st, canon: canon, srcs: srcs, legs: legs, explicit: !all}
	im.onSignal()
	if o.watch {
		return im.watch()
	}
	return im.once(true)
}

// parseOptions reads the flags and checks that they go together; ok is
// false when the run stops there, with code.
func parseOptions(e *cli.Env) (o options, code int, ok bool) {
	fs := flag.NewFlagSet(e.Name, flag.ContinueOnError)
	fs.StringVar(&o.storeDir, "store", "", "")
	o.scope.Register(fs)
	fs.BoolVar(&o.scope.All, "all-projects", false, "")
	fs.StringVar(&o.from, "from", allSourcesWord, "")
	fs.StringVar(&o.sessions, "sessions", "", "")
	fs.BoolVar(&o.dryRun, "dry-run", false, "")
	fs.BoolVar(&o.json, "json", false, "")
	fs.BoolVar(&o.quiet, "q", false, "")
	fs.BoolVar(&o.legacyOnly, "legacy-only", false, "")
	fs.BoolVar(&o.watch, "watch", false, "")
	args, code, stop := e.ParseArgs(fs, usage, cli.SplitOptional(e.Args, "project"))
	if stop {
		return o, code, false
	}
	if len(args) > 0 {
		e.Errorf("unexpected argument %q: hist-seed takes only flags (write --project=DIR for a project folder)", args[0])
		return o, cli.ExitUsage, false
	}
	o.allFlag = "--all-projects"
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "all" {
			o.allFlag = "--all"
		}
	})
	if msg := conflict(o); msg != "" {
		e.Errorf("%s", msg)
		return o, cli.ExitUsage, false
	}
	if !filepath.IsAbs(e.Home) {
		// A relative or empty HOME would read transcripts from the working folder.
		e.Errorf("HOME is not set to an absolute path (%q): hist-seed finds the agents' transcripts under it: set HOME", e.Home)
		return o, cli.ExitUsage, false
	}
	return o, cli.ExitOK, true
}

// conflict says what is wrong with flags that do not go together, or "".
func conflict(o options) string {
	names, _, err := parseFrom(o.from)
	switch {
	case o.scope.Project && o.scope.All:
		return fmt.Sprintf("--project and %s name two scopes: choose one", o.allFlag)
	case err != nil:
		return fmt.Sprintf("--from %q: %v", o.from, err)
	case o.sessions != "" && !slices.Contains(names, "pi"):
		return fmt.Sprintf("--sessions names pi's sessions, but --from %q leaves pi out: add pi to --from", o.from)
	case o.legacyOnly && (o.scope.Project || o.scope.All || o.sessions != ""):
		return fmt.Sprintf("--legacy-only runs only the migration into the global file: drop --project, %s and --sessions", o.allFlag)
	}
	for _, f := range []struct {
		set  bool
		name string
	}{{o.dryRun, "--dry-run"}, {o.json, "--json"}, {o.legacyOnly, "--legacy-only"}} {
		if o.watch && f.set {
			return fmt.Sprintf("--watch imports again at each change, %s does not: drop one", f.name)
		}
	}
	return ""
}

// onSignal makes SIGINT, SIGTERM and SIGHUP remove what the import
// running holds, then exit: 0 for a watch (the way it is stopped), 128+N
// otherwise.
func (im *importer) onSignal() {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	go func() {
		s := <-sigs
		im.interrupt()
		if im.o.watch {
			os.Exit(cli.ExitOK)
		}
		im.e.Errorf("interrupted: what was not written yet was not imported; run hist-seed again")
		os.Exit(exitInterrupt + int(s.(syscall.Signal)))
	}()
}

// importer runs imports: once, or again at each change with --watch.
type importer struct {
	e        *cli.Env
	o        options
	st       store.Store
	canon    string
	srcs     []seed.Source
	legs     []seed.LegacySource
	explicit bool
	recent   bool // the last import left prompts typed a moment ago (seed.Settle)

	mu           sync.Mutex
	cur          *seed.Runner // the import running, or the last one
	stopProgress func()
}

// once runs one import (the legacy migration, then the bootstrap),
// reports it (with --watch, only its problems when it wrote nothing) and
// returns its exit code. progress allows the progress line.
func (im *importer) once(progress bool) int {
	e, o := im.e, im.o
	var prog *seed.Progress
	var stopProgress func()
	if f, ok := e.Stderr.(*os.File); ok && progress && !o.quiet && isatty.IsTerminal(f.Fd()) {
		prog = &seed.Progress{}
		stopProgress = startProgress(f, e.Name, prog)
	}
	r := seed.New(seed.Options{Store: im.st, Project: im.canon, DryRun: o.dryRun, Progress: prog,
		NoRedact: !redact.Enabled(e.Getenv(redact.EnvVar))})
	// Whether each agent is captured live, as it is now (a watch lasts).
	for i := range im.srcs {
		im.srcs[i].Live = install.Wired(im.srcs[i].Name, transcript.Env(e.Getenv), e.Home)
	}
	im.mu.Lock()
	im.cur, im.stopProgress = r, stopProgress
	im.mu.Unlock()

	mig, merr := r.Migrate(im.legs)
	brep, berr := &seed.Report{}, error(nil) // none with --legacy-only
	if !o.legacyOnly && mig.Untrusted == "" {
		brep, berr = r.Bootstrap(im.srcs)
	}
	if stopProgress != nil {
		stopProgress()
	}
	im.recent = slices.ContainsFunc(brep.Files, func(f seed.FileResult) bool { return f.Recent > 0 })

	quiet := o.quiet || (o.watch && !wrote(mig, brep))
	rp := &reporter{e: e, quiet: quiet, explicit: im.explicit, oneProject: im.canon != "",
		out: &report{DryRun: o.dryRun, Store: im.st.Root, Sources: []seed.SourceResult{}, Seeds: []seed.FileResult{}}}
	rp.migration(mig, merr)
	rp.bootstrap(brep, berr, im.st)
	return rp.finish(o.json)
}

// interrupt removes what the import running holds (seed's Interrupt)
// before the process exits on a signal; it keeps im.mu: no import starts.
func (im *importer) interrupt() {
	im.mu.Lock()
	if im.cur != nil {
		im.cur.Interrupt()
	}
	if im.stopProgress != nil {
		im.stopProgress()
	}
}

func parseFrom(v string) (names []string, all bool, err error) {
	want := map[string]bool{}
	for _, n := range strings.Split(v, ",") {
		switch n = strings.ToLower(strings.TrimSpace(n)); {
		case n == allSourcesWord:
			all = true
		case n != "" && !slices.Contains(knownSources, n):
			return nil, false, fmt.Errorf("unknown source %q: use %s or %s", n, strings.Join(knownSources, ", "), allSourcesWord)
		}
		want[n] = true
	}
	for _, k := range knownSources {
		if all || want[k] {
			names = append(names, k)
		}
	}
	if len(names) == 0 {
		return nil, false, fmt.Errorf("no source named: use %s or %s", strings.Join(knownSources, ", "), allSourcesWord)
	}
	return names, all, nil
}
