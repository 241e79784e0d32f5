// Package histcapture is the hist-capture command; cmd/hist-capture runs it, and the
// tests link it into their binary (internal/testbin).
package histcapture

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mattn/go-isatty"

	"hist/lib/agent"
	"hist/lib/cli"
	"hist/lib/install"
	"hist/lib/lock"
	"hist/lib/policy"
	"hist/lib/store"
	"hist/lib/termsafe"
	"hist/lib/words"
)

const usage = `Usage:
    hist-capture [--cwd DIR] [--instance ID] [--ts MS] [--src NAME --session ID]
                 [--store DIR] [--] [TEXT]
    hist-capture --hook < PAYLOAD.json
    hist-capture --enable | --disable | --status
    hist-capture --install | --uninstall [LIST] [--dry-run]
    hist-capture --rename-machine NAME

Appends one prompt to the prompt history, if capture is on. The prompt is
TEXT, or all of standard input when TEXT is absent (multi-line kept, one
trailing newline stripped). Put -- before a TEXT that may start with "-"
(everything after -- is the prompt). Empty prompts and command-like prompts
("/name ...") are never captured.

Capture is off by default. GENTLE_PI_HISTORY_CAPTURE=1|true|on forces it on,
0|false|off forces it off; otherwise the preference saved by --enable or
--disable decides ($GENTLE_PI_CONFIG_HOME/history-capture.json, default
~/.pi/gentle-ai). With capture off nothing at all is written; run by hand
(stderr a terminal) it says so in one line, and --hook and pipes stay silent.

Secrets (private keys, cloud and API tokens, password=... assignments) are
replaced by [REDACTED:<kind>] before anything is checked or written; the
rest of the prompt is kept. GENTLE_PI_HISTORY_REDACT=0|false|off|no stores
prompts verbatim (see docs/redaction.md).

Every file a machine writes carries its machine id, so a store shared by a
file synchronizer has one writer per file. The id is fixed at the machine's
first write, in $GENTLE_PI_CONFIG_HOME/machine-id: HIST_MACHINE (1 to 32
letters, digits, '-', '_') names it then, else 8 random hex digits. Later, a
HIST_MACHINE that differs from it would split the machine's history in
two: the other binaries refuse it (exit 2), hist-capture stores the prompt
under the recorded id and warns (no prompt is lost), and --rename-machine
renames the machine (see docs/sync.md).

Options:
    --cwd DIR        The prompt's project folder. Default: the working directory.
    --instance ID    Name of the capture file (projects/<hash>/ID@MACHINE.jsonl,
                     MACHINE being this machine's id). Default: one stable ID
                     per calling process (the parent's pid and start time),
                     so one agent process writes one file.
    --ts MS          The prompt's time in Unix milliseconds. Default: now.
    --src NAME       The agent that sent the prompt (AGENTS), and --session ID
                     its session: the record carries both, so the selector
                     can resume that session. The id must be a plain id
                     (letters, digits, . _ : -, not starting with -). Give
                     both or neither.
    --store DIR      The store. Default: $PI_CODING_AGENT_DIR/history or
                     ~/.pi/agent/history.
    --hook           Read one agent hook payload (JSON, at most 64 MiB) on
                     stdin and capture its prompt: Claude Code's
                     UserPromptSubmit ("prompt", "cwd", "session_id"), Codex's
                     UserPromptSubmit (the same plus "turn_id"), Cursor's
                     beforeSubmitPrompt ("prompt", "workspace_roots",
                     "conversation_id") or {"prompt","cwd"}. Prints nothing
                     and exits 0 even on its own errors (reported on
                     stderr), so it never blocks the agent; stdin is always
                     read to its end. What a capture run by an agent (stderr
                     not a terminal) says on stderr is also kept, the last
                     time only, in the config home's hook-problem, for
                     --status.
    --enable         Save the preference "on" (atomically).
    --disable        Save the preference "off".
    --status         A health check. Whether capture is on, what decided it,
                     the store, whether redaction is on, this machine's id;
                     then, for each agent found: whether hist is wired in,
                     the command its hook runs and whether that binary is
                     there, a dry run of that command as the agent runs it
                     (sh -c with only HOME and PATH=/usr/bin:/bin, and a
                     payload that stores nothing), the last prompt captured
                     from it; the last problem a hook met; and the watch
                     service, timer or cron lines installed.
    --install [LIST] Wire hist into each agent of LIST whose folder exists:
                     "all" (the default) or names joined by commas (AGENTS).
                     It copies pi's extension, opencode's plugin and Cursor's
                     hook script, and adds the hook to Claude Code's
                     settings.json, Codex's hooks.json and Cursor's
                     hooks.json; each runs this binary by its absolute path
                     (symbolic links resolved), so the agents need no PATH.
                     A settings file is edited in place, every other byte
                     kept, and kept as it was in NAME.hist-backup-<time>.
                     What it does is docs/integrations.md's manual steps.
                     One line per file written; an agent not found, or
                     already installed, is said and skipped.
    --uninstall [LIST]
                     Remove what --install adds: hist's hook entries (a hook
                     of yours that runs hist-capture is said, and left), and
                     the copied files when their content is hist's own, with
                     the folders --install made when they are left empty.
                     After an --install that nothing else changed, each
                     settings file is given back byte for byte.
    --dry-run        With --install or --uninstall: print the changes,
                     write nothing.
    --rename-machine NAME
                     Give this machine the id NAME: every store file named
                     with its old id is renamed, under the rewriters' lock,
                     then machine-id is updated. A rename cut short is
                     finished by the next one.

Exit status:
    0  captured, or nothing to do (capture off, empty or command-like prompt);
       --install/--uninstall/--rename-machine: done (agents not found
       included); --status: every wired agent's hook ran
    1  the store could not be written; --install/--uninstall could not write
       an agent's file, or --rename-machine a store file (the message says
       which, and what state it left); --status: a wired agent's hook could
       not run
    2  usage error, HOME unset or not absolute while the store or the
       preference needs it, or HIST_MACHINE not a machine id (nothing is
       written)
    3  --enable/--disable refused: the preference file is invalid or unreadable
    4  --install/--uninstall refused a file: read-only, a link to nothing, not
       valid JSON, a key given twice, nested too deep, or not laid out as the
       agent reads it; nothing was written for that agent, the other agents
       were done

Examples:
    $ hist-capture --enable
    $ hist-capture "fix the flaky test in store_test.go"
    $ git diff | hist-capture --cwd ~/src/app
    $ GENTLE_PI_HISTORY_CAPTURE=1 hist-capture --instance "$PI_SESSION" -- "$PROMPT"
    $ hist-capture --install
    claude: added the UserPromptSubmit hook to /home/me/.claude/settings.json (the file as it was: settings.json.hist-backup-20260102-030405)
    codex: not found (no /home/me/.codex): skipped
    $ hist-capture --status
    $ hist-capture --install claude,codex --dry-run
    $ hist-capture --uninstall pi
    $ hist-capture --rename-machine laptop
`

