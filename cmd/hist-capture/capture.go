package main

import (
	"flag"
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
	"hist/lib/instance"
	"hist/lib/policy"
	"hist/lib/record"
	"hist/lib/redact"
	"hist/lib/store"
	"hist/lib/termsafe"
	"hist/lib/words"
)

// captureFlags are the flags of a plain capture.
type captureFlags struct {
	cwd, inst, ts, src, session string
}

func (c *captureFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&c.cwd, "cwd", "", "")
	fs.StringVar(&c.inst, "instance", "", "")
	fs.StringVar(&c.ts, "ts", "", "")
	fs.StringVar(&c.src, "src", "", "")
	fs.StringVar(&c.session, "session", "", "")
}

func agentNames() []string { return agent.Names() }

// capture stores TEXT (args) or stdin.
func (c *captureFlags) capture(e *cli.Env, st store.Store, args []string) int {
	if len(args) > 1 {
		e.Errorf("too many arguments (%d): quote the prompt as one argument, or pipe it on stdin", len(args))
		return cli.ExitUsage
	}
	ts, code := c.check(e)
	if code != cli.ExitOK {
		return code
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
	return capture(e, st, text, c.cwd, c.inst, ts, c.src, c.session)
}

// check validates the flags of a plain capture, and returns --ts.
func (c *captureFlags) check(e *cli.Env) (int64, int) {
	var ts int64
	if c.ts != "" {
		n, err := strconv.ParseInt(c.ts, 10, 64)
		if err != nil || n < 0 {
			e.Errorf("--ts %q is not a time in Unix milliseconds: give a whole number such as %d", c.ts, time.Now().UnixMilli())
			return 0, cli.ExitUsage
		}
		ts = n
	}
	_, known := agent.Lookup(c.src)
	switch {
	case c.inst != "" && !store.ValidInstance(c.inst):
		e.Errorf("--instance %q cannot name a capture file: use letters, digits, '.', '_' and '-' (not a name the store gives other files: seed, import-, compact-, .gc-, .carry-)", c.inst)
	case c.src != "" && !known:
		e.Errorf("--src %q is not an agent hist knows: use one of %s", c.src, strings.Join(agent.Names(), ", "))
	case c.session != "" && !agent.PlainID(c.session):
		e.Errorf("--session %q is not a plain id: use letters, digits and . _ : -, not starting with -", c.session)
	case (c.src == "") != (c.session == ""):
		e.Errorf("--src and --session go together: give both (the agent and its session id) or neither")
	default:
		return ts, cli.ExitOK
	}
	return 0, cli.ExitUsage
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
		fix := "check the store folder (free space, permissions, a file or folder in the way)"
		if c := words.Chmod(path, err); c != "" {
			fix = "let hist in: " + c
		}
		e.Errorf("writing %s: %v: the prompt was not captured; %s", path, words.Describe(err), fix)
		return cli.ExitFailure
	}
	if err := st.Register(hash, canon); err != nil {
		// registry.json is advisory: the prompt is stored.
		e.Warnf("updating %s: %v (the prompt is stored; labels may show the project hash)", st.Registry(), err)
	}
	return cli.ExitOK
}
