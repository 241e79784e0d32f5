// Package histdelete is the hist-delete command; cmd/hist-delete runs it, and the
// tests link it into their binary (internal/testbin).
package histdelete

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/mattn/go-isatty"

	"hist/lib/cli"
	"hist/lib/deletion"
	"hist/lib/history"
	"hist/lib/identity"
	"hist/lib/lineenc"
	"hist/lib/store"
	"hist/lib/termsafe"
	"hist/lib/tombstone"
	"hist/lib/words"
)

const usage = `Usage:
    hist-delete [--project DIR | --all] [--hide] [--dry-run] [--json] [--store DIR] TEXT
    hist-delete [--project DIR | --all] [--hide] [--dry-run] [--json] [--store DIR] --stdin[=FORMAT] | -0
    hist-delete [--project DIR | --all] [--dry-run] [--json] [--store DIR] FILTERS

Deletes a prompt from the prompt history: every copy of it in the scope's
store files is removed (each affected file is rewritten atomically; files
without a copy are not touched), then a tombstone ("sha256:" and the hash of
the normalized prompt, never its text) is added to hidden.json so the prompt
stays hidden everywhere hist reads and is not imported again from session
transcripts. Session transcripts are never modified.

A prompt is matched by its identity: whitespace runs collapsed, leading and
trailing whitespace trimmed, letter case ignored. Only that exact prompt is
deleted: prompts that merely share a beginning stay.

A prompt with no copy in the scope is not tombstoned: hist-delete says so
("no copy of ... in this project: nothing removed") and exits 9 when nothing
matched at all. --hide tombstones it anyway, so it stays hidden and is not
imported again. Copies left outside the scope are counted ("2 copies remain
in 1 other project: hist-delete --all removes them").

Scopes:
    (none)           The working directory's project. In a git repository,
                     the project is the whole repository: copies are removed
                     from every folder of it, and the report says so.
    --project DIR    The project at DIR (--project=DIR works too): its
                     capture, seed and compact files and the carry and claim
                     files beside them, and the copies in
                     history-global.jsonl that came from it (same session).
                     The argument after --project is always the folder; the
                     prompt is another argument.
    --all            Every project, plus history-global.jsonl and its carry files.

Input:
    TEXT             The prompt to delete, as one argument.
    --stdin          Read the prompts to delete from standard input, in
                     hist-list's default format: one prompt a line, "\\" for a
                     backslash, "\n" for a newline, "\0" for a NUL. Empty
                     lines are skipped.
    --stdin=nul, -0  NUL-terminated raw prompts (hist-list -0).
    --stdin=json     One JSON object a line with a "text" string (hist-list --json).
                     So any hist-list output piped back deletes exactly what
                     was listed. Input that looks like another format than the
                     one named, or that names a prompt the store holds no
                     copy of (a record cut short, say), is refused before
                     anything is changed (unless --hide).
    --hide           Tombstone the prompts even where the scope holds no copy.

` + cli.FilterUsage + `    Given without TEXT or --stdin, the filters choose the prompts to delete:
    every prompt that hist-list lists with them, each with every copy of it
    in the scope (a tombstone hides every copy anyway). With TEXT or --stdin
    they are refused.

Output:
    --dry-run        Report what would be removed (files on stdout, a summary
                     on stderr); change nothing.
    --json           Print a JSON report on stdout: outcome, notice, prompts,
                     copies, files_rewritten, files_failed, carry_files,
                     tombstones, files_scanned, dry_run, error,
                     already_tombstoned, not_found, copies_elsewhere,
                     tombstones_dropped.
    One line on stderr says what was done: copies removed, files rewritten,
    tombstones written (new ones; prompts tombstoned already are counted
    apart); or, when something failed, the notice below. Lines after it name
    the prompts with no copy in the scope, the copies left outside it, and
    tombstones hidden.json's cap of 1000 dropped.

Deletes need capture on (hist-capture --enable, or GENTLE_PI_HISTORY_CAPTURE=1):
with capture off hist-delete names the control that decides and changes nothing.

Exit status:
    0  deleted: every copy in the scope removed and the tombstone written (or,
       with --dry-run, nothing would fail)
    1  standard input could not be read; nothing was changed
    2  usage error, standard input refused, a --project DIR that does not
       exist and is not in the store, or HOME unset; nothing was changed
    3  hidden.json cannot be trusted (unreadable, corrupt, not an array of
       strings): nothing was changed; the message says how to recover (chmod
       for a permission problem, cp from its .prev copy when it is damaged)
    4  "Store delete failed; nothing was removed." (the store could not be
       locked or listed; no tombstone was written)
    5  "Some history files could not be rewritten; the prompt is hidden, but
       copies may remain on disk." (the others were cleaned; the failed files
       are named on stderr; with --dry-run: some files cannot be read)
    6  "Deleted from the store, but hiding failed — the prompt may reappear
       from session transcripts."
    7  "Some history files could not be rewritten and hiding failed — the
       prompt may reappear from those files or from session transcripts."
    8  capture is off: refused, nothing was changed
    9  no copy of the prompt (of any prompt given) in the scope, or no prompt
       that the filters select: nothing was removed and no tombstone written
       (--hide writes it)

Examples:
    $ hist-delete 'my AWS key is AKIA...'
    $ hist-delete --project ~/src/app 'deploy with password hunter2'
    $ hist-delete --all --dry-run 'deploy to prod with password hunter2'
    $ hist-delete --since 1h --src claude --dry-run
    $ hist-list --all | grep -F 'AKIA' | hist-delete --all --stdin
    $ hist-list -0 | grep -z token | hist-delete -0
    $ hist-list --all --json | jq -c 'select(.cwd == "/tmp")' | hist-delete --all --stdin=json
`

