// Package histcompact is the hist-compact command; cmd/hist-compact runs it, and the
// tests link it into their binary (internal/testbin).
package histcompact

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"hist/lib/audit"
	"hist/lib/cli"
	"hist/lib/compact"
	"hist/lib/lock"
	"hist/lib/redact"
	"hist/lib/store"
	"hist/lib/termsafe"
	"hist/lib/words"
)

const usage = `Usage:
    hist-compact [--project [DIR] | --all] [--current FILE_OR_INSTANCE] [--dry-run] [--json]
                 [--max-files N] [--max-entries N] [--keep N] [--wait DURATION] [--store DIR] [-v]
    hist-compact --redact [--project [DIR] | --all] [--dry-run] [--json] [--wait DURATION] [--store DIR]
    hist-compact --check [--store DIR]

Merges a project's older store files into one compact-<ms>-<rand>.jsonl, so
that the number of files stays small. It is housekeeping, not a retention
limit: every visible prompt stays visible; only prompts hidden by a deletion
record in hidden.json are left out of the compact file.

A project is compacted when its folder holds more than --max-files files or
more than --max-entries entries. Then the --keep newest files (by their most
recent entry, or their modification time when they have none) stay as they
are, and every older file is merged, oldest first; earlier compact files are
merged again like any other file. Nothing runs unless at least two files can
be merged. Never merged: seed files (seed.jsonl, seed-<agent>.jsonl), the
--current capture file, history-global.jsonl.

Other agents may keep appending while it runs, and it may be killed at any
moment: each file is renamed to a claim (<name>.gc-<ms>-<rand>.jsonl) before
it is read, the compact file is written completely (temp file, fsync,
rename) before any claim is removed, and lines written to a claim meanwhile
are carried over. Claims and temp files left by a killed run are handled by
the next run. Readers (hist-list) read claims like any other store file.

--redact re-redacts the stored prompts of the scope (a project's files,
seed files included; with --all every project and history-global.jsonl):
each record holding a secret gets its text redacted as a capture would
now (see docs/redaction.md). It merges nothing: a file that changes is
rewritten in place (temp file, fsync, rename, with lines appended
meanwhile carried over), every other file is left untouched. A hidden
prompt that holds a secret is removed rather than redacted. It runs
whatever GENTLE_PI_HISTORY_REDACT says, but not with capture off.

--check prints a one-screen health report of the store and changes
nothing (it takes no lock and runs with capture off too): files, entries,
malformed lines, projects, hidden.json, leftover claims, carry and temp
files, redaction (with the number of stored prompts it would still
change), permission problems (a folder not 0700, a file not 0600, a
symbolic link, a file that is not a regular file) and the migration lock.
Each problem is a line starting with "problem:" and ending with the command
that fixes it (such as "chmod 700 ~/.pi/agent/history" for a store folder
made 0755 by mkdir -p); a "problems:" line counts them.

Options:
    --project [DIR]        The project at DIR (default: the working directory).
                           The default scope.
    --all                  Every project under the store (for cron).
    --current FILE         The capture file of the session that is shutting
                           down, never merged: a path, a base name, or an
                           instance id (ID means this machine's ID@MACHINE.jsonl).
    --dry-run              Say what would be merged; change nothing.
    --json                 Print a report on stdout (one JSON object).
    --max-files N          Compact above N files (default 50).
    --max-entries N        Compact above N entries (default 5000).
    --keep N               The N newest files stay (default 10).
    --wait DURATION        How long to wait for a delete or another compaction
                           to finish (default 10s).
    --store DIR            The store. Default: $PI_CODING_AGENT_DIR/history or
                           ~/.pi/agent/history.
    --redact               Re-redact the scope's prompts (see above).
    --check                Print the store's health report (see above).
    -v                     Also say why nothing ran when capture is off and
                           stderr is not a terminal, and name each merged file.

It prints one line a project on stderr: the files merged, the entries written
and dropped as hidden, or why nothing ran. With capture off it does nothing
to the store (it says why when stderr is a terminal, or with -v).

Exit status:
    0  compacted, or nothing to do (below the thresholds, fewer than two files
       to merge, capture off, --dry-run)
    1  something could not be done; nothing is lost, and stderr says what
       stays on disk: a file that cannot be read is left as it is; if the
       compact file cannot be written the claimed files stay (as .gc- files,
       still listed); a claim that cannot be removed stays (its prompts are
       listed once)
    2  usage error, a --project DIR that does not exist (and is not in the
       store), or HOME unset or not absolute while the store needs it
    3  hidden.json cannot be trusted: nothing was changed; the message says
       how to recover (chmod for a permission problem, cp from its .prev
       copy when it is damaged)
    4  another delete or compaction held the store for the whole --wait:
       nothing was changed; run it again later
    5  --check found problems (each on a "problem:" line, with its fix)

Examples:
    $ hist-compact                                  # this project, if needed
    $ hist-compact --project ~/src/app --current "$PI_SESSION_ID"
    $ hist-compact --all --dry-run
    $ hist-compact --all --json | jq '.projects[] | {cwd, merged, written}'
    $ hist-compact --redact --all
    $ hist-compact --check
`

