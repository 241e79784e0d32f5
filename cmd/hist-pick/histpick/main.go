// Package histpick is the hist-pick command; cmd/hist-pick runs it, and the
// tests link it into their binary (internal/testbin).
package histpick

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	fzf "github.com/junegunn/fzf/src"

	"hist/lib/cli"
	"hist/lib/lineenc"
	"hist/lib/picker"
	"hist/lib/shellquote"
	"hist/lib/termsafe"
	"hist/scripts/shell"
)

const usage = `Usage:
    hist-pick [--project [DIR] | --all] [FILTERS] [--query Q] [-0 | --json | --word | --resume]
              [--shell bash|zsh|fish|sh] [--resume-key KEY | --no-resume-key]
              [--delete-key KEY] [--store DIR]
    hist-pick --shell bash|zsh|fish [--key KEY]

Opens the prompt history selector on the terminal (/dev/tty, so it works
inside $(...) and pipes) and prints the chosen prompt on stdout. Prompts
stream in newest first, each once; hidden (deleted) prompts never show.
Each row shows the prompt's age and agent, and how many times it was used
when more than once (×5). The selector reads the store; it never imports.

A prompt is text, never a command: pass it as an argument ("$(hist-pick)"),
never to eval. To resume a session from the shell, eval only --resume's
output, which is a resume command or nothing.

Scopes (the selector's radio starts here; tab switches it):
    --project [DIR]  The project at DIR (default: the working directory): in
                     a git repository, the whole repository ("This
                     repository"), else the folder ("This folder").
    --all            Every project, plus history-global.jsonl.

` + cli.FilterUsage + `
Output:
    (default)        The prompt as it was typed, then a newline.
    -0               The prompt, ended by a NUL byte.
    --json           One JSON object: text, ts, cwd, file, and src and session
                     where the prompt has them (as hist-list --json), plus
                     resume when the resume key chose.
    --word           The prompt as one shell word, single-quoted for --shell
                     (what the key bindings insert). For bash, zsh and fish,
                     control, bidi and zero-width characters are the shell's
                     own escapes ($'\e' in bash and zsh, \e in fish), so the
                     command line shows them and still gives the exact prompt.
    --resume         Only a resume command: enter prints the chosen prompt's
                     resume command too; a prompt without a session prints
                     nothing and exits 1.
    --shell SH       With the selector: the shell (bash, zsh, fish or sh)
                     that reads the output; folder names and --word's prompt
                     are quoted for it. Without --shell they are quoted so
                     that all four read them alike. Alone: print SH's key
                     bindings (below).

Keys:
    enter            Print the prompt (with --resume: its resume command).
    ctrl-o           Print the command that resumes the prompt's agent session
                     instead (prompts that carry a session: imported ones,
                     hook captures and captures given --session; a session
                     id that is not a plain id, letters, digits and . _ : -
                     not starting with -, is refused). --resume-key KEY (or
                     $HIST_PICK_RESUME_KEY) binds another key;
                     --no-resume-key binds none and leaves it out of the
                     header (for a caller with no shell to run the command,
                     such as the pi extension).
    tab, ctrl-s      Switch the scope: This repository (or folder) | All projects.
    ctrl-t           Order: newest first (the default) or most used (every
                     use of a prompt, weighted by its age: docs/hist-pick.md).
    ctrl-x           Agent filter: every agent, then each agent in the list,
                     then every agent again.
    ctrl-delete, alt-d
                     Arm a delete of the selected prompt; then y deletes every
                     copy in the scope the radio shows and hides it, n or Esc
                     cancels, any other key is ignored. --delete-key KEY (or
                     $HIST_PICK_DELETE_KEY) binds KEY instead (fzf key names;
                     several: comma-separated).
    home, end        Empty search box: the newest / the oldest prompt (End waits
                     for the whole scope to load). Otherwise: the start / end of
                     the query.
    ctrl-r           While a query is typed: matches by relevance (the
                     default) or in the list's order (newest or most used).
    ctrl-p           Hide or show the preview. It shrinks on short terminals so
                     that the list keeps 10 prompts, and hides under 19 rows.
                     Not bound when --resume-key or --delete-key takes ctrl-p.
    esc, ctrl-c      Quit, printing nothing.

Shell key bindings (alt-r, pi's own key for the selector, inserts the
chosen prompt at the cursor as one single-quoted word, so "pi <alt-r>"
gives pi '<the prompt>'; ctrl-o in the selector inserts the resume command
instead). --key KEY binds another key, the same names in every shell:
` + shell.KeyNames + `; --key ctrl-r takes the place of the shell's own
reverse search:
    eval "$(hist-pick --shell bash)"               # ~/.bashrc
    eval "$(hist-pick --shell zsh --key ctrl-r)"   # ~/.zshrc
    hist-pick --shell fish | source                # ~/.config/fish/config.fish

On a terminal, what hist-pick prints shows control, bidi and zero-width
characters visibly (␛ for ESC, <U+202E>), as the selector does; a pipe
or $(...) gets the exact bytes.

With capture off, hist-pick opens nothing and reads nothing: it prints one
warning naming the control that decides and exits 1.

Exit status:
    0    a prompt (or a resume command) was printed (a store file or folder
         that could not be read was named in the footer; the rest was shown)
    1    capture is off, or the selector could not run, or --resume chose a
         prompt with no session to resume (or a refused session id)
    2    usage error
    3    hidden.json cannot be trusted: nothing is shown; the message says how
         to recover (chmod for a permission problem, cp from its .prev copy)
    130  cancelled (Esc, ctrl-c): nothing printed

Examples:
    $ pi "$(hist-pick)"
    $ claude "$(hist-pick --all --query refactor)"
    $ hist-pick --src claude --since 7d
    $ eval "$(hist-pick --all --resume)"                  # bash, zsh
    $ eval (hist-pick --all --resume --shell fish)        # fish
`