// Exit codes above cli's.
const (
	exitStdin          = cli.ExitFailure
	exitNothingRemoved = 4
	exitPartlyHidden   = 5
	exitNotHidden      = 6
	exitBoth           = 7
	exitCaptureOff     = 8
	exitNoCopy         = 9
)

// format is the --stdin flag: a bool flag that also takes a format name.
type format struct{ name string }

func (f *format) String() string   { return f.name }
func (f *format) IsBoolFlag() bool { return true }
func (f *format) Set(v string) error {
	switch v {
	case "true", "lines", "line", "text":
		f.name = "lines"
	case "false":
		f.name = ""
	case "nul", "0", "null":
		f.name = "nul"
	case "json":
		f.name = "json"
	default:
		return fmt.Errorf("unknown format %q: use --stdin (lines), --stdin=nul or --stdin=json", v)
	}
	return nil
}

// Main runs hist-delete with the process's arguments and exits with its status.
func Main() { os.Exit(run(cli.OSEnv("hist-delete"))) }

func run(e *cli.Env) int {
	fs := e.Flags()
	storeDir := cli.StoreFlag(fs)
	var scope cli.ScopeFlags
	scope.Register(fs)
	var filters cli.FilterFlags
	filters.Register(fs)
	var in format
	fs.Var(&in, "stdin", "")
	nul := fs.Bool("0", false, "")
	dry := fs.Bool("dry-run", false, "")
	asJSON := fs.Bool("json", false, "")
	hide := fs.Bool("hide", false, "")
	// "--project DIR" always takes DIR as the folder; the prompt is
	// another argument.
	args, code, stop := e.ParseArgs(fs, usage, cli.SplitOptional(e.Args, "project"))
	if stop {
		return code
	}
	if *nul {
		if in.name != "" && in.name != "nul" {
			e.Errorf("-0 and --stdin=%s name two input formats: choose one", in.name)
			return cli.ExitUsage
		}
		in.name = "nul"
	}
	filter, ok := e.Filter(&filters)
	if !ok {
		return cli.ExitUsage
	}
	selecting := filter.On()
	if msg := inputProblem(e.Name, args, in.name, scope.ProjectDir, selecting); msg != "" {
		e.Errorf("%s", msg)
		return cli.ExitUsage
	}
	st := e.Store(*storeDir)
	sc, _, ok := e.Scope(&scope, st)
	if !ok {
		return cli.ExitUsage
	}

	pol := e.Policy()
	if !pol.On {
		e.Errorf("refused: %s; deletes need capture on: nothing was changed", pol.OffHint())
		return exitCaptureOff
	}
	if code := e.NeedMachine(&st); code != cli.ExitOK {
		return code
	}

	prompts := args
	if selecting {
		var code int
		if prompts, code = selected(e, st, sc, filter); code != cli.ExitOK {
			return code
		}
	}
	if in.name != "" {
		if f, ok := e.Stdin.(*os.File); ok && isatty.IsTerminal(f.Fd()) {
			e.Errorf("--stdin reads prompts from a pipe, not a terminal: pipe hist-list's output in (see '%s --help')", e.Name)
			return cli.ExitUsage
		}
		data, err := io.ReadAll(e.Stdin)
		if err != nil {
			e.Errorf("reading standard input: %v: nothing was changed", err)
			return exitStdin
		}
		prompts, err = lineenc.Parse(data, lineenc.Format(in.name))
		if err != nil {
			e.Errorf("%v: nothing was changed", err)
			return cli.ExitUsage
		}
		if len(prompts) == 0 {
			if *asJSON {
				writeJSON(e, deletion.Result{DryRun: *dry}, st.Hidden())
			}
			e.Say("no prompts on standard input: nothing to delete")
			return cli.ExitOK
		}
	}

	res := deletion.Delete(st, sc, prompts, deletion.Options{DryRun: *dry, Hide: *hide, Stored: in.name != "" || selecting})
	if *asJSON {
		writeJSON(e, res, st.Hidden())
	}
	where := "in this project"
	switch {
	case sc.All:
		where = "in the store"
	case scope.Repo != "":
		where = "in this repository"
		e.Say("the scope is the repository %s: every folder of it (%s in the store)", scope.Repo,
			words.Plural(len(slices.DeleteFunc(append([]string{sc.Project}, sc.Also...), func(h string) bool { return !st.HasProject(h) })), "folder", "folders"))
	}
	return report(e, res, where)
}