const (
	exitBusy     = 4
	exitProblems = 5
)

// Main runs hist-compact with the process's arguments and exits with its status.
func Main() { os.Exit(run(cli.OSEnv("hist-compact"))) }

// report is the --json output.
type report struct {
	Capture  string           `json:"capture"` // "on" or "off"
	Reason   string           `json:"reason,omitempty"`
	DryRun   bool             `json:"dry_run"`
	Projects []*projectReport `json:"projects"`
}

type projectReport struct {
	Cwd    string `json:"cwd"`
	Action string `json:"action"` // compacted, nothing, dry-run, failed
	*compact.Report
}

func run(e *cli.Env) int {
	var f options
	if code, ok := f.parse(e); !ok {
		return code
	}
	st := e.Store(f.storeDir)
	if f.check {
		return runCheck(e, st)
	}
	sc, dir, ok := e.Scope(&f.scope, st)
	if !ok {
		return cli.ExitUsage
	}
	if f.redact {
		return runRedact(e, st, sc, f.dry, f.asJSON, f.wait)
	}
	return runCompact(e, st, sc, dir, &f)
}

// options are the command line's.
type options struct {
	storeDir                   string
	scope                      cli.ScopeFlags
	current                    string
	dry, asJSON, verbose       bool
	redact, check              bool
	maxFiles, maxEntries, keep int
	wait                       time.Duration
}

// parse reads the command line and checks it; ok false ends the run with
// code.
func (f *options) parse(e *cli.Env) (code int, ok bool) {
	fs := e.Flags()
	storeDir := cli.StoreFlag(fs)
	f.scope.Register(fs)
	fs.StringVar(&f.current, "current", "", "")
	fs.BoolVar(&f.dry, "dry-run", false, "")
	fs.BoolVar(&f.asJSON, "json", false, "")
	fs.IntVar(&f.maxFiles, "max-files", compact.DefaultMaxFiles, "")
	fs.IntVar(&f.maxEntries, "max-entries", compact.DefaultMaxEntries, "")
	fs.IntVar(&f.keep, "keep", compact.DefaultKeep, "")
	fs.DurationVar(&f.wait, "wait", 10*time.Second, "")
	fs.BoolVar(&f.verbose, "v", false, "")
	fs.BoolVar(&f.redact, "redact", false, "")
	fs.BoolVar(&f.check, "check", false, "")
	args, code, stop := e.ParseArgs(fs, usage, cli.SplitOptional(e.Args, "project"))
	if stop {
		return code, false
	}
	f.storeDir = *storeDir
	set := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	if msg := f.problem(args, set); msg != "" {
		e.Errorf("%s", msg)
		return cli.ExitUsage, false
	}
	return cli.ExitOK, true
}

// problem says what is wrong with the command line, "" when nothing.
func (f *options) problem(args []string, set map[string]bool) string {
	if len(args) > 0 {
		return fmt.Sprintf("unexpected argument %q: hist-compact takes only flags (a project folder goes after --project)", args[0])
	}
	for _, n := range []struct {
		name string
		v    int
	}{{"--max-files", f.maxFiles}, {"--max-entries", f.maxEntries}, {"--keep", f.keep}} {
		if n.v < 0 {
			return fmt.Sprintf("%s %d: give a number of 0 or more", n.name, n.v)
		}
	}
	if f.wait < 0 {
		return fmt.Sprintf("--wait %v: give a duration of 0 or more, such as 10s", f.wait)
	}
	if f.redact && f.check {
		return "--redact and --check are separate modes: use one at a time"
	}
	if f.check {
		for _, n := range []string{"project", "all", "current", "dry-run", "json", "max-files", "max-entries", "keep", "wait"} {
			if set[n] {
				return "--check takes only --store: it reports on the whole store"
			}
		}
	}
	if f.redact {
		for _, n := range []string{"current", "max-files", "max-entries", "keep"} {
			if set[n] {
				return fmt.Sprintf("--%s does not apply to --redact: it merges nothing", n)
			}
		}
	}
	if set["current"] && strings.TrimSpace(f.current) == "" {
		return "--current is empty: give the capture file of the session that is shutting down (a path, a name or an instance id)"
	}
	return ""
}

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

