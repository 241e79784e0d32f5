package install

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"hist/lib/agent"
	"hist/lib/atomicfile"
	"hist/lib/envdir"
	"hist/lib/transcript"
)

// probeTimeout is how long a dry run may take: Claude Code's and Codex's
// hook timeout.
const probeTimeout = 10 * time.Second

// wiring is what hist-capture --status finds of one agent's integration.
type wiring struct {
	wired   string // where hist is wired in: "the UserPromptSubmit hook in …/settings.json"; "" when it is not
	command string // the command line the agent runs (sh -c in its folder), or one that runs the binary an extension runs
	theirs  bool   // the command is one of the user's own: not run
	bin     string // the hist-capture it runs: an absolute path, or "hist-capture" looked for on PATH; "" unknown
}

// Status prints, for each agent hist wires, whether it is found and
// wired in, the command its hook runs and whether that binary is there, a
// dry run of it (Probe), and the last prompt captured from it (last). It
// returns the agents whose hook is wired and could not run.
func Status(out io.Writer, getenv func(string) string, home string, last map[string]string) (failed []string) {
	for _, a := range agent.List {
		if t, ok := targets[a.Name]; ok && a.Config != nil && !t.status(out, a.Name, a.Config(getenv, home), home, last) {
			failed = append(failed, a.Name)
		}
	}
	return failed
}

func line(out io.Writer, label, format string, args ...any) {
	fmt.Fprintf(out, "%-13s%s\n", label, fmt.Sprintf(format, args...))
}

// status prints the lines of the agent name, whose folder is dir; false
// when its hook is wired and could not run.
func (t target) status(out io.Writer, name, dir, home string, last map[string]string) bool {
	w, err := inspect(t, dir)
	if fi, serr := os.Stat(dir); serr != nil || !fi.IsDir() {
		line(out, name+":", "not found (no %s)", dir)
		return true
	} else if err != nil {
		line(out, name+":", "unknown: %s", err)
		return true
	} else if w.wired == "" {
		line(out, name+":", "not wired: 'hist-capture --install %s' wires it", name)
		return true
	}
	line(out, name+":", "wired: %s", w.wired)
	if w.command != "" {
		line(out, "  runs:", "%s", w.command)
	}
	if w.bin != "" {
		line(out, "  binary:", "%s", binaryState(expandHome(w.bin, home)))
	}
	ok := true
	if w.theirs {
		line(out, "  dry run:", "not run: the command is yours, not one hist-capture writes")
	} else if w.command != "" {
		ans, err := Probe(w.command, dir, home, probeTimeout)
		if ok = err == nil; ok {
			line(out, "  dry run:", "ok (sh -c, HOME and PATH=/usr/bin:/bin): %s", ans)
		} else {
			line(out, "  dry run:", "FAILED: %v", err)
		}
	}
	line(out, "  last:", "%s", cmp.Or(last[name], "none captured on this machine yet"))
	return ok
}

// inspect finds hist in an agent's folder dir: a copy, then the hook of
// its settings file (Cursor's needs both: its hook runs the script).
func inspect(t target, dir string) (w wiring, err error) {
	for _, c := range t.copies {
		path := filepath.Join(dir, filepath.FromSlash(c.rel))
		data, err := atomicfile.ReadRegular(path)
		if errors.Is(err, os.ErrNotExist) {
			continue
		} else if err != nil {
			return w, err
		}
		bindir, own := c.binDir(data)
		if !own {
			w = wiring{wired: fmt.Sprintf("%s %s, not the one hist-capture installs", c.what, path), theirs: true}
			continue
		}
		w.bin = filepath.Join(bindir, "hist-capture") // "" for PATH: "hist-capture"
		w.wired, w.command = c.what+" "+path, hookCommand(w.bin)
	}
	if len(t.hooks) == 0 { // each target has one settings file at most
		return w, nil
	}
	h, bin := t.hooks[0], w.bin
	path := filepath.Join(dir, h.rel)
	data, err := atomicfile.ReadRegular(path)
	if errors.Is(err, os.ErrNotExist) || err == nil && len(bytes.TrimSpace(data)) == 0 {
		return wiring{}, nil
	} else if err != nil {
		return w, err
	}
	d, err := parseHooks(data, h.event)
	if err != nil {
		return w, fmt.Errorf("%s %v", path, err)
	}
	where := fmt.Sprintf("the %s hook in %s", h.event, path)
	w = wiring{}
	if own := d.own(); own != nil {
		w = wiring{wired: where, command: own.command, bin: own.bin}
		if h.cursor {
			w.bin = bin
		}
	} else if mine := d.theirs(); len(mine) > 0 {
		w = wiring{wired: where + ", one of yours", command: mine[0], theirs: true}
	}
	return w, nil
}