// selected lists the prompts of the scope that filter selects, as
// hist-list lists them; code is not ExitOK when hist-delete stops here.
func selected(e *cli.Env, st store.Store, sc store.Scope, filter history.Filter) ([]string, int) {
	hidden, ok := e.LoadHidden(st)
	if !ok {
		return nil, cli.ExitUntrusted
	}
	var prompts []string
	res := history.Stream(st, sc, hidden, history.Options{Filter: filter}, func(en history.Entry) bool {
		prompts = append(prompts, en.Text)
		return true
	})
	for _, f := range res.Failed {
		e.Warnf("could not read %v: the prompts only it holds are not deleted%s", f, f.Hint())
	}
	if len(prompts) == 0 {
		e.Say("no prompt in the scope that the filters select: nothing to delete")
		return nil, exitNoCopy
	}
	return prompts, cli.ExitOK
}

// inputProblem says what is wrong with the prompts given (or chosen by
// filters: selecting), "" when nothing.
func inputProblem(name string, args []string, format, projectDir string, selecting bool) string {
	switch {
	case selecting && (format != "" || len(args) > 0):
		return fmt.Sprintf("the filters choose the prompts to delete: give them without a prompt or --stdin (see '%s --help')", name)
	case selecting:
		return ""
	case format != "" && len(args) > 0:
		return fmt.Sprintf("a prompt argument and --stdin both name prompts: use one (see '%s --help')", name)
	case format == "" && len(args) == 0 && projectDir != "":
		return fmt.Sprintf("--project %s names the project folder, and no prompt is given: pass the prompt as one more argument, or pipe prompts with --stdin (see '%s --help')", projectDir, name)
	case format == "" && len(args) == 0:
		return fmt.Sprintf("no prompt given: pass it as one argument, or pipe prompts with --stdin (see '%s --help')", name)
	case len(args) > 1:
		return fmt.Sprintf("too many arguments (%d): quote the prompt as one argument, or pipe prompts with --stdin", len(args))
	case len(args) == 1 && identity.IsBlank(args[0]):
		return "the prompt is blank: nothing to delete"
	}
	return ""
}

