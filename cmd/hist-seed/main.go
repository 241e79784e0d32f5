// Command hist-seed imports past prompts into the store, once: the agents'
// prompt-recall files into history-global.jsonl (the legacy migration),
// then each project's prompts from the agents' session transcripts into
// one-time seed files.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"slices"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/mattn/go-isatty"

	"hist/lib/cli"
	"hist/lib/hugepages"
	"hist/lib/redact"
	"hist/lib/seed"
	"hist/lib/store"
)

// usageTemplate is the help text; the {{...}} lines are the passages
// that name the agents, written from agent.List (see usage).
const usageTemplate = `Usage:
    hist-seed [--project [DIR] | --all-projects] [--from SOURCES] [--sessions DIR]
              [--dry-run] [--json] [-q] [--legacy-only] [--store DIR]

Imports the prompts you typed before hist was capturing, once, when capture
is on:

 1. The legacy migration: the agents' own prompt-recall files are added to
    history-global.jsonl, which belongs to the global scope only (hist-list
    --all). Each file is migrated once and recorded in
    history-global.migrated.json; one that cannot be read is tried again by
    the next run. While it runs, the migration holds the folder
    history-global.jsonl.migration-lock.
{{recall}}
 2. The bootstrap: for each project, each agent's session transcripts are
    read and the prompts typed in that project (by the cwd the transcript
    records, never by its folder name) are written to the project's seed
    file, one per agent. A seed file is written only when it does not exist
    and is never regenerated, so a prompt deleted since does not come back.
    Each record keeps the prompt's own time and carries "src" (the agent)
    and "session" (its session id).
{{seedfiles}}

Prompts hidden by hidden.json, empty prompts and command-like prompts
("/name ...") are never imported. A source with a transcript that cannot be
read (an I/O error) writes nothing at all, so the next run retries it;
malformed lines are skipped and counted. The agents' files are only read.
Secrets in the prompts are replaced by [REDACTED:<kind>] before anything
else is checked or written, unless GENTLE_PI_HISTORY_REDACT=0 (see
docs/redaction.md).

Options:
    --project [DIR]  Bootstrap the project at DIR (default: the working
                     directory). The default.
    --all-projects   Bootstrap every project any transcript names (what a new
                     user runs once after installing).
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
    --store DIR      The store. Default: $PI_CODING_AGENT_DIR/history or
                     ~/.pi/agent/history.

Where the transcripts are read from (and the prompt-recall files):
{{where}}

On a terminal, a progress line on stderr shows files and MB read, prompts
found and the rate; it is cleared at the end. Then one summary line per
source and per project and source is printed on stderr.

With capture off, hist-seed reads and writes nothing: it prints one line
naming the control that decides and exits 0.

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
`

// Exit codes above cli's.
const (
	exitRetry      = 4
	exitMigLock    = 5
	exitLayout     = 6
	exitInterrupt  = 128
	allSourcesWord = "all"
)

func main() {
	// Transcripts are streamed and the prompts found spill to a file past
	// 32 MB (held outside the Go heap), so the live heap stays small; a
	// soft limit keeps the garbage between collections small too
	// (GOMEMLIMIT overrides it).
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(memoryLimit)
	}
	// The live heap is small (about 10 MB over Claude Code transcripts)
	// and the garbage is the prompts' texts on their way to the chunks:
	// half as many collections cost less than the 8-30 MB more heap they
	// let grow (see BENCHMARKS.md). GOGC overrides it.
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(gcPercent)
	}
	// The heap is touched through once: in 2 MB pages, not 4 KB ones, on
	// a virtual machine where page faults are dear (a fifth of the time
	// over 1 GB of Claude Code transcripts when the records were in the
	// heap; 3-4 % since they are not; see BENCHMARKS.md).
	hugepages.ForHeap(heapSpace)
	os.Exit(run(cli.OSEnv("hist-seed")))
}

// memoryLimit is the Go runtime's soft memory limit for hist-seed (the
// records waiting for a spill are not in the Go heap): a lower one makes
// the collector run almost without pause on a large pi seed; peak RSS
// stays under 150 MB.
const memoryLimit = 144 << 20

// gcPercent is hist-seed's GOGC.
const gcPercent = 200

