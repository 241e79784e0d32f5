// Package histlist is the hist-list command; cmd/hist-list runs it, and the
// tests link it into their binary (internal/testbin).
package histlist

import (
	"bufio"
	"flag"
	"os"

	"hist/lib/cli"
	"hist/lib/history"
	"hist/lib/lineenc"
	"hist/lib/store"
	"hist/lib/termsafe"
	"hist/lib/tombstone"
	"hist/lib/words"
)

const usage = `Usage:
    hist-list [--project [DIR] | --all] [FILTERS] [--order newest|frecent]
              [-0 | --json] [--limit N] [--store DIR]

Prints the visible prompts of a scope, newest first, each prompt once: its
newest copy's text and time, with the cwd, file, src and session of its
richest copy (a project and a session beat a project only, which beats
neither). Prompts hidden by a deletion record in hidden.json are never
printed.

Scopes:
    --project [DIR]  The project at DIR (default: the working directory): its
                     capture, seed and compact files, and the carry and claim
                     files that rewrites leave beside them. The default scope.
                     In a git repository, the project is the whole
                     repository: its top folder and every folder in it.
                     Write --project=DIR when a prompt could be taken for DIR.
                     A DIR that no longer exists still names its stored
                     prompts (with a warning); one the store never held is
                     an error.
    --all            Every project, plus history-global.jsonl and its carry files.

` + cli.FilterUsage + `
Order:
    --order newest   Newest first (the default).
    --order frecent  Most used first: each prompt's uses (its copies, those
                     less than 5 s apart counting once), each weighted by
                     its age, a week old counting half (docs/hist-pick.md).
                     Prints once the whole scope is read.

Formats:
    (default)        One prompt a line; "\" is written "\\", a newline "\n" and a NUL "\0",
                     so every prompt is one line and the encoding is reversible.
    -0               The raw prompt, each ended by a NUL byte. A prompt that
                     holds a NUL itself (stored by older builds; new records
                     keep U+FFFD instead) is not printed: stderr counts them
                     and the exit status is 1. List those with --json or the
                     default format, where a NUL is written "\0".
    --json           One JSON object a line: text, ts, cwd (the project folder,
                     from registry.json; "" when unknown), file, and src and
                     session where the prompt has them (imports, hook
                     captures).
    --limit N        Print at most N prompts (the newest N); N is 1 or more
                     (--limit 0 is a usage error).

hist-delete --stdin reads each of these formats back, so a filtered listing
piped to it deletes exactly what was listed.

Prompts are printed as the store is read, from each file's end, so the first
ones come at once (hist-list --all | head waits for nothing), and memory stays
small: 16 bytes for each prompt printed, and a block of each file. The default
format and -0 print a prompt when its newest copy is met. --json, which shows
its richest copy's provenance, holds a prompt back, with those after it, until
no richer copy can come: at once when the copy met has a project and a
session; else once the store read is an hour older than that copy (an older
copy gives no provenance), more than 65536 prompts wait, or every file is read.
The selector (hist-pick) shows the same prompts, in the same order, with the
same provenance.

With capture off, hist-list reads nothing: it prints one warning naming the
control that decides and exits 0 with no output.

Exit status:
    0  listed (possibly nothing)
    1  some store files or folders could not be read (the rest was listed;
       stderr names each once, with the chmod when a permission is the
       cause), or -0 left out prompts that hold a NUL byte
    2  usage error, a --project DIR that does not exist (and is not in the
       store), or HOME unset or not absolute while the store needs it
    3  hidden.json cannot be trusted: nothing is printed; the message says how
       to recover (chmod for a permission problem, cp from its .prev copy)

Malformed store lines are skipped; their count is reported on stderr.
On a terminal, control characters in prompts show as control pictures (␛ for
ESC), bidi and zero-width characters as <U+202E> and bytes that are not UTF-8
as <0xFF>, so a stored prompt cannot drive the terminal; a pipe gets the raw
bytes.

Examples:
    $ hist-list | head
    $ hist-list --all | grep -i migration
    $ hist-list --all --src claude,codex --since 7d
    $ hist-list --order frecent --limit 10
    $ hist-list --all --json --limit 5 | jq -r .cwd
    $ hist-list --all | grep -F 'AKIA' | hist-delete --all --stdin
`

// Main runs hist-list with the process's arguments and exits with its status.
func Main() { os.Exit(run(cli.OSEnv("hist-list"))) }

// options are hist-list's flags.
type options struct {
	store   string
	scope   cli.ScopeFlags
	filters cli.FilterFlags
	filter  history.Filter
	frecent bool
	format  lineenc.Format
	limit   int
}