// summary says what was done (or would be).
func summary(r deletion.Result) string {
	var b strings.Builder
	if r.DryRun {
		fmt.Fprintf(&b, "dry run: would remove %s of %s from %s",
			words.Plural(r.Copies, "copy", "copies"), words.Plural(r.Prompts, "prompt", "prompts"), words.Plural(len(r.Rewritten), "file", "files"))
		fmt.Fprintf(&b, " (%s scanned) and write %s%s; nothing was changed",
			words.Plural(r.Scanned, "file", "files"), words.Plural(r.Tombstones, "tombstone", "tombstones"), already(r))
		return b.String()
	}
	fmt.Fprintf(&b, "removed %s of %s, %s rewritten (%s scanned)",
		words.Plural(r.Copies, "copy", "copies"), words.Plural(r.Prompts, "prompt", "prompts"),
		words.Plural(len(r.Rewritten), "file", "files"), words.Plural(r.Scanned, "file", "files"))
	if r.Tombstones > 0 {
		fmt.Fprintf(&b, ", %s written%s", words.Plural(r.Tombstones, "tombstone", "tombstones"), already(r))
	} else {
		fmt.Fprintf(&b, ", no tombstone written%s", already(r))
	}
	if len(r.Carry) > 0 {
		fmt.Fprintf(&b, "; lines appended meanwhile kept in %s", strings.Join(r.Carry, ", "))
	}
	return b.String()
}

// already counts the prompts whose tombstone was there before.
func already(r deletion.Result) string {
	if r.AlreadyHidden == 0 {
		return ""
	}
	return fmt.Sprintf(" (%s tombstoned already)", words.Plural(r.AlreadyHidden, "prompt", "prompts"))
}

// quoted shows a prompt in a message: quoted and escaped, at most 60
// characters of it.
func quoted(p string) string {
	if r := []rune(p); len(r) > 60 {
		return strconv.Quote(string(r[:60])) + "…"
	}
	return strconv.Quote(p)
}

// some names up to three prompts.
func some(ps []string) string {
	var q []string
	for _, p := range ps[:min(len(ps), 3)] {
		q = append(q, quoted(p))
	}
	out := strings.Join(q, ", ")
	if len(ps) > 3 {
		out += fmt.Sprintf(" and %d more", len(ps)-3)
	}
	return out
}

// nothingMatched reports whether no prompt had a copy in the scope and
// none was tombstoned (no --hide): nothing was done at all.
func nothingMatched(r deletion.Result) bool {
	return r.Prompts > 0 && len(r.NotFound) > 0 && r.Copies == 0 && len(r.Failed) == 0 && r.Tombstones == 0 && r.AlreadyHidden == 0
}

// notes says what the summary line leaves out: prompts with no copy in
// the scope, copies left outside it, tombstones hidden.json's cap dropped.
func notes(e *cli.Env, r deletion.Result, where string) {
	if n := len(r.NotFound); n > 0 && !nothingMatched(r) {
		what := map[bool]string{true: "nothing removed for it", false: "nothing removed for them"}[n == 1]
		if r.Tombstones+r.AlreadyHidden > 0 {
			what += ", tombstoned all the same (--hide)"
		}
		e.Say("no copy of %s %s: %s", some(r.NotFound), where, what)
	}
	if s := r.Elsewhere.String(); s != "" {
		e.Say("%s", s)
	}
	if r.Foreign > 0 {
		verb := map[bool]string{true: "is", false: "are"}[r.Foreign == 1]
		e.Say("%s in other machines' files %s hidden; their machines remove them", words.Plural(r.Foreign, "copy", "copies"), verb)
	}
	if r.Swept > 0 {
		e.Say("also removed %s that other machines' tombstones hide", words.Plural(r.Swept, "copy", "copies"))
	}
	if r.Dropped > 0 {
		e.Say("hidden.json keeps the newest %d tombstones: %s dropped; no copy of their prompts is left in the store",
			tombstone.Cap, words.Plural(r.Dropped, "older one was", "older ones were"))
	}
	if r.DroppedOwn > 0 {
		e.Say("%s of this delete did not fit in hidden.json (at most %d): those prompts, whose copies were all removed, may be imported again from transcripts; delete at most %d prompts at a time",
			words.Plural(r.DroppedOwn, "tombstone", "tombstones"), tombstone.Cap, tombstone.Cap)
	}
}

