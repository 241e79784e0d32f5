// Command hist-capture appends one prompt to the store, when capture is on.
package main

import (
	"os"
	"strings"

	"hist/lib/cli"
	"hist/lib/termsafe"
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

const exitPreference = 3

func main() { os.Exit(run(cli.OSEnv("hist-capture"))) }

// modes are hist-capture's modes other than a plain capture: at most one.
type modes struct {
	hook, enable, disable, status, install, uninstall, dry bool
	rename                                                 string
}

func run(e *cli.Env) int {
	e.Captures = true // a HIST_MACHINE of another name: warned, the prompt kept
	fs := e.Flags()
	storeDir := cli.StoreFlag(fs)
	var c captureFlags
	c.register(fs)
	var m modes
	fs.BoolVar(&m.hook, "hook", false, "")
	fs.BoolVar(&m.enable, "enable", false, "")
	fs.BoolVar(&m.disable, "disable", false, "")
	fs.BoolVar(&m.status, "status", false, "")
	fs.BoolVar(&m.install, "install", false, "")
	fs.BoolVar(&m.uninstall, "uninstall", false, "")
	fs.BoolVar(&m.dry, "dry-run", false, "")
	fs.StringVar(&m.rename, cli.RenameFlag, "", "")
	args, code, stop := e.ParseArgs(fs, agentUsage(), e.Args)
	if stop {
		return code
	}
	if code := m.check(e, args); code != cli.ExitOK {
		return code
	}
	st := e.StoreRoot(*storeDir) // the machine id only once capture is on
	switch {
	case m.enable || m.disable:
		return setPreference(e, m.enable)
	case m.status:
		return printStatus(e, st)
	case m.install || m.uninstall:
		return runInstall(e, args, m.uninstall, m.dry)
	case m.rename != "":
		return renameMachine(e, st, m.rename)
	case m.hook:
		runHook(e, st, e.HomeProblem(fs) == "")
		return cli.ExitOK
	}
	if !termsafe.IsTerminal(e.Stderr) { // run by an agent's extension or plugin
		done := keepProblems(e)
		defer done(c.src)
	}
	return c.capture(e, st, args)
}

// agentUsage is usage with the agents' names.
func agentUsage() string {
	return strings.ReplaceAll(usage, "AGENTS", strings.Join(agentNames(), ", "))
}

// check refuses modes used together, and arguments a mode does not take.
func (m *modes) check(e *cli.Env, args []string) int {
	n := 0
	for _, b := range []bool{m.hook, m.enable, m.disable, m.status, m.install, m.uninstall, m.rename != ""} {
		if b {
			n++
		}
	}
	switch {
	case n > 1:
		e.Errorf("--hook, --enable, --disable, --status, --install, --uninstall and --rename-machine are separate modes: use one at a time")
	case m.dry && !m.install && !m.uninstall:
		e.Errorf("--dry-run goes with --install or --uninstall: add one of them")
	case (m.enable || m.disable) && len(args) > 0:
		e.Errorf("--enable and --disable take no prompt: run them alone")
	case (m.status || m.rename != "") && len(args) > 0:
		e.Errorf("--status and --rename-machine take no prompt: run them alone")
	default:
		return cli.ExitOK
	}
	return cli.ExitUsage
}