// Exit codes of hist-capture's own (see usage).
const (
	exitPreference = 3 // --enable/--disable: the preference file is invalid
	exitRefused    = 4 // --install/--uninstall left a file alone (install.Refused)
)

// Main runs hist-capture with the process's arguments and exits with its status.
func Main() { os.Exit(run(cli.OSEnv("hist-capture"))) }

// flags are hist-capture's flags: a plain capture's, then its modes, of
// which at most one is given.
type flags struct {
	cwd, inst, ts, src, session                            string
	hook, enable, disable, status, install, uninstall, dry bool
	rename                                                 string
}

func run(e *cli.Env) int {
	e.Captures = true // a HIST_MACHINE of another name: warned, the prompt kept
	fs := e.Flags()
	storeDir := cli.StoreFlag(fs)
	var f flags
	for name, p := range map[string]*string{"cwd": &f.cwd, "instance": &f.inst, "ts": &f.ts, "src": &f.src, "session": &f.session, cli.RenameFlag: &f.rename} {
		fs.StringVar(p, name, "", "")
	}
	for name, p := range map[string]*bool{"hook": &f.hook, "enable": &f.enable, "disable": &f.disable, "status": &f.status, "install": &f.install, "uninstall": &f.uninstall, "dry-run": &f.dry} {
		fs.BoolVar(p, name, false, "")
	}
	usage := strings.ReplaceAll(usage, "AGENTS", strings.Join(agent.Names(), ", "))
	args, code, stop := e.ParseArgs(fs, usage, e.Args)
	if stop {
		return code
	}
	if code := f.check(e, args); code != cli.ExitOK {
		return code
	}
	st := e.StoreRoot(*storeDir) // the machine id only once capture is on
	switch {
	case f.enable || f.disable:
		return setPreference(e, f.enable)
	case f.status:
		return Status(e, st)
	case f.install || f.uninstall:
		return runInstall(e, args, f.uninstall, f.dry)
	case f.rename != "":
		return renameMachine(e, st, f.rename)
	case f.hook:
		Hook(e, st, e.HomeProblem(fs) == "")
		return cli.ExitOK
	}
	if !termsafe.IsTerminal(e.Stderr) { // run by an agent's extension or plugin
		done := KeepProblems(e)
		defer done(f.src)
	}
	return f.capture(e, st, args)
}

