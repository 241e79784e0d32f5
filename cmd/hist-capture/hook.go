package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"hist/lib/agent"
	"hist/lib/atomicfile"
	"hist/lib/cli"
	"hist/lib/install"
	"hist/lib/instance"
	"hist/lib/policy"
	"hist/lib/store"
	"hist/lib/termsafe"
)

// maxPayload bounds a hook payload (docs/integrations.md): the agents send
// a prompt and a few paths, far less.
const maxPayload = 64 << 20

// problemFile, in the config home, keeps the last problem a capture run by
// an agent met: a hook exits 0 and prints nothing on stdout whatever
// happens, the agents do not show its stderr, and pi's extension and
// opencode's plugin show only failures; --status reports it.
const problemFile = "hook-problem"

// maxProblem bounds what problemFile keeps.
const maxProblem = 4 << 10

// runHook captures the prompt of one hook payload. It never fails the
// hook: errors go to stderr (and problemFile), the exit code is always 0,
// stdout stays empty (but for --status's probe). Without a usable HOME
// (homeOK false: ParseArgs left that to it) it reads the payload and
// stops, silently, writing nothing.
func runHook(e *cli.Env, st store.Store, homeOK bool) {
	data, tooBig, err := readPayload(e.Stdin)
	var p agent.Hook
	if err == nil && !tooBig && bytes.Contains(data, []byte(`"hist_probe"`)) && json.Unmarshal(data, &p) == nil && p.Probe != "" && p.Prompt == nil {
		answerProbe(e, st, p.Probe, homeOK)
		return
	}
	// With capture off (or no HOME) the payload is not even looked at.
	if !homeOK {
		return
	}
	src := ""
	done := keepProblems(e)
	defer func() { done(src) }()
	pol := e.Policy()
	if !pol.On {
		if pol.Source == policy.InvalidPreference {
			e.Warnf("%s", pol.OffHint())
		}
		return
	}
	switch {
	case err != nil:
		e.Errorf("--hook: reading the payload: %v: the prompt was not captured", err)
		return
	case tooBig:
		e.Errorf("--hook: the payload is over %d MiB, the limit for one prompt: the prompt was not captured", maxPayload>>20)
		return
	}
	if err := json.Unmarshal(data, &p); err != nil || p.Prompt == nil {
		e.Errorf("--hook: the payload is not a JSON object with a \"prompt\" string: the prompt was not captured")
		return
	}
	cwd := p.Cwd
	if cwd == "" && len(p.WorkspaceRoots) > 0 {
		cwd = p.WorkspaceRoots[0]
	}
	var session string
	src, session = agent.FromHook(&p)
	inst := ""
	if session != "" {
		inst = instance.ForSession(src, session)
	}
	capture(e, st, *p.Prompt, cwd, inst, 0, src, session)
}

// readPayload reads stdin to its end, keeping at most maxPayload bytes: an
// agent whose write is never read could fail it.
func readPayload(r io.Reader) (data []byte, tooBig bool, err error) {
	data, err = io.ReadAll(io.LimitReader(r, maxPayload+1))
	if err != nil || len(data) > maxPayload {
		io.Copy(io.Discard, r)
		return nil, err == nil, err
	}
	return data, false, nil
}

// answerProbe answers --status's dry run on stdout, writing nothing: what
// a prompt sent now would become.
func answerProbe(e *cli.Env, st store.Store, nonce string, homeOK bool) {
	state := "HOME is not set: nothing would be captured"
	if homeOK {
		pol := e.Policy()
		state = "capture off"
		if pol.On {
			state = "capture on"
		}
		state += ", store " + st.Root
	}
	fmt.Fprintf(e.Stdout, "%s%s\n", install.ProbeAnswer(nonce), state)
}

// keepProblems keeps what e says on stderr from now on, and done writes
// it, if anything, to problemFile with the time and the agent (src): a
// capture run by an agent says nothing the user sees.
func keepProblems(e *cli.Env) (done func(src string)) {
	var msg bytes.Buffer
	stderr := e.Stderr
	e.Stderr = io.MultiWriter(termsafe.Writer(stderr), &msg)
	return func(src string) {
		e.Stderr = stderr
		if msg.Len() == 0 || !e.Policy().On { // capture off: nothing is written
			return
		}
		if src == "" {
			src = "-"
		}
		data := fmt.Sprintf("%d %s\n%s", time.Now().UnixMilli(), src, msg.Bytes()[:min(msg.Len(), maxProblem)])
		if err := store.EnsureDir(e.ConfigHome()); err == nil {
			atomicfile.WriteBytes(filepath.Join(e.ConfigHome(), problemFile), []byte(data))
		}
	}
}

// lastProblem reads problemFile: when, which agent ("" unknown), and the
// first line of what the hook said; ok false when there is none.
func lastProblem(configHome string) (when time.Time, src, msg string, ok bool) {
	data, err := atomicfile.ReadRegular(filepath.Join(configHome, problemFile))
	if err != nil {
		return time.Time{}, "", "", false
	}
	head, rest, _ := strings.Cut(string(data), "\n")
	ms, src, _ := strings.Cut(head, " ")
	n, err := strconv.ParseInt(ms, 10, 64)
	if err != nil {
		return time.Time{}, "", "", false
	}
	if src == "-" {
		src = ""
	}
	msg, _, _ = strings.Cut(rest, "\n")
	return time.UnixMilli(n), src, msg, true
}