// Main runs hist-pick with the process's arguments and exits with its status.
func Main() {
	if len(os.Args) == 3 && os.Args[1] == picker.CallbackFlag {
		os.Exit(picker.Callback(os.Args[2], os.Stdout))
	}
	os.Exit(run(cli.OSEnv("hist-pick")))
}

// options are hist-pick's flags.
type options struct {
	store      string
	scope      cli.ScopeFlags
	filters    cli.FilterFlags
	query      string
	format     lineenc.Format // Raw, NUL or JSON
	word       bool
	resumeOnly bool
	shell      shellquote.Shell
	resumeKey  string // "" with --no-resume-key
	deleteKeys []string
}

func run(e *cli.Env) int {
	o, code, ok := parseFlags(e)
	if !ok {
		return code
	}
	cfg, code, ok := configure(e, o)
	if !ok {
		return code
	}
	c, err := picker.Run(cfg)
	switch {
	case errors.Is(err, picker.ErrCancelled):
		return 130 // like fzf
	case err != nil:
		e.Errorf("%v", err)
		return cli.ExitFailure
	}
	if o.resumeOnly && c.Resume == "" {
		if c.Resume, err = picker.ResumeCommand(c.Src, c.Session, c.Cwd, o.shell); err != nil {
			e.Errorf("--resume: %v", err)
			return cli.ExitFailure
		}
	}
	if _, err := termsafe.Writer(e.Stdout).Write(output(c, o)); err != nil {
		return cli.ExitFailure
	}
	return cli.ExitOK
}

// parseFlags reads the command line; ok is false when hist-pick is done:
// usage or key bindings printed, or a usage error, with code.
func parseFlags(e *cli.Env) (o options, code int, ok bool) {
	fs := e.Flags()
	storeDir := cli.StoreFlag(fs)
	o.scope.Register(fs)
	o.filters.Register(fs)
	fs.StringVar(&o.query, "query", "", "")
	fs.BoolVar(&o.word, "word", false, "")
	fs.BoolVar(&o.resumeOnly, "resume", false, "")
	nul := fs.Bool("0", false, "")
	asJSON := fs.Bool("json", false, "")
	resumeKey := fs.String("resume-key", "", "")
	noResumeKey := fs.Bool("no-resume-key", false, "")
	deleteKey := fs.String("delete-key", "", "")
	shellName := fs.String("shell", "", "")
	bindKey := fs.String("key", "", "")
	args, code, stop := e.ParseArgs(fs, usage, cli.SplitOptional(e.Args, "project"))
	if stop {
		return o, code, false
	}
	o.store, o.format = *storeDir, lineenc.Raw
	if *nul {
		o.format = lineenc.NUL
	} else if *asJSON {
		o.format = lineenc.JSON
	}
	switch {
	case len(args) > 0:
		e.Errorf("unexpected argument %q: to start with a query, use --query %q", args[0], args[0])
	case *shellName != "" && !o.word && !o.resumeOnly:
		return o, bindings(e, *shellName, cmp.Or(strings.TrimSpace(*bindKey), shell.DefaultKey)), false
	case *bindKey != "":
		e.Errorf("--key KEY chooses the shell bindings' key: use it with --shell bash|zsh|fish alone")
	case *nul && *asJSON:
		e.Errorf("-0 and --json are two formats: choose one")
	case (o.word || o.resumeOnly) && (*nul || *asJSON || o.word && o.resumeOnly):
		e.Errorf("--word and --resume each choose what is printed: use one of them, without -0 or --json")
	default:
		return keys(e, o, *shellName, *resumeKey, *deleteKey, *noResumeKey)
	}
	return o, cli.ExitUsage, false
}