// Wired reports whether hist captures agent name's prompts live: its
// prompt hook is in the agent's settings, or, for an agent without one,
// its extension or plugin is installed. hist-seed leaves the prompts typed
// a moment ago to a later run for such an agent (their live copy may be
// on its way), and imports the others' at once. A hook or copy of the
// user's own that runs hist-capture counts: it captures too.
func Wired(name string, env transcript.Env, home string) bool {
	a, _ := agent.Lookup(name)
	t, ok := targets[name]
	if !ok || a.Config == nil {
		return false
	}
	dir := a.Config(env, home)
	if _, err := os.Stat(dir); err != nil {
		return false
	}
	w, err := inspect(t, dir)
	return err == nil && w.wired != ""
}

// binaryState says whether the file a hook runs is there and runs.
func binaryState(bin string) string {
	if !filepath.IsAbs(bin) {
		return bin + " (looked for on the agent's PATH)"
	}
	fi, err := os.Stat(bin)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return bin + " (missing)"
	case err != nil:
		return fmt.Sprintf("%s (%v)", bin, err)
	case !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0:
		return bin + " (not an executable file)"
	}
	return bin + " (exists, executable)"
}

// ProbeAnswer starts what hist-capture --hook prints for a dry run's
// payload {"hist_probe": nonce}, which stores nothing.
func ProbeAnswer(nonce string) string { return "hist-capture probe " + nonce + ": " }

// Probe runs command as an agent runs a hook: sh -c in dir, with only
// HOME and PATH=/usr/bin:/bin, a probe payload on stdin. It returns
// hist-capture's answer, or why none came (the exit status and the first
// line of stderr).
func Probe(command, dir, home string, timeout time.Duration) (string, error) {
	nonce := atomicfile.RandHex(8)
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", command)
	cmd.Dir, cmd.Env, cmd.WaitDelay = dir, []string{"HOME=" + home, "PATH=/usr/bin:/bin"}, time.Second
	cmd.Stdin = strings.NewReader(`{"hist_probe":"` + nonce + `"}`)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	for _, l := range strings.Split(stdout.String(), "\n") {
		if ans, ok := strings.CutPrefix(l, ProbeAnswer(nonce)); ok && err == nil {
			return ans, nil
		}
	}
	why, _, _ := strings.Cut(strings.TrimSpace(stderr.String()), "\n")
	switch why = strings.TrimSpace(why); {
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

var execStart = regexp.MustCompile(`(?m)^ExecStart=(\S+)`)

// Scheduled prints the watch service, the compaction timer and the cron
// lines of hist found installed (scripts/cron/).
func Scheduled(out io.Writer, getenv func(string) string, home string) {
	dir := filepath.Join(home, ".config")
	if x := envdir.Get(getenv, "XDG_CONFIG_HOME", home); filepath.IsAbs(x) {
		dir = x
	}
	dir = filepath.Join(dir, "systemd", "user")
	n := 0
	for _, u := range [][2]string{{"hist-seed-watch.service", "default.target.wants"}, {"hist-compact.timer", "timers.target.wants"}} {
		unit, wants := u[0], u[1]
		data, err := os.ReadFile(filepath.Join(dir, unit))
		if err != nil {
			continue
		}
		n++
		state := "not enabled"
		if _, err := os.Stat(filepath.Join(dir, wants, unit)); err == nil {
			state = "enabled"
		}
		missing := ""
		if m := execStart.FindSubmatch(data); m != nil { // the binary it starts
			bin := strings.ReplaceAll(string(m[1]), "%h", home)
			if _, err := os.Stat(bin); err != nil {
				missing = fmt.Sprintf(": its binary %s is missing", bin)
			}
		}
		line(out, "watch:", "%s in %s (%s)%s", unit, dir, state, missing)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	crontab, _ := exec.CommandContext(ctx, "crontab", "-l").Output() // none: no lines
	for _, l := range strings.Split(string(crontab), "\n") {
		if t := strings.TrimSpace(l); t != "" && t[0] != '#' && strings.Contains(t, "hist-") {
			n++
			line(out, "cron:", "%s", t)
		}
	}
	if n == 0 {
		line(out, "watch:", "none installed (scripts/cron/ holds the systemd units and cron lines)")
	}
}