// check refuses modes used together, and arguments a mode does not take.
func (f *flags) check(e *cli.Env, args []string) int {
	modes := []bool{f.hook, f.enable, f.disable, f.status, f.install, f.uninstall, f.rename != ""}
	switch {
	case len(slices.DeleteFunc(modes, func(on bool) bool { return !on })) > 1:
		e.Errorf("--hook, --enable, --disable, --status, --install, --uninstall and --rename-machine are separate modes: use one at a time")
	case f.dry && !f.install && !f.uninstall:
		e.Errorf("--dry-run goes with --install or --uninstall: add one of them")
	case (f.enable || f.disable) && len(args) > 0:
		e.Errorf("--enable and --disable take no prompt: run them alone")
	case (f.status || f.rename != "") && len(args) > 0:
		e.Errorf("--status and --rename-machine take no prompt: run them alone")
	default:
		return cli.ExitOK
	}
	return cli.ExitUsage
}

// checkCapture refuses a plain capture's arguments that are not valid.
func (f *flags) checkCapture(e *cli.Env, args []string) int {
	_, known := agent.Lookup(f.src)
	ts, err := strconv.ParseInt(f.ts, 10, 64)
	switch {
	case len(args) > 1:
		e.Errorf("too many arguments (%d): quote the prompt as one argument, or pipe it on stdin", len(args))
	case f.ts != "" && (err != nil || ts < 0):
		e.Errorf("--ts %q is not a time in Unix milliseconds: give a whole number such as %d", f.ts, time.Now().UnixMilli())
	case f.inst != "" && !store.ValidInstance(f.inst):
		e.Errorf("--instance %q cannot name a capture file: use letters, digits, '.', '_' and '-' (not a name the store gives other files: seed, import-, compact-, .gc-, .carry-)", f.inst)
	case f.src != "" && !known:
		e.Errorf("--src %q is not an agent hist knows: use one of %s", f.src, strings.Join(agent.Names(), ", "))
	case f.session != "" && !agent.PlainID(f.session):
		e.Errorf("--session %q is not a plain id: use letters, digits and . _ : -, not starting with -", f.session)
	case (f.src == "") != (f.session == ""):
		e.Errorf("--src and --session go together: give both (the agent and its session id) or neither")
	default:
		return cli.ExitOK
	}
	return cli.ExitUsage
}

// capture stores TEXT (args) or stdin, when capture is on.
func (f *flags) capture(e *cli.Env, st store.Store, args []string) int {
	if code := f.checkCapture(e, args); code != cli.ExitOK {
		return code
	}
	p := Prompt{Cwd: f.cwd, Instance: f.inst, Src: f.src, Session: f.session}
	p.TS, _ = strconv.ParseInt(f.ts, 10, 64)
	if len(args) == 1 {
		p.Text = args[0]
	} else if in, ok := e.Stdin.(*os.File); ok && isatty.IsTerminal(in.Fd()) {
		e.Errorf("no prompt given: pass it as an argument or on stdin (see '%s --help')", e.Name)
		return cli.ExitUsage
	} else {
		data, err := io.ReadAll(e.Stdin)
		if err != nil {
			e.Errorf("reading the prompt from stdin: %v", err)
			return cli.ExitFailure
		}
		p.Text = strings.TrimSuffix(string(data), "\n")
	}
	switch pol := e.Policy(); {
	case pol.On:
		return Store(e, st, p)
	case pol.Source == policy.InvalidPreference:
		e.Warnf("%s", pol.OffHint())
	case termsafe.IsTerminal(e.Stderr):
		// Run by hand: say why nothing was stored. Integrations pipe
		// stderr and stay silent.
		e.Say("not captured: %s", pol.OffHint())
	}
	return cli.ExitOK
}

