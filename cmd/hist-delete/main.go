// Command hist-delete removes a prompt from every store file of a scope
// and tombstones it in hidden.json.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/mattn/go-isatty"

	"hist/lib/cli"
	"hist/lib/deletion"
	"hist/lib/identity"
	"hist/lib/lineenc"
	"hist/lib/termsafe"
	"hist/lib/tombstone"
)

const usage = `Usage:
    hist-delete [--project [DIR] | --all] [--dry-run] [--json] [--store DIR] TEXT
    hist-delete [--project [DIR] | --all] [--dry-run] [--json] [--store DIR] --stdin[=FORMAT] | -0

Deletes a prompt from the prompt history: every copy of it in the scope's
store files is removed (each affected file is rewritten atomically; files
without a copy are not touched), then a tombstone ("sha256:" and the hash of
the normalized prompt, never its text) is added to hidden.json so the prompt
stays hidden everywhere hist reads and is not imported again from session
transcripts. Session transcripts are never modified.

A prompt is matched by its identity: whitespace runs collapsed, leading and
trailing whitespace trimmed, letter case ignored. Only that exact prompt is
deleted: prompts that merely share a beginning stay.

A prompt with no copy in the scope is still tombstoned (the report says
"0 copies"), so it cannot come back from a transcript import.

Scopes:
    --project [DIR]  The project at DIR (default: the working directory): its
                     capture, seed and compact files and the carry and claim
                     files beside them. The default scope. "--project TEXT"
                     keeps TEXT as the prompt; write --project=DIR TEXT, or
                     --project DIR TEXT.
    --all            Every project, plus history-global.jsonl and its carry files.

Input:
    TEXT             The prompt to delete, as one argument.
    --stdin          Read the prompts to delete from standard input, in
                     hist-list's default format: one prompt a line, "\\" for a
                     backslash and "\n" for a newline. Empty lines are skipped.
    --stdin=nul, -0  NUL-terminated raw prompts (hist-list -0).
    --stdin=json     One JSON object a line with a "text" string (hist-list --json).
                     So any hist-list output piped back deletes exactly what
                     was listed. Input that looks like another format than the
                     one named is refused before anything is changed.

Output:
    --dry-run        Report what would be removed (files on stdout, a summary
                     on stderr); change nothing.
    --json           Print a JSON report on stdout: outcome, notice, prompts,
                     copies, files_rewritten, files_failed, carry_files,
                     tombstones, files_scanned, dry_run, error.
    One line on stderr says what was done: copies removed, files rewritten,
    tombstones written; or, when something failed, the notice below.

Deletes need capture on (hist-capture --enable, or GENTLE_PI_HISTORY_CAPTURE=1):
with capture off hist-delete names the control that decides and changes nothing.

Exit status:
    0  deleted: every copy removed and the tombstone written (or, with
       --dry-run, nothing would fail)
    1  standard input could not be read; nothing was changed
    2  usage error (also a --project DIR that does not exist and is not in
       the store, or HOME unset); nothing was changed
    3  hidden.json cannot be trusted (unreadable, corrupt, not an array of
       strings): nothing was changed; restore the file or delete it yourself
       (hidden prompts may then reappear)
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

Examples:
    $ hist-delete 'my AWS key is AKIA...'
    $ hist-delete --all --dry-run 'deploy to prod with password hunter2'
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
)

// format is the --stdin flag: a bool flag that also takes a format name.
type format struct{ name string }

func (f *format) String() string { return f.name }
func (f *format) IsBoolFlag() bool {
	return true
}
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

func main() { os.Exit(run(cli.OSEnv("hist-delete"))) }

func run(e *cli.Env) int {
	fs := e.Flags()
	storeDir := cli.StoreFlag(fs)
	var scope cli.ScopeFlags
	scope.Register(fs)
	var in format
	fs.Var(&in, "stdin", "")
	nul := fs.Bool("0", false, "")
	dry := fs.Bool("dry-run", false, "")
	asJSON := fs.Bool("json", false, "")
	minRest := 1
	if readsStdin(e.Args) {
		minRest = 0
	}
	args, code, stop := e.ParseArgs(fs, usage, cli.SplitOptional(e.Args, "project", minRest))
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
	switch {
	case in.name != "" && len(args) > 0:
		e.Errorf("a prompt argument and --stdin both name prompts: use one (see '%s --help')", e.Name)
		return cli.ExitUsage
	case in.name == "" && len(args) == 0:
		e.Errorf("no prompt given: pass it as one argument, or pipe prompts with --stdin (see '%s --help')", e.Name)
		return cli.ExitUsage
	case len(args) > 1:
		e.Errorf("too many arguments (%d): quote the prompt as one argument, or pipe prompts with --stdin", len(args))
		return cli.ExitUsage
	case len(args) == 1 && identity.IsBlank(args[0]):
		e.Errorf("the prompt is blank: nothing to delete")
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

	prompts := args
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
		prompts, err = parseInput(data, in.name)
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

	res := deletion.Delete(st, sc, prompts, deletion.Options{DryRun: *dry})
	if *asJSON {
		writeJSON(e, res, st.Hidden())
	}
	return report(e, res, st.Hidden())
}

// readsStdin reports whether the flags before "--" ask for --stdin or -0,
// so that "--project DIR" needs no prompt argument after it.
func readsStdin(args []string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		name := strings.TrimLeft(a, "-")
		if a != name && (name == "0" || name == "stdin" || strings.HasPrefix(name, "stdin=")) {
			return true
		}
	}
	return false
}

// parseInput splits standard input into prompts, in hist-list's formats.
func parseInput(data []byte, format string) ([]string, error) {
	var out []string
	switch format {
	case "nul":
		for _, p := range bytes.Split(data, []byte{0}) {
			if !identity.IsBlank(string(p)) {
				out = append(out, string(p))
			}
		}
		return out, nil
	case "json":
		for i, line := range bytes.Split(data, []byte{'\n'}) {
			if len(bytes.TrimSpace(line)) == 0 {
				continue
			}
			var o struct {
				Text *string `json:"text"`
			}
			if err := json.Unmarshal(line, &o); err != nil || o.Text == nil {
				return nil, fmt.Errorf("--stdin=json: line %d of standard input is not a JSON object with a \"text\" string (hist-list --json writes those)", i+1)
			}
			if !identity.IsBlank(*o.Text) {
				out = append(out, *o.Text)
			}
		}
		return out, nil
	}
	if bytes.IndexByte(data, 0) >= 0 {
		return nil, errors.New("--stdin: standard input holds NUL bytes, as hist-list -0 writes: read it with -0")
	}
	lines := bytes.Split(data, []byte{'\n'})
	jsonish := 0
	for _, line := range lines {
		if identity.IsBlank(string(line)) {
			continue
		}
		if looksListedJSON(line) {
			jsonish++
		}
		out = append(out, lineenc.Decode(string(line)))
	}
	if jsonish > 0 && jsonish == len(out) {
		return nil, errors.New("--stdin: standard input looks like hist-list --json output: read it with --stdin=json")
	}
	return out, nil
}

// looksListedJSON reports whether line is one of hist-list --json's objects.
func looksListedJSON(line []byte) bool {
	if !bytes.HasPrefix(line, []byte(`{"text":`)) {
		return false
	}
	var o map[string]json.RawMessage
	if json.Unmarshal(line, &o) != nil {
		return false
	}
	_, t := o["ts"]
	_, f := o["file"]
	return t && f
}

// summary says what was done (or would be).
func summary(r deletion.Result) string {
	var b strings.Builder
	if r.DryRun {
		fmt.Fprintf(&b, "dry run: would remove %s of %s from %s",
			cli.Plural(r.Copies, "copy", "copies"), cli.Plural(r.Prompts, "prompt", "prompts"), cli.Plural(len(r.Rewritten), "file", "files"))
		fmt.Fprintf(&b, " (%s scanned) and write %s; nothing was changed",
			cli.Plural(r.Scanned, "file", "files"), cli.Plural(r.Tombstones, "tombstone", "tombstones"))
		return b.String()
	}
	fmt.Fprintf(&b, "removed %s of %s, %s rewritten (%s scanned)",
		cli.Plural(r.Copies, "copy", "copies"), cli.Plural(r.Prompts, "prompt", "prompts"),
		cli.Plural(len(r.Rewritten), "file", "files"), cli.Plural(r.Scanned, "file", "files"))
	if r.Tombstones > 0 {
		fmt.Fprintf(&b, ", %s written", cli.Plural(r.Tombstones, "tombstone", "tombstones"))
	} else {
		b.WriteString(", no tombstone written")
	}
	if len(r.Carry) > 0 {
		fmt.Fprintf(&b, "; lines appended meanwhile kept in %s", strings.Join(r.Carry, ", "))
	}
	return b.String()
}

func report(e *cli.Env, r deletion.Result, hiddenPath string) int {
	if r.DryRun && r.Outcome != deletion.Untrusted && r.Outcome != deletion.NothingRemoved {
		out := termsafe.Writer(e.Stdout) // paths escaped on a terminal
		for _, p := range r.Rewritten {
			fmt.Fprintln(out, p)
		}
		e.Say("%s", summary(r))
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
		return cli.ExitOK
	case deletion.Untrusted:
		var u *tombstone.UntrustedError
		if errors.As(r.Err, &u) {
			e.Errorf("refused: %v; nothing was changed", u)
		} else {
			e.Errorf("refused: %s cannot be trusted (%v); nothing was changed", hiddenPath, r.Err)
		}
		return cli.ExitUntrusted
	case deletion.NothingRemoved:
		e.Errorf("%s (%v)", r.Outcome.Notice(), r.Err)
		return exitNothingRemoved
	}
	e.Errorf("%s (%s)", r.Outcome.Notice(), summary(r))
	for _, f := range r.Failed {
		e.Errorf("could not rewrite %v", f)
	}
	code := exitPartlyHidden
	switch r.Outcome {
	case deletion.RemovedNotHidden:
		code = exitNotHidden
	case deletion.Both:
		code = exitBoth
	}
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
}

func writeJSON(e *cli.Env, r deletion.Result, hiddenPath string) {
	rep := jsonReport{
		Outcome: r.Outcome.String(), Notice: r.Outcome.Notice(), DryRun: r.DryRun,
		Prompts: r.Prompts, Copies: r.Copies, FilesRewritten: r.Rewritten, CarryFiles: r.Carry,
		Tombstones: r.Tombstones, FilesScanned: r.Scanned, Hidden: hiddenPath,
		FilesFailed: []jsonFailure{},
	}
	if rep.FilesRewritten == nil {
		rep.FilesRewritten = []string{}
	}
	if rep.CarryFiles == nil {
		rep.CarryFiles = []string{}
	}
	for _, f := range r.Failed {
		var fe *deletion.FileError
		if errors.As(f, &fe) {
			rep.FilesFailed = append(rep.FilesFailed, jsonFailure{Path: fe.Path, Error: fe.Err.Error()})
		} else {
			rep.FilesFailed = append(rep.FilesFailed, jsonFailure{Error: f.Error()})
		}
	}
	if r.Err != nil {
		rep.Error = r.Err.Error()
	}
	out, _ := json.Marshal(rep)
	e.Stdout.Write(append(out, '\n'))
}
