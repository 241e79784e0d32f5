package main

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"hist/lib/cli"
	"hist/lib/install"
	"hist/lib/policy"
	"hist/lib/record"
	"hist/lib/redact"
	"hist/lib/store"
	"hist/lib/termsafe"
)

// probeTimeout is how long a dry run may take: Claude Code's and Codex's
// hook timeout.
const probeTimeout = 10 * time.Second

// printStatus is --status: the capture settings, then each agent's
// wiring checked by a dry run, the last hook problem and the scheduled
// imports. ExitFailure when a wired agent's hook could not run.
func printStatus(e *cli.Env, st store.Store) int {
	out := termsafe.Writer(e.Stdout) // paths escaped on a terminal
	printSettings(e, out, st)
	st.Machine, _ = store.MachineID(e.Getenv, e.ConfigHome(), false)
	wirings := install.Inspect(e.Getenv, e.Home, agentNames())
	var found []string
	for _, w := range wirings {
		if w.Found && w.Wired != "" {
			found = append(found, w.Agent)
		}
	}
	last := lastCaptures(st, found)
	var failed []string
	for _, w := range wirings {
		if !printWiring(out, w, e.Home, last[w.Agent]) {
			failed = append(failed, w.Agent)
		}
	}
	if when, src, msg, ok := lastProblem(e.ConfigHome()); ok {
		from := ""
		if src != "" {
			from = " (" + src + ")"
		}
		fmt.Fprintf(out, "%-13s%s%s: %s\n", "hook error:", stamp(when), from, msg)
	}
	printScheduled(out, e)
	if len(failed) > 0 {
		fmt.Fprintf(out, "problem:     the hook of %s does not run: its prompts are not captured; run the installed 'hist-capture --install %s' again\n",
			strings.Join(failed, ", "), strings.Join(failed, ","))
		return cli.ExitFailure
	}
	return cli.ExitOK
}

func printSettings(e *cli.Env, out io.Writer, st store.Store) {
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
	fmt.Fprintf(out, "capture:     %s\ndecided by:  %s\npreference:  %s (%s)\n%s: %s\nstore:       %s\n",
		state, pol.Describe(), pref, pol.PrefPath, policy.EnvVar, env, st.Root)
	fmt.Fprintf(out, "redaction:   %s\n", redactionStatus(e))
	fmt.Fprintf(out, "machine:     %s\n", machineStatus(e))
}

