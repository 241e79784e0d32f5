// Command hist-capture appends one prompt to the store, when capture is on.
package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"hist/lib/words"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/mattn/go-isatty"

	"hist/lib/agent"
	"hist/lib/cli"
	"hist/lib/identity"
	"hist/lib/install"
	"hist/lib/instance"
	"hist/lib/policy"
	"hist/lib/record"
	"hist/lib/redact"
	"hist/lib/store"
	"hist/lib/termsafe"
)

const usage = `Usage:
    hist-capture [--cwd DIR] [--instance ID] [--ts MS] [--src NAME --session ID]
                 [--store DIR] [--] [TEXT]
    hist-capture --hook < PAYLOAD.json
    hist-capture --enable | --disable | --status
    hist-capture --install | --uninstall [LIST] [--dry-run]

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
file synchronizer has one writer per file: the id is made once, at the
first capture, in $GENTLE_PI_CONFIG_HOME/machine-id; HIST_MACHINE (1 to 32
letters, digits, '-', '_') overrides it (see docs/store-format.md).

Options:
    --cwd DIR        The prompt's project folder. Default: the working directory.
    --instance ID    Name of the capture file (projects/<hash>/ID@MACHINE.jsonl,
                     MACHINE being this machine's id). Default: one stable ID
                     per calling process (the parent's pid and start time),
                     so one agent process writes one file.
    --ts MS          The prompt's time in Unix milliseconds. Default: now.
    --src NAME       The agent that sent the prompt (pi, claude, codex, cursor,
                     opencode), and --session ID its session: the record
                     carries both, so the selector can resume that session.
                     The id must be a plain id (letters, digits, . _ : -,
                     not starting with -). Give both or neither.
    --store DIR      The store. Default: $PI_CODING_AGENT_DIR/history or
                     ~/.pi/agent/history.
    --hook           Read one agent hook payload (JSON) on stdin and capture
                     its prompt: Claude Code's UserPromptSubmit ("prompt",
                     "cwd", "session_id"), Codex's UserPromptSubmit (the
                     same plus "turn_id"), Cursor's beforeSubmitPrompt
                     ("prompt", "workspace_roots", "conversation_id") or
                     {"prompt","cwd"}. Prints nothing and exits 0 even on
                     its own errors (reported on stderr), so it never blocks
                     the agent.
    --enable         Save the preference "on" (atomically).
    --disable        Save the preference "off".
    --status         Print whether capture is on, what decided it, the store,
                     whether redaction is on, and this machine's id.
    --install [LIST] Wire hist into each agent of LIST whose folder exists:
                     "all" (the default) or names joined by commas: pi,
                     claude, codex, cursor, opencode. It copies pi's
                     extension, opencode's plugin and Cursor's hook script,
                     and adds the hook "hist-capture --hook" (the binary's
                     full path when hist-capture is not on PATH) to Claude
                     Code's settings.json, Codex's hooks.json and Cursor's
                     hooks.json, keeping their other keys and hooks in order.
                     What it does is docs/integrations.md's manual steps.
                     One line per file written; an agent not found, or
                     already installed, is said and skipped. Every file is
                     replaced atomically, the previous one kept as NAME.bak.
    --uninstall [LIST]
                     Remove what --install adds: hist's hook entries, and
                     the copied files when their content is hist's own.
    --dry-run        With --install or --uninstall: print the changes,
                     write nothing.

Exit status:
    0  captured, or nothing to do (capture off, empty or command-like prompt);
       --install/--uninstall: done, agents not found included
    1  the store could not be written, or --install/--uninstall could not
       write an agent's file (the message says which file)
    2  usage error, or HOME unset or not absolute while the store or the
       preference needs it (nothing is written)
    3  --enable/--disable refused: the preference file is invalid or unreadable
    4  --install/--uninstall refused a settings file that is not valid JSON
       (or not laid out as the agent reads it): nothing was written for that
       agent; the other agents were done

Examples:
    $ hist-capture --enable
    $ hist-capture "fix the flaky test in store_test.go"
    $ git diff | hist-capture --cwd ~/src/app
    $ GENTLE_PI_HISTORY_CAPTURE=1 hist-capture --instance "$PI_SESSION" -- "$PROMPT"
    $ hist-capture --install
    claude: added the UserPromptSubmit hook to /home/me/.claude/settings.json (previous kept as settings.json.bak)
    codex: not found (no /home/me/.codex): skipped
    $ hist-capture --install claude,codex --dry-run
    $ hist-capture --uninstall pi
`