// heapSpace is the heap address space marked for huge pages: room for the
// heap to move about in between collections (256 MB left part of a pi
// seed's heap in 4 KB pages).
const heapSpace = 512 << 20

type options struct {
	project     bool
	projectDir  string
	allProjects bool
	from        string
	sessions    string
	dryRun      bool
	json        bool
	quiet       bool
	legacyOnly  bool
	storeDir    string
}

func run(e *cli.Env) int {
	var o options
	fs := flag.NewFlagSet(e.Name, flag.ContinueOnError)
	fs.StringVar(&o.storeDir, "store", "", "")
	fs.Func("project", "", func(v string) error {
		o.project = true
		if v != "true" {
			o.projectDir = v
		}
		return nil
	})
	fs.BoolVar(&o.allProjects, "all-projects", false, "")
	fs.StringVar(&o.from, "from", allSourcesWord, "")
	fs.StringVar(&o.sessions, "sessions", "", "")
	fs.BoolVar(&o.dryRun, "dry-run", false, "")
	fs.BoolVar(&o.json, "json", false, "")
	fs.BoolVar(&o.quiet, "q", false, "")
	fs.BoolVar(&o.legacyOnly, "legacy-only", false, "")
	args, ok, help := e.Parse(fs, usage, cli.SplitOptional(e.Args, "project", 0))
	if help {
		return cli.ExitOK
	}
	if !ok {
		return cli.ExitUsage
	}
	if len(args) > 0 {
		e.Errorf("unexpected argument %q: hist-seed takes only flags (write --project=DIR for a project folder)", args[0])
		return cli.ExitUsage
	}
	if o.project && o.allProjects {
		e.Errorf("--project and --all-projects name two scopes: choose one")
		return cli.ExitUsage
	}
	names, all, err := parseFrom(o.from)
	if err != nil {
		e.Errorf("--from %q: %v", o.from, err)
		return cli.ExitUsage
	}
	if o.sessions != "" && !contains(names, "pi") {
		e.Errorf("--sessions names pi's sessions, but --from %q leaves pi out: add pi to --from", o.from)
		return cli.ExitUsage
	}
	if o.legacyOnly && (o.project || o.allProjects || o.sessions != "") {
		e.Errorf("--legacy-only runs only the migration into history-global.jsonl: drop --project, --all-projects and --sessions")
		return cli.ExitUsage
	}
	st := e.Store(o.storeDir)
	var canon string
	if !o.allProjects && !o.legacyOnly {
		dir := o.projectDir
		if dir == "" {
			wd, err := os.Getwd()
			if err != nil {
				e.Errorf("finding the working directory: %v: pass --project=DIR", err)
				return cli.ExitUsage
			}
			dir = wd
		}
		if canon, err = store.Canonical(dir); err != nil {
			e.Errorf("resolving --project %q: %v", dir, err)
			return cli.ExitUsage
		}
	}

	pol := e.Policy()
	if !pol.On {
		e.Errorf("%s: nothing was imported", pol.OffHint())
		return cli.ExitOK
	}

	explicit := !all
	srcs, legs, unsupported := sources(e, names, o.sessions)
	for _, n := range unsupported {
		if explicit {
			e.Warnf("%s: this build has no reader for it yet: skipped", n)
		}
	}

	var prog *seed.Progress
	var stopProgress func()
	if f, ok := e.Stderr.(*os.File); ok && !o.quiet && isatty.IsTerminal(f.Fd()) {
		prog = &seed.Progress{}
		stopProgress = startProgress(f, e.Name, prog)
	}
	r := seed.New(seed.Options{Store: st, Project: canon, DryRun: o.dryRun, Progress: prog,
		NoRedact: !redact.Enabled(e.Getenv(redact.EnvVar))})

	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	go func() {
		s := <-sigs
		r.Interrupt()
		if stopProgress != nil {
			stopProgress()
		}
		e.Errorf("interrupted: what was not written yet was not imported; run hist-seed again")
		os.Exit(exitInterrupt + int(s.(syscall.Signal)))
	}()

	out := &report{DryRun: o.dryRun, Store: st.Root, Sources: []sourceReport{}, Seeds: []seedReport{}}
	code := cli.ExitOK
	worse := func(c int) {
		if rank(c) < rank(code) {
			code = c
		}
	}

	mig, merr := r.Migrate(legs)
	var brep *seed.Report
	var berr error
	if !o.legacyOnly && mig.Untrusted == nil {
		brep, berr = r.Bootstrap(srcs)
	}
	if stopProgress != nil {
		stopProgress()
	}

	// The migration's outcome.
	out.Migration = migrationJSON(mig)
	if merr != nil {
		e.Errorf("legacy migration: %v: nothing more was migrated; fix it and run hist-seed again", merr)
		out.Errors = append(out.Errors, "legacy migration: "+merr.Error())
		worse(cli.ExitFailure)
	}
	if mig.Untrusted != nil {
		e.Errorf("%v: nothing was imported; the import waits until hidden.json can be read", mig.Untrusted)
		worse(cli.ExitUntrusted)
	}
	if mig.LockHeld != "" {
		e.Errorf("legacy migration skipped: %s exists (a hist-seed was stopped while migrating, or one is running): remove that folder by hand once no hist-seed runs", mig.LockHeld)
		worse(exitMigLock)
	}
	if mig.Busy != nil {
		e.Errorf("legacy migration: %v: nothing was migrated; run hist-seed again", mig.Busy)
		worse(exitRetry)
	}
	for _, s := range mig.Sources {
		switch s.Status {
		case seed.LegacyMigrated, seed.LegacyWould:
			if o.quiet {
				continue
			}
			verb := "added to"
			if s.Status == seed.LegacyWould {
				verb = "would be added to"
			}
			fmt.Fprintf(e.Stderr, "%s: legacy %s: %s %s %s from %s%s\n", e.Name, s.Name, prompts(s.Added), verb,
				store.GlobalName, s.Path, extras(s.Hidden, s.Dupes, s.Stats.Malformed, "already there"))
		case seed.LegacyRetry:
			e.Errorf("legacy %s: %s: nothing was migrated from it; run hist-seed again later", s.Name, s.Err)
			worse(exitRetry)
		case seed.LegacySkipped:
			if s.Err != "" {
				e.Errorf("legacy %s: %s: %s, skipped", s.Name, s.Path, s.Err)
			}
		}
	}
	if o.legacyOnly || brep == nil {
		return finish(e, o, out, code)
	}

	// The bootstrap's outcome.
	out.Sources, out.Seeds = bootstrapJSON(brep)
	if berr != nil {
		out.Errors = append(out.Errors, berr.Error())
		worse(cli.ExitFailure)
		// A seed file that could not be written is reported below; a
		// failure before any was (a temp file, the lock) is said here.
		if !slices.ContainsFunc(brep.Files, func(f seed.FileResult) bool { return f.Status == seed.FileFailed }) {
			e.Errorf("%v: no seed file was written; fix it and run hist-seed again", berr)
		}
	}
	if brep.Untrusted != nil {
		e.Errorf("%v: no seed file was written; the import waits until hidden.json can be read", brep.Untrusted)
		worse(cli.ExitUntrusted)
	}
	if brep.Busy != nil {
		e.Errorf("%v: no seed file was written; run hist-seed again", brep.Busy)
		worse(exitRetry)
	}
	var missing []string
	for _, s := range brep.Sources {
		switch s.Status {
		case seed.SourceMissing:
			if explicit {
				if !o.quiet {
					fmt.Fprintf(e.Stderr, "%s: %s: no transcripts at %s\n", e.Name, s.Name, s.Root)
				}
			} else {
				missing = append(missing, s.Name)
			}
		case seed.SourceRetry:
			e.Errorf("%s: %s: nothing was written for %s; run hist-seed again later", s.Name, s.Err, s.Name)
			worse(exitRetry)
		case seed.SourceLayout:
			e.Errorf("%s: layout not recognised (%s): skipped", s.Name, s.Err)
			worse(exitLayout)
		case seed.SourceSeeded:
			if !o.quiet {
				fmt.Fprintf(e.Stderr, "%s: %s: this project's %s exists: its transcripts were not read again\n", e.Name, s.Name, seed.FileName(s.Name))
			}
		case seed.SourceRead:
			if !o.quiet {
				fmt.Fprintf(e.Stderr, "%s: %s: read %d files (%s) in %s: %s%s\n", e.Name, s.Name, s.Stats.Files,
					mb(s.Stats.Bytes), s.Elapsed.Round(time.Millisecond), prompts(s.Stats.Prompts), sourceExtras(s))
			}
		}
	}
	if len(missing) > 0 && !o.quiet {
		fmt.Fprintf(e.Stderr, "%s: not found: %s\n", e.Name, strings.Join(missing, ", "))
	}
	if brep.RegistryErr != "" {
		e.Warnf("updating %s: %s (the seeds are written; labels may show the project hash)", st.Registry(), brep.RegistryErr)
	}
	for _, f := range brep.Files {
		if f.Status == seed.FileFailed {
			e.Errorf("%s: %s: writing %s: %s: nothing was written for it; fix it and run hist-seed again", f.Source, f.Cwd, f.Path, f.Err)
			continue
		}
		if o.quiet {
			continue
		}
		name := filepath.Base(f.Path)
		var what string
		switch f.Status {
		case seed.FileWritten:
			what = fmt.Sprintf("%s written to %s", prompts(f.Prompts), name)
		case seed.FileWould:
			what = fmt.Sprintf("%s would be written to %s (dry run)", prompts(f.Prompts), name)
		case seed.FileExists:
			what = fmt.Sprintf("%s exists: left as it is (a seed is never regenerated)", name)
		case seed.FileNone:
			what = "no prompts for this project"
		}
		fmt.Fprintf(e.Stderr, "%s: %s: %s: %s%s\n", e.Name, f.Source, f.Cwd, what, extras(f.Hidden, f.Dupes, 0, "repeated"))
	}
	return finish(e, o, out, code)
}