// runCompact compacts the scope's project folders.
func runCompact(e *cli.Env, st store.Store, sc store.Scope, dir string, f *options) int {
	opt := compact.Options{MaxFiles: f.maxFiles, MaxEntries: f.maxEntries, Keep: f.keep, Current: compact.CurrentName(f.current)}
	out := &report{Capture: "on", DryRun: f.dry, Projects: []*projectReport{}}
	pol := e.Policy()
	if !pol.On {
		out.Capture, out.Reason = "off", pol.OffHint()
		if f.verbose || termsafe.IsTerminal(e.Stderr) {
			e.Say("nothing to do: %s", pol.OffHint())
		}
		return finish(e, out, f.asJSON, cli.ExitOK)
	}
	if code := e.NeedMachine(&st); code != cli.ExitOK {
		return finish(e, out, f.asJSON, code)
	}
	hashes, code, stop := projects(e, st, sc)
	if stop {
		return finish(e, out, f.asJSON, code)
	}
	reg := st.LoadRegistry()
	label := reg.Label
	if !sc.All {
		hashes, label = folders(st, sc, dir, reg)
	}
	if !f.dry && anyDir(st, hashes) {
		l, code := lockStore(e, st, f.wait)
		if l == nil {
			return finish(e, out, f.asJSON, code)
		}
		defer l.Release()
		st.OwnsLegacy(true) // under the lock: see docs/store-format.md
	}
	hidden, ok := e.LoadHidden(st)
	if !ok {
		out.Reason = "hidden.json cannot be trusted"
		return finish(e, out, f.asJSON, cli.ExitUntrusted)
	}
	opt.Hidden = hidden
	code = cli.ExitOK
	for _, h := range hashes {
		pr := compactProject(st, h, opt, f.dry)
		pr.Cwd = reg[h]
		if pr.Report.Failed() {
			code = cli.ExitFailure
		}
		e.Say("%s: %s", label(h), summary(pr.Report, f.dry))
		if f.verbose {
			for _, m := range pr.Report.Merge {
				e.Say("  %s %s (%s)", map[bool]string{true: "would merge", false: "merged"}[f.dry], m.Name, words.Plural(m.Entries, "entry", "entries"))
			}
		}
		out.Projects = append(out.Projects, pr)
	}
	return finish(e, out, f.asJSON, code)
}

// folders lists the store folders of a project scope that exist (or its
// main one when none does), each with its label for the messages: the
// project's folder; for the one its prompts went to by its path before
// it was known by its repository's remote, "(prompts captured by its
// path)"; for the other folders of its repository, their own folder from
// the registry. So each folder is named once, and no two with one name.
// The project's folders are dir in reg, for --json.
func folders(st store.Store, sc store.Scope, dir string, reg store.Registry) ([]string, func(string) string) {
	var out []string
	for _, h := range append([]string{sc.Project}, sc.Also...) {
		if st.HasProject(h) {
			out = append(out, h)
		}
	}
	if len(out) == 0 {
		out = []string{sc.Project}
	}
	byPath, both := store.Hash(dir), out[0] == sc.Project
	reg[sc.Project], reg[byPath] = dir, dir
	return out, func(h string) string {
		if h == byPath && h != sc.Project && both {
			return dir + " (prompts captured by its path)"
		}
		return reg.Label(h)
	}
}

// lockStore takes the rewriters' lock, or says why it could not and
// returns the exit code.
func lockStore(e *cli.Env, st store.Store, wait time.Duration) (*lock.Lock, int) {
	l, err := lock.Acquire(st.Lock(), wait)
	switch {
	case errors.Is(err, lock.ErrTimeout):
		e.Errorf("%v: nothing was changed; run it again later", err)
		return nil, exitBusy
	case err != nil:
		e.Errorf("%v: nothing was changed%s", err, chmodHint(st.Lock(), err))
		return nil, cli.ExitFailure
	}
	return l, cli.ExitOK
}

// chmodHint ends a message on a permission error with the chmod that
// gives hist back path ("" for any other error).
func chmodHint(path string, err error) string {
	if c := words.Chmod(path, err); c != "" {
		return "; let hist in: " + c
	}
	return ""
}

// projects lists the project folders of the scope; stop ends the run
// with code.
func projects(e *cli.Env, st store.Store, sc store.Scope) (hashes []string, code int, stop bool) {
	if !sc.All {
		return append([]string{sc.Project}, sc.Also...), cli.ExitOK, false
	}
	hashes, err := st.ProjectHashes()
	if err != nil {
		e.Errorf("listing the projects in %s: %s: nothing was changed%s", st.Projects(), words.Describe(err), chmodHint(st.Projects(), err))
		return nil, cli.ExitFailure, true
	}
	if len(hashes) == 0 {
		e.Say("nothing to do: no project in %s", st.Projects())
		return nil, cli.ExitOK, true
	}
	return hashes, cli.ExitOK, false
}