const exitPreference = 3

func main() { os.Exit(run(cli.OSEnv("hist-capture"))) }

func run(e *cli.Env) int {
	fs := e.Flags()
	storeDir := cli.StoreFlag(fs)
	cwd := fs.String("cwd", "", "")
	inst := fs.String("instance", "", "")
	tsFlag := fs.String("ts", "", "")
	src := fs.String("src", "", "")
	session := fs.String("session", "", "")
	hook := fs.Bool("hook", false, "")
	enable := fs.Bool("enable", false, "")
	disable := fs.Bool("disable", false, "")
	status := fs.Bool("status", false, "")
	installF, uninst, dry := fs.Bool("install", false, ""), fs.Bool("uninstall", false, ""), fs.Bool("dry-run", false, "")
	args, code, stop := e.ParseArgs(fs, usage, e.Args)
	if stop {
		return code
	}
	modes := 0
	for _, b := range []bool{*hook, *enable, *disable, *status, *installF, *uninst} {
		if b {
			modes++
		}
	}
	if modes > 1 {
		e.Errorf("--hook, --enable, --disable, --status, --install and --uninstall are separate modes: use one at a time")
		return cli.ExitUsage
	}
	if *dry && !*installF && !*uninst {
		e.Errorf("--dry-run goes with --install or --uninstall: add one of them")
		return cli.ExitUsage
	}
	st := e.StoreRoot(*storeDir) // the machine id only once capture is on
	switch {
	case *enable || *disable:
		if len(args) > 0 {
			e.Errorf("--enable and --disable take no prompt: run them alone")
			return cli.ExitUsage
		}
		return setPreference(e, *enable)
	case *status:
		if len(args) > 0 {
			e.Errorf("--status takes no prompt: run it alone")
			return cli.ExitUsage
		}
		return printStatus(e, st)
	case *installF || *uninst:
		return install.Main(e, args, *uninst, *dry)
	case *hook:
		runHook(e, st, e.HomeProblem(fs) == "")
		return cli.ExitOK
	}

	if len(args) > 1 {
		e.Errorf("too many arguments (%d): quote the prompt as one argument, or pipe it on stdin", len(args))
		return cli.ExitUsage
	}
	var ts int64
	if *tsFlag != "" {
		n, err := strconv.ParseInt(*tsFlag, 10, 64)
		if err != nil || n < 0 {
			e.Errorf("--ts %q is not a time in Unix milliseconds: give a whole number such as %d", *tsFlag, time.Now().UnixMilli())
			return cli.ExitUsage
		}
		ts = n
	}
	if *inst != "" && !store.ValidInstance(*inst) {
		e.Errorf("--instance %q cannot name a capture file: use letters, digits, '.', '_' and '-' (not a name the store gives other files: seed, import-, compact-, .gc-, .carry-)", *inst)
		return cli.ExitUsage
	}
	if _, ok := agent.Lookup(*src); *src != "" && !ok {
		e.Errorf("--src %q is not an agent hist knows: use one of %s", *src, strings.Join(agent.Names(), ", "))
		return cli.ExitUsage
	}
	if *session != "" && !agent.PlainID(*session) {
		e.Errorf("--session %q is not a plain id: use letters, digits and . _ : -, not starting with -", *session)
		return cli.ExitUsage
	}
	if (*src == "") != (*session == "") {
		e.Errorf("--src and --session go together: give both (the agent and its session id) or neither")
		return cli.ExitUsage
	}
	var text string
	if len(args) == 1 {
		text = args[0]
	} else {
		if f, ok := e.Stdin.(*os.File); ok && isatty.IsTerminal(f.Fd()) {
			e.Errorf("no prompt given: pass it as an argument or on stdin (see '%s --help')", e.Name)
			return cli.ExitUsage
		}
		data, err := io.ReadAll(e.Stdin)
		if err != nil {
			e.Errorf("reading the prompt from stdin: %v", err)
			return cli.ExitFailure
		}
		text = strings.TrimSuffix(string(data), "\n")
	}

	pol := e.Policy()
	if !pol.On {
		switch {
		case pol.Source == policy.InvalidPreference:
			e.Warnf("%s", pol.OffHint())
		case termsafe.IsTerminal(e.Stderr):
			// Run by hand: say why nothing was stored. Integrations
			// pipe stderr and stay silent.
			e.Say("not captured: %s", pol.OffHint())
		}
		return cli.ExitOK
	}
	return capture(e, st, text, *cwd, *inst, ts, *src, *session)
}