func finish(e *cli.Env, o options, out *report, code int) int {
	out.Exit = code
	if o.json {
		enc := json.NewEncoder(e.Stdout)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		enc.Encode(out)
	}
	return code
}

// rank orders exit codes: the lower, the more it matters.
func rank(code int) int {
	switch code {
	case cli.ExitFailure:
		return 1
	case cli.ExitUntrusted:
		return 2
	case exitRetry:
		return 3
	case exitMigLock:
		return 4
	case exitLayout:
		return 5
	}
	return 9
}

func parseFrom(v string) (names []string, all bool, err error) {
	want := map[string]bool{}
	for _, n := range strings.Split(v, ",") {
		n = strings.ToLower(strings.TrimSpace(n))
		switch {
		case n == "":
			continue
		case n == allSourcesWord:
			all = true
			for _, k := range knownSources {
				want[k] = true
			}
		case contains(knownSources, n):
			want[n] = true
		default:
			return nil, false, fmt.Errorf("unknown source %q: use %s or %s", n, strings.Join(knownSources, ", "), allSourcesWord)
		}
	}
	if len(want) == 0 {
		return nil, false, fmt.Errorf("no source named: use %s or %s", strings.Join(knownSources, ", "), allSourcesWord)
	}
	for _, k := range knownSources {
		if want[k] {
			names = append(names, k)
		}
	}
	return names, all, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if strings.TrimSpace(x) == s {
			return true
		}
	}
	return false
}