func run(e *cli.Env) int {
	o, code, ok := parseFlags(e)
	if !ok {
		return code
	}
	st := e.Store(o.store)
	sc, _, ok := e.Scope(&o.scope, st)
	if !ok {
		return cli.ExitUsage
	}
	if o.filter, ok = e.Filter(&o.filters); !ok {
		return cli.ExitUsage
	}
	if pol := e.Policy(); !pol.On {
		e.Warnf("%s", pol.OffHint())
		return cli.ExitOK
	}
	hidden, ok := e.LoadHidden(st)
	if !ok {
		return cli.ExitUntrusted
	}
	return list(e, st, sc, hidden, o)
}

// parseFlags reads the command line; ok is false when hist-list is done
// (usage printed, or a usage error with code).
func parseFlags(e *cli.Env) (o options, code int, ok bool) {
	fs := e.Flags()
	storeDir := cli.StoreFlag(fs)
	o.scope.Register(fs)
	o.filters.Register(fs)
	order := fs.String("order", "newest", "")
	nul := fs.Bool("0", false, "")
	asJSON := fs.Bool("json", false, "")
	limit := fs.Int("limit", 0, "")
	args, code, stop := e.ParseArgs(fs, usage, cli.SplitOptional(e.Args, "project"))
	if stop {
		return o, code, false
	}
	o.store, o.limit, o.format = *storeDir, *limit, lineenc.Lines
	switch {
	case len(args) > 0:
		e.Errorf("unexpected argument %q: hist-list takes only flags (to filter, pipe it to grep)", args[0])
	case *nul && *asJSON:
		e.Errorf("-0 and --json are two formats: choose one")
	case *limit < 0 || *limit == 0 && limitSet(fs):
		e.Errorf("--limit %d: give 1 or more (without --limit, every prompt is printed)", *limit)
	case *order != "newest" && *order != "frecent":
		e.Errorf("--order %s: use newest or frecent", *order)
	default:
		o.frecent = *order == "frecent"
		if *nul {
			o.format = lineenc.NUL
		} else if *asJSON {
			o.format = lineenc.JSON
		}
		return o, cli.ExitOK, true
	}
	return o, cli.ExitUsage, false
}

// limitSet reports whether --limit was given.
func limitSet(fs *flag.FlagSet) (set bool) {
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == "limit" })
	return set
}

// list prints the scope's prompts as they stream in (see usage): --json
// with history.Options.Hold, escaped on a terminal.
func list(e *cli.Env, st store.Store, sc store.Scope, hidden *tombstone.Set, o options) int {
	var reg store.Registry
	if o.format == lineenc.JSON {
		reg = st.LoadRegistry()
	}
	out := bufio.NewWriterSize(termsafe.Writer(e.Stdout), 64<<10)
	var buf []byte
	var werr error
	printed, withNUL := 0, 0
	emit := func(en history.Entry) bool {
		if o.format.Fits(en.Text) {
			buf = o.format.Append(buf[:0], lineenc.Listed{Text: en.Text, TS: en.TS, Cwd: reg[en.Project], File: en.File, Src: en.Src, Session: en.Session})
			_, werr = out.Write(buf)
		} else {
			withNUL++
		}
		printed++
		return werr == nil && (o.limit == 0 || printed < o.limit)
	}
	opt := history.Options{Hold: o.format == lineenc.JSON, Filter: o.filter}
	now, _ := e.Now() // e.Filter checked it
	fn, tally, all := emit, history.Tally{Now: now.UnixMilli()}, []history.Entry(nil)
	if o.frecent {
		opt.Uses = func(n int, u history.Entry) { tally.Add(n, u.TS) }
		fn = func(en history.Entry) bool { all = append(all, en); return true }
	}
	res := history.Stream(st, sc, hidden, opt, fn)
	for _, i := range tally.Ranked(len(all)) {
		if !emit(all[i]) {
			break
		}
	}
	if werr != nil || out.Flush() != nil {
		return cli.ExitFailure // stdout closed (e.g. | head): nothing more to say
	}
	failed := res.Report(e.Warnf, e.Errorf, "listed")
	if withNUL > 0 {
		e.Errorf("-0 left out %s holding a NUL byte, which would end its record early: list them with --json, or without -0 (a NUL is written \\0)", words.Plural(withNUL, "prompt", "prompts"))
	}
	if failed || withNUL > 0 {
		return cli.ExitFailure
	}
	return cli.ExitOK
}