// capture stores one prompt; policy already said yes. The prompt is
// redacted first (unless GENTLE_PI_HISTORY_REDACT turns it off), so every
// check and the stored record see the redacted text.
func capture(e *cli.Env, st store.Store, text, cwd, inst string, ts int64, src, session string) int {
	if redact.Enabled(e.Getenv(redact.EnvVar)) {
		text = redact.Text(text)
	}
	if !identity.Capturable(text) {
		return cli.ExitOK
	}
	if cwd == "" {
		wd, err := os.Getwd()
		if err != nil {
			e.Errorf("finding the working directory: %v: pass --cwd DIR", err)
			return cli.ExitFailure
		}
		cwd = wd
	}
	canon, err := store.Canonical(cwd)
	if err != nil {
		e.Errorf("resolving --cwd %q: %v", cwd, err)
		return cli.ExitUsage
	}
	if inst == "" {
		inst = instance.ForParent()
	}
	if ts == 0 {
		ts = time.Now().UnixMilli()
	}
	// The machine id names the file (docs/store-format.md); a bad one is
	// refused before (ParseArgs), except for a hook, which is never failed.
	if code := e.NeedMachine(&st); code != cli.ExitOK {
		return code
	}
	hash, _ := store.ProjectOf(canon)
	path := filepath.Join(st.ProjectDir(hash), store.CaptureFile(inst, st.Machine))
	line := record.Marshal(record.Record{Text: text, TS: ts, Src: src, Session: session})
	if err := store.Append(path, line); err != nil {
		e.Errorf("writing %s: %v: the prompt was not captured; check the store folder (free space, permissions, a file or folder in the way)", path, words.Describe(err))
		return cli.ExitFailure
	}
	if err := st.Register(hash, canon); err != nil {
		// registry.json is advisory: the prompt is stored.
		e.Warnf("updating %s: %v (the prompt is stored; labels may show the project hash)", st.Registry(), err)
	}
	return cli.ExitOK
}

func setPreference(e *cli.Env, on bool) int {
	word := "off"
	if on {
		word = "on"
	}
	if err := policy.Save(e.ConfigHome(), on); err != nil {
		if errors.Is(err, policy.ErrInvalidPreference) {
			e.Errorf("%v: it is never rewritten; fix or remove it by hand, then run this again", err)
			return exitPreference
		}
		e.Errorf("saving the preference in %s: %v: nothing was changed", policy.PrefPath(e.ConfigHome()), err)
		return cli.ExitFailure
	}
	pol := e.Policy()
	if pol.Source == policy.FromEnv && pol.On != on {
		e.Say("saved preference %q in %s, but %s=%s overrides it until the variable is unset",
			word, pol.PrefPath, policy.EnvVar, strings.TrimSpace(pol.EnvValue))
		return cli.ExitOK
	}
	if pol.Source == policy.FromEnv {
		e.Say("saved preference %q in %s (%s=%s forces the same for now)",
			word, pol.PrefPath, policy.EnvVar, strings.TrimSpace(pol.EnvValue))
		return cli.ExitOK
	}
	e.Say("capture is %s (saved in %s)", word, pol.PrefPath)
	return cli.ExitOK
}