// printWiring prints one agent's lines; false when its hook is wired and
// could not run.
func printWiring(out io.Writer, w install.Wiring, home string, last int64) bool {
	line := func(label, format string, args ...any) {
		fmt.Fprintf(out, "%-13s%s\n", label, fmt.Sprintf(format, args...))
	}
	switch {
	case !w.Found:
		line(w.Agent+":", "not found (no %s)", w.Dir)
		return true
	case w.Problem != "":
		line(w.Agent+":", "unknown: %s", w.Problem)
		return true
	case w.Wired == "":
		line(w.Agent+":", "not wired: 'hist-capture --install %s' wires it", w.Agent)
		return true
	}
	line(w.Agent+":", "wired: %s", w.Wired)
	ok := true
	if w.Command != "" {
		line("  runs:", "%s", w.Command)
	}
	if w.Bin != "" {
		line("  binary:", "%s", binaryState(install.ExpandHome(w.Bin, home)))
	}
	switch {
	case w.Theirs:
		line("  dry run:", "not run: the command is yours, not one hist-capture writes")
	case w.Command != "":
		ans, err := install.Probe(w.Command, w.Dir, home, probeTimeout)
		if err != nil {
			line("  dry run:", "FAILED: %v", err)
			ok = false
		} else {
			line("  dry run:", "ok (sh -c, HOME and PATH=/usr/bin:/bin): %s", ans)
		}
	}
	if last > 0 {
		line("  last:", "%s", stamp(time.UnixMilli(last)))
	} else {
		line("  last:", "none captured on this machine yet")
	}
	return ok
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

// stamp is a time and how long ago it was.
func stamp(t time.Time) string {
	d := time.Since(t).Round(time.Second)
	var ago string
	switch {
	case d < 0:
		ago = "in the future"
	case d < time.Minute:
		ago = fmt.Sprintf("%ds ago", int(d.Seconds()))
	case d < time.Hour:
		ago = fmt.Sprintf("%dm ago", int(d.Minutes()))
	case d < 48*time.Hour:
		ago = fmt.Sprintf("%dh ago", int(d.Hours()))
	default:
		ago = fmt.Sprintf("%dd ago", int(d.Hours()/24))
	}
	return t.Format("2006-01-02 15:04:05") + " (" + ago + ")"
}

// lastCaptures is the time of the newest prompt each agent of agents
// captured on this machine: its capture files, newest first, each read
// until no older file can hold a newer prompt.
func lastCaptures(st store.Store, agents []string) map[string]int64 {
	last := map[string]int64{}
	if len(agents) == 0 || st.Machine == "" {
		return last
	}
	files, _ := st.Files(store.Scope{All: true})
	type capture struct {
		path  string
		mtime int64
	}
	var caps []capture
	for _, f := range files {
		if fi, err := os.Stat(f.Path); err == nil && f.Kind == store.Capture && store.MachineOf(filepath.Base(f.Path)) == st.Machine {
			caps = append(caps, capture{f.Path, fi.ModTime().UnixMilli()})
		}
	}
	slices.SortFunc(caps, func(a, b capture) int { return cmp.Compare(b.mtime, a.mtime) })
	for i, c := range caps {
		data, err := os.ReadFile(c.path)
		if err != nil {
			continue
		}
		for _, l := range bytes.Split(data, []byte("\n")) {
			if r, err := record.Parse(l); err == nil && r.Src != "" && r.TS > last[r.Src] {
				last[r.Src] = r.TS
			}
		}
		if i+1 < len(caps) && allAfter(last, agents, caps[i+1].mtime) {
			break
		}
	}
	return last
}

func allAfter(last map[string]int64, agents []string, ms int64) bool {
	for _, a := range agents {
		if last[a] < ms {
			return false
		}
	}
	return true
}

// machineStatus is this machine's id and where it comes from; --status
// only reads it (the first capture or rewrite makes it).
func machineStatus(e *cli.Env) string {
	path := filepath.Join(e.ConfigHome(), store.MachineFile)
	m, err := store.MachineID(e.Getenv, e.ConfigHome(), false)
	var mm *store.MismatchError
	var s string
	switch {
	case errors.As(err, &mm):
		s = fmt.Sprintf("%s (%s); %s=%s differs from it: the other binaries refuse to run, captures store under %s; run 'hist-capture --%s %s', or unset %[3]s",
			m, path, store.MachineEnv, mm.Env, m, cli.RenameFlag, mm.Env)
	case err == nil && e.Getenv(store.MachineEnv) != "":
		if _, ferr := os.Stat(path); ferr != nil {
			s = fmt.Sprintf("%s (%s; the first capture or rewrite records it in %s)", m, store.MachineEnv, path)
		} else {
			s = fmt.Sprintf("%s (%s, %s)", m, path, store.MachineEnv)
		}
	case err == nil:
		s = fmt.Sprintf("%s (%s)", m, path)
	case errors.Is(err, os.ErrNotExist):
		s = fmt.Sprintf("none yet (the first capture or rewrite makes it in %s)", path)
	default:
		s = fmt.Sprintf("unusable (%v)", err)
	}
	if from, to, _ := store.PendingRename(e.ConfigHome()); from != "" {
		s += fmt.Sprintf("; the rename from %s to %s did not finish: run 'hist-capture --%s %s'", from, to, cli.RenameFlag, to)
	}
	return s
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
