// What hist-capture does with a prompt: store it (Store), take it from an
// agent's hook payload (Hook), and keep what went wrong where --status
// finds it (KeepProblems).

package histcapture

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"hist/lib/agent"
	"hist/lib/atomicfile"
	"hist/lib/cli"
	"hist/lib/identity"
	"hist/lib/install"
	"hist/lib/instance"
	"hist/lib/policy"
	"hist/lib/record"
	"hist/lib/redact"
	"hist/lib/store"
	"hist/lib/termsafe"
	"hist/lib/words"
)

// Prompt is one prompt to store, and where it comes from.
type Prompt struct {
	Text     string
	Cwd      string // its project folder; the working directory when ""
	Instance string // names the capture file; one per calling process when ""
	TS       int64  // Unix milliseconds; now when 0
	Src      string // the agent that sent it, and its session, or ""
	Session  string
}

// Store stores p; the capture policy already said yes. The prompt is
// redacted first (unless GENTLE_PI_HISTORY_REDACT turns it off), so every
// check and the stored record see the redacted text; an empty or
// command-like prompt is not stored.
func Store(e *cli.Env, st store.Store, p Prompt) int {
	if redact.Enabled(e.Getenv(redact.EnvVar)) {
		p.Text = redact.Text(p.Text)
	}
	if !identity.Capturable(p.Text) {
		return cli.ExitOK
	}
	if p.Cwd == "" {
		wd, err := os.Getwd()
		if err != nil {
			e.Errorf("finding the working directory: %v: pass --cwd DIR", err)
			return cli.ExitFailure
		}
		p.Cwd = wd
	}
	canon, err := store.Canonical(p.Cwd)
	if err != nil {
		e.Errorf("resolving --cwd %q: %v", p.Cwd, err)
		return cli.ExitUsage
	}
	if p.Instance == "" {
		p.Instance = instance.ForParent()
	}
	p.TS = cmp.Or(p.TS, time.Now().UnixMilli())
	// The machine id names the file (docs/store-format.md); a bad one is
	// refused before (ParseArgs), except for a hook, which is never failed.
	if code := e.NeedMachine(&st); code != cli.ExitOK {
		return code
	}
	hash, _ := store.ProjectOf(canon)
	path := filepath.Join(st.ProjectDir(hash), store.CaptureFile(p.Instance, st.Machine))
	line := record.Marshal(record.Record{Text: p.Text, TS: p.TS, Src: p.Src, Session: p.Session})
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

const (
	// maxPayload bounds a hook payload (docs/integrations.md): the agents
	// send a prompt and a few paths, far less.
	maxPayload = 64 << 20
	// problemFile, in the config home, keeps the last problem (at most
	// maxProblem bytes) of a capture run by an agent: a hook prints
	// nothing and exits 0 whatever happens, and the agents do not show its
	// stderr; --status does.
	problemFile = "hook-problem"
	maxProblem  = 4 << 10
)

// Hook captures the prompt of the hook payload on stdin, which it reads
// to its end. It never fails the hook: errors go to stderr (and
// problemFile), stdout stays empty but for --status's probe. Without a
// usable HOME (homeOK false) it writes nothing; with capture off it does
// not even look at the payload.
func Hook(e *cli.Env, st store.Store, homeOK bool) {
	data, err := io.ReadAll(io.LimitReader(e.Stdin, maxPayload+1))
	tooBig := len(data) > maxPayload
	if err != nil || tooBig {
		io.Copy(io.Discard, e.Stdin) // an agent whose write is never read could fail it
	}
	var p agent.Hook
	if err == nil && !tooBig && bytes.Contains(data, []byte(`"hist_probe"`)) && json.Unmarshal(data, &p) == nil && p.Probe != "" && p.Prompt == nil {
		// --status's dry run: what a prompt sent now would become.
		state := "HOME is not set: nothing would be captured"
		if homeOK {
			state = "capture " + onOff(e.Policy().On) + ", store " + st.Root
		}
		fmt.Fprintf(e.Stdout, "%s%s\n", install.ProbeAnswer(p.Probe), state)
		return
	}
	if !homeOK {
		return
	}
	src := ""
	done := KeepProblems(e)
	defer func() { done(src) }()
	switch pol := e.Policy(); {
	case !pol.On && pol.Source == policy.InvalidPreference:
		e.Warnf("%s", pol.OffHint())
	case !pol.On:
	case err != nil:
		e.Errorf("--hook: reading the payload: %v: the prompt was not captured", err)
	case tooBig:
		e.Errorf("--hook: the payload is over %d MiB, the limit for one prompt: the prompt was not captured", maxPayload>>20)
	case json.Unmarshal(data, &p) != nil || p.Prompt == nil:
		e.Errorf("--hook: the payload is not a JSON object with a \"prompt\" string: the prompt was not captured")
	default:
		c := Prompt{Text: *p.Prompt, Cwd: p.Cwd}
		if c.Cwd == "" && len(p.WorkspaceRoots) > 0 {
			c.Cwd = p.WorkspaceRoots[0]
		}
		src, c.Session = agent.FromHook(&p)
		if c.Src = src; c.Session != "" {
			c.Instance = instance.ForSession(src, c.Session)
		}
		Store(e, st, c)
	}
}

// KeepProblems keeps what e says on stderr from now on, and done writes
// it, if anything and capture is on, to problemFile with the time and the
// agent (src).
func KeepProblems(e *cli.Env) (done func(src string)) {
	var msg bytes.Buffer
	stderr := e.Stderr
	e.Stderr = io.MultiWriter(termsafe.Writer(stderr), &msg)
	return func(src string) {
		e.Stderr = stderr
		if msg.Len() > 0 && e.Policy().On && store.EnsureDir(e.ConfigHome()) == nil {
			data := fmt.Sprintf("%d %s\n%s", time.Now().UnixMilli(), cmp.Or(src, "-"), msg.Bytes()[:min(msg.Len(), maxProblem)])
			atomicfile.WriteBytes(filepath.Join(e.ConfigHome(), problemFile), []byte(data))
		}
	}
}

// lastProblem is the last problem a hook met, as --status shows it:
// "<when> (<agent>): <the first line of what it said>"; "" for none.
func lastProblem(configHome string) string {
	data, err := atomicfile.ReadRegular(filepath.Join(configHome, problemFile))
	head, rest, _ := strings.Cut(string(data), "\n")
	ms, src, _ := strings.Cut(head, " ")
	n, perr := strconv.ParseInt(ms, 10, 64)
	if err != nil || perr != nil {
		return ""
	}
	if src = " (" + src + ")"; src == " (-)" {
		src = ""
	}
	msg, _, _ := strings.Cut(rest, "\n")
	return stamp(time.UnixMilli(n)) + src + ": " + msg
}