func printStatus(e *cli.Env, st store.Store) int {
	pol := e.Policy()
	state := "off"
	if pol.On {
		state = "on"
	}
	pref := pol.Pref
	switch {
	case pol.PrefErr != nil:
		pref = fmt.Sprintf("invalid or unreadable (%v)", pol.PrefErr)
	case pref == "":
		pref = "none saved"
	}
	env := "unset"
	if v, ok := e.Lookup(policy.EnvVar); ok {
		env = strconv.Quote(v)
		if _, forced := policy.ParseEnv(v); !forced {
			env += " (does not force a value)"
		}
	}
	out := termsafe.Writer(e.Stdout) // paths escaped on a terminal
	fmt.Fprintf(out, "capture:     %s\ndecided by:  %s\npreference:  %s (%s)\n%s: %s\nstore:       %s\n",
		state, pol.Describe(), pref, pol.PrefPath, policy.EnvVar, env, st.Root)
	fmt.Fprintf(out, "redaction:   %s\n", redactionStatus(e))
	fmt.Fprintf(out, "machine:     %s\n", machineStatus(e))
	return cli.ExitOK
}

// machineStatus is this machine's id and where it comes from; --status
// only reads it (the first capture or rewrite makes it).
func machineStatus(e *cli.Env) string {
	path := filepath.Join(e.ConfigHome(), store.MachineFile)
	m, err := store.MachineID(e.Getenv, e.ConfigHome(), false)
	switch {
	case err == nil && e.Getenv(store.MachineEnv) != "":
		return fmt.Sprintf("%s (%s)", m, store.MachineEnv)
	case err == nil:
		return fmt.Sprintf("%s (%s)", m, path)
	case errors.Is(err, os.ErrNotExist):
		return fmt.Sprintf("none yet (the first capture or rewrite makes it in %s)", path)
	}
	return fmt.Sprintf("unusable (%v)", err)
}

// redactionStatus is "on (GENTLE_PI_HISTORY_REDACT=unset)" or the like.
func redactionStatus(e *cli.Env) string {
	v, set := e.Lookup(redact.EnvVar)
	state := "off"
	if redact.Enabled(v) {
		state = "on"
	}
	if !set {
		return fmt.Sprintf("%s (%s=unset)", state, redact.EnvVar)
	}
	return fmt.Sprintf("%s (%s=%s)", state, redact.EnvVar, strconv.Quote(v))
}

// runHook captures the prompt of one hook payload. It never fails the
// hook: errors go to stderr, the exit code is always 0, stdout stays empty.
// Without a usable HOME (homeOK false: ParseArgs left that to it) it reads
// the payload and stops, silently, writing nothing.
func runHook(e *cli.Env, st store.Store, homeOK bool) {
	data, err := io.ReadAll(io.LimitReader(e.Stdin, 64<<20))
	if err != nil {
		e.Errorf("--hook: reading the payload: %v: the prompt was not captured", err)
		return
	}
	// The payload is read whole even when capture is off, so the agent's
	// write never fails; with capture off it is not even looked at.
	if !homeOK {
		return
	}
	pol := e.Policy()
	if !pol.On {
		if pol.Source == policy.InvalidPreference {
			e.Warnf("%s", pol.OffHint())
		}
		return
	}
	var p agent.Hook
	if err := json.Unmarshal(data, &p); err != nil || p.Prompt == nil {
		e.Errorf("--hook: the payload is not a JSON object with a \"prompt\" string: the prompt was not captured")
		return
	}
	cwd := p.Cwd
	if cwd == "" && len(p.WorkspaceRoots) > 0 {
		cwd = p.WorkspaceRoots[0]
	}
	src, session := agent.FromHook(&p)
	inst := ""
	if session != "" {
		inst = instance.ForSession(src, session)
	}
	capture(e, st, *p.Prompt, cwd, inst, 0, src, session)
}
