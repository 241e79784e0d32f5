package main

import (
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

	"hist/lib/cli"
	"hist/lib/envdir"
	"hist/lib/install"
	"hist/lib/lock"
	"hist/lib/policy"
	"hist/lib/store"
	"hist/lib/words"
)

// exitRefused is hist-capture's exit status when --install or --uninstall
// left a file alone (install.Refused).
const exitRefused = 4

// runInstall is --install and --uninstall: the hooks run this binary.
func runInstall(e *cli.Env, args []string, remove, dry bool) int {
	flag := map[bool]string{false: "--install", true: "--uninstall"}[remove]
	if len(args) > 1 {
		e.Errorf("%s takes one LIST of agents, such as claude,codex (got %d arguments): separate the names with commas", flag, len(args))
		return cli.ExitUsage
	}
	if !filepath.IsAbs(e.Home) {
		// The agents' default folders are under HOME.
		e.Errorf("%s: HOME is not set or not an absolute path (%q): set HOME", flag, e.Home)
		return cli.ExitUsage
	}
	list := "all"
	if len(args) == 1 {
		list = args[0]
	}
	names, err := install.ParseList(list)
	if err != nil {
		e.Errorf("%s: %v", flag, err)
		return cli.ExitUsage
	}
	exe, err := install.Executable()
	if err != nil && !remove {
		e.Errorf("%s: %v", flag, err)
		return cli.ExitUsage
	}
	o := install.Options{Getenv: e.Getenv, Home: e.Home, Exe: exe, Remove: remove, DryRun: dry, Out: e.Stdout, Errorf: e.Errorf}
	switch install.Run(o, names) {
	case install.Failed:
		return cli.ExitFailure
	case install.Refused:
		return exitRefused
	}
	return cli.ExitOK
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

// printScheduled prints the watch service, the compaction timer and the
// cron lines of hist found installed.
func printScheduled(out io.Writer, e *cli.Env) {
	dir := filepath.Join(e.Home, ".config")
	if x := envdir.Get(e.Getenv, "XDG_CONFIG_HOME", e.Home); filepath.IsAbs(x) {
		dir = x
	}
	dir = filepath.Join(dir, "systemd", "user")
	n := 0
	for unit, wants := range map[string]string{"hist-seed-watch.service": "default.target.wants", "hist-compact.timer": "timers.target.wants"} {
		data, err := os.ReadFile(filepath.Join(dir, unit))
		if err != nil {
			continue
		}
		n++
		state := "not enabled"
		if _, err := os.Stat(filepath.Join(dir, wants, unit)); err == nil {
			state = "enabled"
		}
		fmt.Fprintf(out, "%-13s%s in %s (%s)%s\n", "watch:", unit, dir, state, execState(data, e.Home))
	}
	for _, l := range cronLines() {
		n++
		fmt.Fprintf(out, "%-13s%s\n", "cron:", l)
	}
	if n == 0 {
		fmt.Fprintf(out, "%-13s%s\n", "watch:", "none installed (scripts/cron/ holds the systemd units and cron lines)")
	}
}

var execStart = regexp.MustCompile(`(?m)^ExecStart=(\S+)`)

// execState says when the binary a unit starts is missing.
func execState(unit []byte, home string) string {
	m := execStart.FindSubmatch(unit)
	if m == nil {
		return ""
	}
	bin := strings.ReplaceAll(string(m[1]), "%h", home)
	if _, err := os.Stat(bin); err != nil {
		return fmt.Sprintf(": its binary %s is missing", bin)
	}
	return ""
}

// cronLines are the lines of the user's crontab that run a hist binary.
func cronLines() []string {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "crontab", "-l").Output()
	if err != nil {
		return nil
	}
	var lines []string
	for _, l := range strings.Split(string(out), "\n") {
		if t := strings.TrimSpace(l); t != "" && t[0] != '#' && strings.Contains(t, "hist-") {
			lines = append(lines, t)
		}
	}
	return lines
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