// runInstall is --install and --uninstall: the hooks run this binary.
func runInstall(e *cli.Env, args []string, remove, dry bool) int {
	flag := map[bool]string{false: "--install", true: "--uninstall"}[remove]
	list := "all"
	if len(args) == 1 {
		list = args[0]
	}
	names, err := install.ParseList(list)
	exe, xerr := install.Executable()
	switch {
	case len(args) > 1:
		e.Errorf("%s takes one LIST of agents, such as claude,codex (got %d arguments): separate the names with commas", flag, len(args))
	case !filepath.IsAbs(e.Home): // the agents' default folders are under HOME
		e.Errorf("%s: HOME is not set or not an absolute path (%q): set HOME", flag, e.Home)
	case err != nil:
		e.Errorf("%s: %v", flag, err)
	case xerr != nil && !remove:
		e.Errorf("%s: %v", flag, xerr)
	default:
		o := install.Options{Getenv: e.Getenv, Home: e.Home, Exe: exe, Remove: remove, DryRun: dry, Out: e.Stdout, Errorf: e.Errorf}
		return [...]int{install.Done: cli.ExitOK, install.Refused: exitRefused, install.Failed: cli.ExitFailure}[install.Run(o, names)]
	}
	return cli.ExitUsage
}

// renameMachine is --rename-machine NAME.
func renameMachine(e *cli.Env, st store.Store, name string) int {
	if !store.ValidMachine(name) {
		e.Errorf("--%s %q is not a machine id: use 1 to 32 letters, digits, '-' and '_'", cli.RenameFlag, name)
		return cli.ExitUsage
	}
	l, err := lock.Acquire(st.Lock(), 30*time.Second)
	if err != nil {
		e.Errorf("--%s: %s: nothing was renamed; run it again once it is done", cli.RenameFlag, words.Describe(err))
		return cli.ExitFailure
	}
	r, err := store.RenameMachine(st.Root, e.ConfigHome(), name)
	l.Release()
	switch {
	case err != nil:
		e.Errorf("--%s: %s: some files may still carry the old id (they stay readable); run 'hist-capture --%s %s' again to finish", cli.RenameFlag, words.Describe(err), cli.RenameFlag, name)
		return cli.ExitFailure
	case r.From == "" || r.From == r.To:
		e.Say("this machine's id is %s (%s)", name, filepath.Join(e.ConfigHome(), store.MachineFile))
	default:
		e.Say("renamed this machine from %s to %s: %s renamed", r.From, r.To, words.Plural(r.Files, "file", "files"))
	}
	for _, k := range r.Kept {
		e.Warnf("%s stays under the old id: its new name is taken (both are read; nothing is lost)", k)
	}
	if v := e.Getenv(store.MachineEnv); v != "" && v != name {
		e.Warnf("%s=%s still differs from this machine's id %s: unset it, or set it to %s", store.MachineEnv, v, name, name)
	}
	return cli.ExitOK
}

// setPreference is --enable and --disable.
func setPreference(e *cli.Env, on bool) int {
	word := onOff(on)
	if err := policy.Save(e.ConfigHome(), on); errors.Is(err, policy.ErrInvalidPreference) {
		e.Errorf("%v: it is never rewritten; fix or remove it by hand, then run this again", err)
		return exitPreference
	} else if err != nil {
		e.Errorf("saving the preference in %s: %v: nothing was changed", policy.PrefPath(e.ConfigHome()), err)
		return cli.ExitFailure
	}
	switch pol := e.Policy(); {
	case pol.Source == policy.FromEnv && pol.On != on:
		e.Say("saved preference %q in %s, but %s=%s overrides it until the variable is unset",
			word, pol.PrefPath, policy.EnvVar, strings.TrimSpace(pol.EnvValue))
	case pol.Source == policy.FromEnv:
		e.Say("saved preference %q in %s (%s=%s forces the same for now)",
			word, pol.PrefPath, policy.EnvVar, strings.TrimSpace(pol.EnvValue))
	default:
		e.Say("capture is %s (saved in %s)", word, pol.PrefPath)
	}
	return cli.ExitOK
}