func report(e *cli.Env, r deletion.Result, where string) int {
	if r.Outcome == deletion.NotStored {
		e.Errorf("standard input names %s, which the store holds no copy of: nothing was changed; check the input's format (hist-list -0 pairs with -0, --json with --stdin=json), or pass --hide to tombstone such prompts",
			some(r.NotStored))
		return cli.ExitUsage
	}
	if nothingMatched(r) && r.Outcome == deletion.Clean {
		dry := map[bool]string{true: "dry run: "}[r.DryRun]
		if len(r.NotFound) == 1 {
			e.Say("%sno copy of %s %s: nothing removed; --hide hides it from imports anyway", dry, quoted(r.NotFound[0]), where)
		} else {
			e.Say("%sno copy of any of the %d prompts %s: nothing removed; --hide hides them from imports anyway", dry, len(r.NotFound), where)
		}
		if s := r.Elsewhere.String(); s != "" {
			e.Say("%s", s)
		}
		return exitNoCopy
	}
	if r.DryRun && r.Outcome != deletion.Untrusted && r.Outcome != deletion.NothingRemoved {
		out := termsafe.Writer(e.Stdout) // paths escaped on a terminal
		for _, p := range r.Rewritten {
			fmt.Fprintln(out, p)
		}
		e.Say("%s", summary(r))
		notes(e, r, where)
		for _, f := range r.Failed {
			e.Errorf("cannot read %v: its copies would remain", f)
		}
		if len(r.Failed) > 0 {
			return exitPartlyHidden
		}
		return cli.ExitOK
	}
	switch r.Outcome {
	case deletion.Clean:
		e.Say("%s", summary(r))
		notes(e, r, where)
		return cli.ExitOK
	case deletion.Untrusted:
		e.Errorf("refused: %v; nothing was changed", r.Err) // its recovery message
		return cli.ExitUntrusted
	case deletion.NothingRemoved:
		e.Errorf("%s (%v)", r.Outcome.Notice(), r.Err)
		return exitNothingRemoved
	}
	e.Errorf("%s (%s)", r.Outcome.Notice(), summary(r))
	notes(e, r, where)
	for _, f := range r.Failed {
		e.Errorf("could not rewrite %v", f)
	}
	code := map[deletion.Outcome]int{deletion.PartlyHidden: exitPartlyHidden, deletion.RemovedNotHidden: exitNotHidden, deletion.Both: exitBoth}[r.Outcome]
	if code != exitPartlyHidden {
		e.Errorf("could not write the tombstone: %v", r.Err)
	}
	return code
}

type jsonFailure struct {
	Path  string `json:"path"`
	Error string `json:"error"`
}

type jsonReport struct {
	Outcome        string        `json:"outcome"`
	Notice         string        `json:"notice"`
	DryRun         bool          `json:"dry_run"`
	Prompts        int           `json:"prompts"`
	Copies         int           `json:"copies"`
	FilesRewritten []string      `json:"files_rewritten"`
	FilesFailed    []jsonFailure `json:"files_failed"`
	CarryFiles     []string      `json:"carry_files"`
	Tombstones     int           `json:"tombstones"`
	FilesScanned   int           `json:"files_scanned"`
	Hidden         string        `json:"hidden"`
	Error          string        `json:"error"`
	Already        int           `json:"already_tombstoned"`
	NotFound       int           `json:"not_found"`
	Elsewhere      int           `json:"copies_elsewhere"`
	Dropped        int           `json:"tombstones_dropped"`
	// Only in a store shared between machines (docs/store-format.md).
	Foreign int `json:"copies_other_machines,omitempty"`
	Swept   int `json:"copies_swept,omitempty"`
}

func writeJSON(e *cli.Env, r deletion.Result, hiddenPath string) {
	rep := jsonReport{
		Outcome: r.Outcome.String(), Notice: r.Outcome.Notice(), DryRun: r.DryRun,
		Prompts: r.Prompts, Copies: r.Copies, FilesRewritten: append([]string{}, r.Rewritten...),
		CarryFiles: append([]string{}, r.Carry...), Tombstones: r.Tombstones, FilesScanned: r.Scanned,
		Hidden: hiddenPath, FilesFailed: []jsonFailure{}, Already: r.AlreadyHidden, NotFound: len(r.NotFound),
		Elsewhere: r.Elsewhere.ProjectCopies + r.Elsewhere.Global, Dropped: r.Dropped + r.DroppedOwn,
		Foreign: r.Foreign, Swept: r.Swept,
	}
	if nothingMatched(r) && r.Outcome == deletion.Clean {
		rep.Outcome = "no-copy"
	}
	for _, f := range r.Failed {
		fe := f.(*deletion.FileError)
		rep.FilesFailed = append(rep.FilesFailed, jsonFailure{Path: fe.Path, Error: fe.Err.Error()})
	}
	if r.Err != nil {
		rep.Error = r.Err.Error()
	}
	out, _ := json.Marshal(rep)
	e.Stdout.Write(append(out, '\n'))
}