// compactProject plans and runs (or, dry, only plans) one project folder.
func compactProject(st store.Store, h string, opt compact.Options, dry bool) *projectReport {
	pr := &projectReport{}
	plan, err := compact.PlanProject(st, h, opt)
	switch {
	case err != nil:
		pr.Report = &compact.Report{Plan: plan}
		pr.Report.Errors = append(pr.Report.Errors, compact.FileError{Path: plan.Dir, Err: "listing the folder: " + words.Describe(err) + ": nothing was changed" + chmodHint(st.ProjectDir(h), err)})
	case dry:
		pr.Report = compact.DryRun(plan, opt)
	default:
		pr.Report = compact.Run(plan, opt)
	}
	pr.Action = action(pr.Report, dry)
	return pr
}

// finish prints out with --json and returns code.
func finish(e *cli.Env, out any, asJSON bool, code int) int {
	if asJSON {
		data, err := json.Marshal(out)
		if err == nil {
			data = append(data, '\n')
			_, err = e.Stdout.Write(data)
		}
		if err != nil && code == cli.ExitOK {
			return cli.ExitFailure
		}
	}
	return code
}

func action(r *compact.Report, dry bool) string {
	switch {
	case r.Failed() && r.Compact == "":
		return "failed"
	case !r.Plan.Runs() && !r.Failed():
		return "nothing"
	case dry:
		return "dry-run"
	}
	return "compacted"
}

// summary is a project's one line.
func summary(r *compact.Report, dry bool) string {
	var b strings.Builder
	p := r.Plan
	switch {
	case !p.Runs():
		fmt.Fprintf(&b, "nothing to do: %s", p.Reason)
		if r.Stale > 0 {
			fmt.Fprintf(&b, "; removed %s", words.Plural(r.Stale, "stale temp file", "stale temp files"))
		}
	case dry:
		fmt.Fprintf(&b, "dry run: would merge %d of %s into one compact file: %s, %d dropped as hidden",
			r.Merged, words.Plural(p.Files, "file", "files"), words.Plural(r.Written, "entry", "entries"), r.Hidden)
	case r.Compact == "" && len(r.ClaimsLeft) == 0:
		fmt.Fprintf(&b, "could not claim any of the %d files to merge: nothing was changed", len(p.Merge))
	case r.Compact == "":
		fmt.Fprintf(&b, "could not compact %d of %s", len(p.Merge), words.Plural(p.Files, "file", "files"))
	default:
		fmt.Fprintf(&b, "merged %d of %s into %s: %s written, %d dropped as hidden",
			r.Merged, words.Plural(p.Files, "file", "files"), filepath.Base(r.Compact), words.Plural(r.Written, "entry", "entries"), r.Hidden)
	}
	if p.Runs() {
		if r.Duplicates > 0 {
			fmt.Fprintf(&b, ", %s written once", words.Plural(r.Duplicates, "repeated line", "repeated lines"))
		}
		if r.Malformed > 0 {
			fmt.Fprintf(&b, ", %s kept unchanged", words.Plural(r.Malformed, "malformed line", "malformed lines"))
		}
		if r.Stale > 0 {
			fmt.Fprintf(&b, ", %s removed", words.Plural(r.Stale, "stale temp file", "stale temp files"))
		}
	}
	if p.Foreign > 0 {
		fmt.Fprintf(&b, "; %s of other machines left to them", words.Plural(p.Foreign, "file", "files"))
	}
	var problems []string
	for _, u := range p.Unreadable {
		problems = append(problems, fmt.Sprintf("cannot read %s (%s): left as it is", filepath.Base(u.Path), u.Err))
	}
	for _, f := range r.Errors {
		problems = append(problems, fmt.Sprintf("%s: %s", filepath.Base(f.Path), f.Err))
	}
	const shown = 3
	for i, pr := range problems {
		if i == shown {
			fmt.Fprintf(&b, "; and %s like these (--json lists them)", words.Plural(len(problems)-shown, "more problem", "more problems"))
			break
		}
		b.WriteString("; " + pr)
	}
	for _, c := range r.Carries {
		fmt.Fprintf(&b, "; lines that arrived last are in %s", filepath.Base(c))
	}
	return b.String()
}

func anyDir(st store.Store, hashes []string) bool {
	return slices.ContainsFunc(hashes, func(h string) bool {
		_, err := os.Stat(st.ProjectDir(h))
		return !errors.Is(err, fs.ErrNotExist)
	})
}