func prompts(n int) string {
	if n == 1 {
		return "1 prompt"
	}
	return fmt.Sprintf("%d prompts", n)
}

func mb(n int64) string { return fmt.Sprintf("%.1f MB", float64(n)/1e6) }

func extras(hidden, dupes, malformed int, dupWord string) string {
	var parts []string
	if hidden > 0 {
		parts = append(parts, fmt.Sprintf("%d hidden by hidden.json", hidden))
	}
	if dupes > 0 {
		parts = append(parts, fmt.Sprintf("%d %s", dupes, dupWord))
	}
	if malformed > 0 {
		parts = append(parts, fmt.Sprintf("%d malformed lines skipped", malformed))
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, ", ") + " left out)"
}

func sourceExtras(s seed.SourceResult) string {
	var parts []string
	if s.Stats.Malformed > 0 {
		parts = append(parts, fmt.Sprintf("%d malformed lines skipped", s.Stats.Malformed))
	}
	if s.Stats.Skipped > 0 {
		parts = append(parts, fmt.Sprintf("%d files passed over", s.Stats.Skipped))
	}
	if s.NoCwd > 0 {
		parts = append(parts, fmt.Sprintf("%d prompts without a project folder", s.NoCwd))
	}
	if s.Approx > 0 {
		parts = append(parts, fmt.Sprintf("%d with approximate times", s.Approx))
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, ", ") + ")"
}

