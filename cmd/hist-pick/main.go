// Command hist-pick opens the prompt history selector and prints the
// chosen prompt.
package main

import (
	"fmt"
	"os"
	"strings"

	fzf "github.com/junegunn/fzf/src"

	"hist/lib/cli"
	"hist/lib/lineenc"
	"hist/lib/picker"
	"hist/lib/shellquote"
	"hist/scripts/shell"
)

const usage = `Usage:
    hist-pick [--project [DIR] | --all] [--query Q] [-0 | --json | --word | --resume]
              [--shell bash|zsh|fish|sh] [--resume-key KEY | --no-resume-key]
              [--delete-key KEY] [--store DIR]
    hist-pick --shell bash|zsh|fish

Opens the prompt history selector on the terminal (/dev/tty, so it works
inside $(...) and pipes) and prints the chosen prompt on stdout. Prompts
stream in newest first, each once; hidden (deleted) prompts never show.
The selector reads the store; it never imports.

A prompt is text, never a command: pass it as an argument ("$(hist-pick)"),
never to eval. To resume a session from the shell, eval only --resume's
output, which is a resume command or nothing.

Scopes (the selector's radio starts here; tab switches it):
    --project [DIR]  The project at DIR (default: the working directory).
    --all            Every project, plus history-global.jsonl.

Output:
    (default)        The prompt as it was typed, then a newline.
    -0               The prompt, ended by a NUL byte.
    --json           One JSON object: text, ts, cwd, file, and src and session
                     where the prompt has them (as hist-list --json), plus
                     resume when the resume key chose.
    --word           The prompt as one shell word, single-quoted for --shell
                     (what the key bindings insert).
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
    tab, ctrl-s      Switch the scope: Current project | All projects.
    ctrl-delete, alt-d
                     Arm a delete of the selected prompt; then y deletes every
                     copy in the scope the radio shows and hides it, n or Esc
                     cancels, any other key is ignored. --delete-key KEY (or
                     $HIST_PICK_DELETE_KEY) binds KEY instead (fzf key names;
                     several: comma-separated).
    home, end        Empty search box: the newest / the oldest prompt (End waits
                     for the whole scope to load). Otherwise: the start / end of
                     the query.
    ctrl-r           Toggle sorting matches by relevance / by time.
    ctrl-p           Hide or show the preview. It shrinks on short terminals so
                     that the list keeps 10 prompts, and hides under 19 rows.
                     Not bound when --resume-key or --delete-key takes ctrl-p.
    esc, ctrl-c      Quit, printing nothing.

Shell key bindings (ctrl-r inserts the chosen prompt at the cursor as one
single-quoted word, so "pi <ctrl-r>" gives pi '<the prompt>'; ctrl-o in
the selector inserts the resume command instead):
    eval "$(hist-pick --shell bash)"      # ~/.bashrc
    eval "$(hist-pick --shell zsh)"       # ~/.zshrc
    hist-pick --shell fish | source       # ~/.config/fish/config.fish

With capture off, hist-pick opens nothing and reads nothing: it prints one
warning naming the control that decides and exits 1.

Exit status:
    0    a prompt (or a resume command) was printed
    1    capture is off, or the selector could not run, or --resume chose a
         prompt with no session to resume (or a refused session id)
    2    usage error
    3    hidden.json cannot be trusted: nothing is shown; restore the file or
         delete it yourself (hidden prompts may then reappear)
    130  cancelled (Esc, ctrl-c): nothing printed

Examples:
    $ pi "$(hist-pick)"
    $ claude "$(hist-pick --all --query refactor)"
    $ eval "$(hist-pick --all --resume)"                  # bash, zsh
    $ eval (hist-pick --all --resume --shell fish)        # fish
`

func main() {
	if len(os.Args) == 3 && os.Args[1] == picker.CallbackFlag {
		os.Exit(picker.Callback(os.Args[2], os.Stdout))
	}
	os.Exit(run(cli.OSEnv("hist-pick")))
}