// keys reads the shell, and the resume and delete keys from the flags,
// else the environment, else the defaults, and asks fzf whether it can
// bind them; ok is false on a usage error.
func keys(e *cli.Env, o options, shellName, resumeKey, deleteKey string, noResumeKey bool) (_ options, code int, ok bool) {
	o.shell = shellquote.Any
	if shellName != "" {
		var err error
		if o.shell, err = shellquote.Parse(shellName); err != nil {
			e.Errorf("--shell %s: %v", shellName, err)
			return o, cli.ExitUsage, false
		}
	}
	if noResumeKey && resumeKey != "" {
		e.Errorf("--resume-key and --no-resume-key contradict each other: use one")
		return o, cli.ExitUsage, false
	}
	trim := strings.TrimSpace
	rk := cmp.Or(trim(resumeKey), trim(e.Getenv("HIST_PICK_RESUME_KEY")), "ctrl-o")
	dk := cmp.Or(trim(deleteKey), trim(e.Getenv("HIST_PICK_DELETE_KEY")), "ctrl-delete,alt-d")
	for _, k := range strings.Split(dk, ",") {
		if k = strings.TrimSpace(k); k != "" {
			o.deleteKeys = append(o.deleteKeys, k)
		}
	}
	for _, k := range append([]string{rk}, o.deleteKeys...) {
		if _, err := fzf.ParseOptions(false, []string{"--bind=" + k + ":ignore"}); err != nil {
			e.Errorf("key %q: %v: use an fzf key name such as ctrl-o, alt-d or ctrl-delete", k, err)
			return o, cli.ExitUsage, false
		}
	}
	if !noResumeKey {
		o.resumeKey = rk
	}
	return o, cli.ExitOK, true
}

// bindings prints the key bindings of shell sh, bound to key.
func bindings(e *cli.Env, sh, key string) int {
	s, ok, err := shell.Script(sh, key)
	if !ok {
		e.Errorf("--shell %s: no key bindings for that shell: choose one of %s", sh, strings.Join(shell.Names(), ", "))
		return cli.ExitUsage
	}
	if err != nil {
		e.Errorf("--key %s: %v", key, err)
		return cli.ExitUsage
	}
	fmt.Fprint(e.Stdout, s)
	return cli.ExitOK
}

// configure resolves the scope and reads what the selector needs; ok is
// false when it cannot run, with code.
func configure(e *cli.Env, o options) (cfg picker.Config, code int, ok bool) {
	st := e.Store(o.store)
	sc, _, err := o.scope.Resolve(st)
	if err != nil {
		e.Errorf("%v", err)
		return cfg, cli.ExitUsage, false
	}
	filter, ok := e.Filter(&o.filters)
	if !ok {
		return cfg, cli.ExitUsage, false
	}
	project, also, repo := sc.Project, sc.Also, o.scope.Repo != ""
	if sc.All {
		// The radio's project scope is the working directory's.
		cur := cli.ScopeFlags{Project: true}
		if ps, _, err := cur.Resolve(st); err == nil {
			project, also, repo = ps.Project, ps.Also, cur.Repo != ""
		}
	}
	if pol := e.Policy(); !pol.On {
		e.Warnf("%s", pol.OffHint())
		return cfg, cli.ExitFailure, false
	}
	// A delete from the selector writes this machine's tombstone file.
	if code := e.NeedMachine(&st); code != cli.ExitOK {
		return cfg, code, false
	}
	hidden, ok := e.LoadHidden(st)
	if !ok {
		return cfg, cli.ExitUntrusted, false
	}
	return picker.Config{
		Store: st, Hidden: hidden, Project: project, Also: also, Repo: repo, All: sc.All, Query: o.query,
		Filter: filter, Filters: o.filters.Words(), Now: func() time.Time { now, _ := e.Now(); return now },
		ResumeKey: o.resumeKey, DeleteKeys: o.deleteKeys, Shell: o.shell,
	}, cli.ExitOK, true
}

// output is what hist-pick prints for the choice c.
func output(c picker.Choice, o options) []byte {
	l := lineenc.Listed{Text: c.Text, TS: c.TS, Cwd: c.Cwd, File: c.File, Src: c.Src, Session: c.Session, Resume: c.Resume}
	switch {
	case o.format == lineenc.JSON:
	case c.Resume != "":
		l.Text = c.Resume
	case o.word:
		l.Text = shellquote.Quote(c.Text, o.shell)
	}
	return o.format.Append(nil, l)
}
