package install

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"hist/lib/agent"
	"hist/lib/atomicfile"
)

// Wiring is what hist-capture --status finds of one agent's integration.
type Wiring struct {
	Agent string
	Dir   string // the agent's folder
	Found bool   // Dir exists
	// Wired says where hist is wired in ("" when it is not): "the
	// UserPromptSubmit hook in …/settings.json", "the extension …/hist.ts".
	Wired string
	// Command is the command line the agent runs, with sh -c in Dir (the
	// hooks), or the one that runs the binary the extension or plugin
	// runs; Theirs when it is one of the user's own, which is not run.
	Command string
	Theirs  bool
	// Bin is the hist-capture it runs: an absolute path, or
	// "hist-capture" when it is looked for on PATH; "" when unknown.
	Bin string
	// Problem is why a file could not be read or understood.
	Problem string
}

// Inspect finds each agent's integration (names: agent names).
func Inspect(getenv func(string) string, home string, names []string) []Wiring {
	var out []Wiring
	for _, name := range names {
		a, _ := agent.Lookup(name)
		t, ok := targets[name]
		if !ok || a.Config == nil {
			continue
		}
		w := Wiring{Agent: name, Dir: a.Config(getenv, home)}
		if fi, err := os.Stat(w.Dir); err == nil && fi.IsDir() {
			w.Found = true
			if err := w.inspect(t); err != nil {
				w.Problem = err.Error()
			}
		}
		out = append(out, w)
	}
	return out
}

func (w *Wiring) inspect(t target) error {
	var bin string
	for _, c := range t.copies {
		path := filepath.Join(w.Dir, filepath.FromSlash(c.rel))
		data, err := atomicfile.ReadRegular(path)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		dir, own := c.binDir(data)
		if !own {
			w.Wired, w.Theirs = fmt.Sprintf("%s %s, not the one hist-capture installs", c.what, path), true
			continue
		}
		bin = filepath.Join(dir, "hist-capture")
		if dir == "" {
			bin = "hist-capture"
		}
		w.Wired, w.Bin, w.Command = c.what+" "+path, bin, HookCommand(bin)
	}
	if len(t.hooks) == 0 { // each target has one settings file at most
		return nil
	}
	path := filepath.Join(w.Dir, t.hooks[0].rel)
	data, err := atomicfile.ReadRegular(path)
	if errors.Is(err, os.ErrNotExist) {
		w.Wired, w.Command = "", ""
		return nil
	}
	if err != nil {
		return err
	}
	return w.inspectHook(t.hooks[0], path, data, bin)
}

// inspectHook reads hist's hook from a settings file; bin is the binary
// that Cursor's hook script runs.
func (w *Wiring) inspectHook(h hooked, path string, data []byte, bin string) error {
	w.Wired, w.Command, w.Bin = "", "", ""
	if len(bytes.TrimSpace(data)) == 0 {
		return nil
	}
	d, err := parseDoc(data)
	if err != nil {
		return fmt.Errorf("%s %v", path, err)
	}
	_, arr, err := d.event(h.event)
	if err != nil {
		return fmt.Errorf("%s %v", path, err)
	}
	where := fmt.Sprintf("the %s hook in %s", h.event, path)
	for _, r := range refs(arr) {
		switch {
		case r.own:
			w.Wired, w.Command, w.Bin, w.Theirs = where, r.command, r.bin, false
			if h.cursor {
				w.Bin = bin
			}
			return nil
		case mentionsHist(r.command) && w.Command == "":
			w.Wired, w.Command, w.Theirs = where+", one of yours", r.command, true
		}
	}
	return nil
}

// ProbePayload is the hook payload of a dry run: hist-capture --hook
// answers it on stdout ("hist-capture probe NONCE: …") and stores nothing.
func ProbePayload(nonce string) string { return `{"hist_probe":"` + nonce + `"}` }

// ProbeAnswer is what hist-capture --hook prints for the probe nonce,
// before the state it reports.
func ProbeAnswer(nonce string) string { return "hist-capture probe " + nonce + ": " }

// Probe runs command as an agent runs a hook: sh -c, in dir, with only
// HOME and PATH=/usr/bin:/bin in its environment, the probe payload on
// stdin; it returns what hist-capture answered, or an error that says why
// no answer came (the exit status and the first line of stderr).
func Probe(command, dir, home string, timeout time.Duration) (string, error) {
	nonce := atomicfile.RandHex(8)
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", command)
	cmd.Dir = dir
	cmd.Env = []string{"HOME=" + home, "PATH=/usr/bin:/bin"}
	cmd.Stdin = strings.NewReader(ProbePayload(nonce))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = time.Second
	err := cmd.Run()
	for _, l := range strings.Split(stdout.String(), "\n") {
		if ans, ok := strings.CutPrefix(l, ProbeAnswer(nonce)); ok && err == nil {
			return ans, nil
		}
	}
	why := strings.TrimSpace(strings.SplitN(strings.TrimSpace(stderr.String()), "\n", 2)[0])
	switch {
	case ctx.Err() != nil:
		return "", fmt.Errorf("no answer within %v", timeout)
	case err != nil && why != "":
		return "", fmt.Errorf("%v: %s", err, why)
	case err != nil:
		return "", err
	case why != "":
		return "", fmt.Errorf("it exited 0 without hist-capture's answer: %s", why)
	}
	return "", errors.New("it exited 0 without hist-capture's answer")
}