func run(e *cli.Env) int {
	fs := e.Flags()
	storeDir := cli.StoreFlag(fs)
	var scope cli.ScopeFlags
	scope.Register(fs)
	query := fs.String("query", "", "")
	nul := fs.Bool("0", false, "")
	asJSON := fs.Bool("json", false, "")
	resumeKey := fs.String("resume-key", "", "")
	noResumeKey := fs.Bool("no-resume-key", false, "")
	deleteKey := fs.String("delete-key", "", "")
	shellName := fs.String("shell", "", "")
	word := fs.Bool("word", false, "")
	resumeOnly := fs.Bool("resume", false, "")
	args, code, stop := e.ParseArgs(fs, usage, cli.SplitOptional(e.Args, "project", 0))
	if stop {
		return code
	}
	if len(args) > 0 {
		e.Errorf("unexpected argument %q: to start with a query, use --query %q", args[0], args[0])
		return cli.ExitUsage
	}
	if *shellName != "" && !*word && !*resumeOnly {
		s, ok := shell.Script(*shellName)
		if !ok {
			e.Errorf("--shell %s: no key bindings for that shell: choose one of %s", *shellName, strings.Join(shell.Names(), ", "))
			return cli.ExitUsage
		}
		fmt.Fprint(e.Stdout, s)
		return cli.ExitOK
	}
	if *nul && *asJSON {
		e.Errorf("-0 and --json are two formats: choose one")
		return cli.ExitUsage
	}
	if (*word || *resumeOnly) && (*nul || *asJSON || *word && *resumeOnly) {
		e.Errorf("--word and --resume each choose what is printed: use one of them, without -0 or --json")
		return cli.ExitUsage
	}
	sh := shellquote.Any
	if *shellName != "" {
		var err error
		if sh, err = shellquote.Parse(*shellName); err != nil {
			e.Errorf("--shell %s: %v", *shellName, err)
			return cli.ExitUsage
		}
	}
	if *noResumeKey && *resumeKey != "" {
		e.Errorf("--resume-key and --no-resume-key contradict each other: use one")
		return cli.ExitUsage
	}
	rk := firstNonEmpty(*resumeKey, e.Getenv("HIST_PICK_RESUME_KEY"), "ctrl-o")
	dk := firstNonEmpty(*deleteKey, e.Getenv("HIST_PICK_DELETE_KEY"), "ctrl-delete,alt-d")
	var deleteKeys []string
	for _, k := range strings.Split(dk, ",") {
		if k = strings.TrimSpace(k); k != "" {
			deleteKeys = append(deleteKeys, k)
		}
	}
	for _, k := range append([]string{rk}, deleteKeys...) {
		if err := checkKey(k); err != nil {
			e.Errorf("key %q: %v: use an fzf key name such as ctrl-o, alt-d or ctrl-delete", k, err)
			return cli.ExitUsage
		}
	}

	st := e.Store(*storeDir)
	sc, _, err := scope.Resolve(st)
	if err != nil {
		e.Errorf("%v", err)
		return cli.ExitUsage
	}
	project, also := sc.Project, sc.Also
	if sc.All {
		// The radio's "Current project" is the working directory's.
		cur := cli.ScopeFlags{Project: true}
		if ps, _, err := cur.Resolve(st); err == nil {
			project, also = ps.Project, ps.Also
		}
	}

	pol := e.Policy()
	if !pol.On {
		e.Warnf("%s", pol.OffHint())
		return cli.ExitFailure
	}
	// A delete from the selector writes this machine's tombstone file.
	if code := e.NeedMachine(&st); code != cli.ExitOK {
		return code
	}
	hidden, ok := e.LoadHidden(st)
	if !ok {
		return cli.ExitUntrusted
	}
	c, code, err := picker.Run(picker.Config{
		Store: st, Hidden: hidden, Project: project, Also: also, All: sc.All, Query: *query,
		ResumeKey: rk, NoResumeKey: *noResumeKey, DeleteKeys: deleteKeys, Shell: sh,
	})
	switch code {
	case picker.ExitChosen:
	case picker.ExitCancelled:
		return picker.ExitCancelled
	default:
		e.Errorf("%v", err)
		return cli.ExitFailure
	}
	if *resumeOnly && c.Resume == "" {
		if c.Resume, err = picker.ResumeCommand(c.Src, c.Session, c.Cwd, sh); err != nil {
			e.Errorf("--resume: %v", err)
			return cli.ExitFailure
		}
	}
	var out []byte
	switch {
	case *asJSON:
		out = lineenc.AppendJSON(nil, lineenc.Listed{Text: c.Text, TS: c.TS, Cwd: c.Cwd, File: c.File, Src: c.Src, Session: c.Session, Resume: c.Resume})
	case *nul:
		out = append([]byte(pick(c)), 0)
	case *word && c.Resume == "":
		out = append([]byte(shellquote.Quote(c.Text, sh)), '\n')
	default:
		out = append([]byte(pick(c)), '\n')
	}
	if _, err := e.Stdout.Write(out); err != nil {
		return cli.ExitFailure
	}
	return cli.ExitOK
}

func pick(c picker.Choice) string {
	if c.Resume != "" {
		return c.Resume
	}
	return c.Text
}

// checkKey asks fzf whether it can bind k.
func checkKey(k string) error {
	_, err := fzf.ParseOptions(false, []string{"--bind=" + k + ":ignore"})
	return err
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if strings.TrimSpace(v) != "" {
			return strings.TrimSpace(v)
		}
	}
	return ""
}