// report is what --json prints.
type report struct {
	Store     string          `json:"store"`
	DryRun    bool            `json:"dry_run"`
	Migration migrationReport `json:"migration"`
	Sources   []sourceReport  `json:"sources"`
	Seeds     []seedReport    `json:"seeds"`
	Errors    []string        `json:"errors,omitempty"`
	Exit      int             `json:"exit"`
}

type migrationReport struct {
	LockHeld  string         `json:"lock_held,omitempty"`
	Untrusted string         `json:"untrusted,omitempty"`
	Busy      string         `json:"busy,omitempty"`
	Sources   []legacyReport `json:"sources"`
}

type legacyReport struct {
	Source    string `json:"source"`
	Path      string `json:"path"`
	Status    string `json:"status"`
	Read      int    `json:"read"`
	Added     int    `json:"added"`
	Hidden    int    `json:"hidden"`
	Repeated  int    `json:"already_there"`
	Malformed int    `json:"malformed"`
	Error     string `json:"error,omitempty"`
}

type sourceReport struct {
	Source    string  `json:"source"`
	Root      string  `json:"root"`
	Status    string  `json:"status"`
	Files     int     `json:"files"`
	Bytes     int64   `json:"bytes"`
	Prompts   int     `json:"prompts"`
	Malformed int     `json:"malformed"`
	Skipped   int     `json:"skipped"`
	NoCwd     int     `json:"no_cwd"`
	Approx    int     `json:"approx_times"`
	Seconds   float64 `json:"seconds"`
	Error     string  `json:"error,omitempty"`
}

type seedReport struct {
	Project  string `json:"project"`
	Cwd      string `json:"cwd"`
	Source   string `json:"source"`
	File     string `json:"file"`
	Status   string `json:"status"`
	Prompts  int    `json:"prompts"`
	Hidden   int    `json:"hidden"`
	Repeated int    `json:"repeated"`
	Error    string `json:"error,omitempty"`
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func migrationJSON(m *seed.MigrationReport) migrationReport {
	out := migrationReport{LockHeld: m.LockHeld, Untrusted: errString(m.Untrusted), Busy: errString(m.Busy),
		Sources: []legacyReport{}}
	for _, s := range m.Sources {
		out.Sources = append(out.Sources, legacyReport{
			Source: s.Name, Path: s.Path, Status: s.Status, Read: s.Stats.Prompts, Added: s.Added,
			Hidden: s.Hidden, Repeated: s.Dupes, Malformed: s.Stats.Malformed, Error: s.Err,
		})
	}
	return out
}

func bootstrapJSON(b *seed.Report) ([]sourceReport, []seedReport) {
	srcs, seeds := []sourceReport{}, []seedReport{}
	for _, s := range b.Sources {
		srcs = append(srcs, sourceReport{
			Source: s.Name, Root: s.Root, Status: s.Status, Files: s.Stats.Files, Bytes: s.Stats.Bytes,
			Prompts: s.Stats.Prompts, Malformed: s.Stats.Malformed, Skipped: s.Stats.Skipped, NoCwd: s.NoCwd, Approx: s.Approx,
			Seconds: s.Elapsed.Seconds(), Error: s.Err,
		})
	}
	for _, f := range b.Files {
		seeds = append(seeds, seedReport{
			Project: f.Project, Cwd: f.Cwd, Source: f.Source, File: f.Path, Status: f.Status,
			Prompts: f.Prompts, Hidden: f.Hidden, Repeated: f.Dupes, Error: f.Err,
		})
	}
	sort.SliceStable(seeds, func(i, j int) bool { return seeds[i].Cwd < seeds[j].Cwd })
	return srcs, seeds
}
