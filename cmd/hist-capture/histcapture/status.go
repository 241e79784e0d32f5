package histcapture

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"hist/lib/atomicfile"
	"hist/lib/cli"
	"hist/lib/install"
	"hist/lib/policy"
	"hist/lib/record"
	"hist/lib/redact"
	"hist/lib/store"
	"hist/lib/termsafe"
)

// Status is hist-capture --status: the capture settings, each agent's
// wiring checked by a dry run (install.Status), the last hook problem and
// the scheduled imports; ExitFailure when a wired agent's hook could not
// run.
func Status(e *cli.Env, st store.Store) int {
	out := termsafe.Writer(e.Stdout) // paths escaped on a terminal
	pol := e.Policy()
	pref := cmp.Or(pol.Pref, "none saved")
	if pol.PrefErr != nil {
		pref = fmt.Sprintf("invalid or unreadable (%v)", pol.PrefErr)
	}
	env := "unset"
	if v, ok := e.Lookup(policy.EnvVar); ok {
		env = strconv.Quote(v)
		if _, forced := policy.ParseEnv(v); !forced {
			env += " (does not force a value)"
		}
	}
	rv, set := e.Lookup(redact.EnvVar)
	rq := "unset"
	if set {
		rq = strconv.Quote(rv)
	}
	fmt.Fprintf(out, "capture:     %s\ndecided by:  %s\npreference:  %s (%s)\n%s: %s\nstore:       %s\nredaction:   %s (%s=%s)\nmachine:     %s\n",
		onOff(pol.On), pol.Describe(), pref, pol.PrefPath, policy.EnvVar, env, st.Root, onOff(redact.Enabled(rv)), redact.EnvVar, rq, machineStatus(e))
	st.Machine, _ = store.MachineID(e.Getenv, e.ConfigHome(), false)
	failed := install.Status(out, e.Getenv, e.Home, lastCaptures(st))
	if p := lastProblem(e.ConfigHome()); p != "" {
		fmt.Fprintf(out, "%-13s%s\n", "hook error:", p)
	}
	install.Scheduled(out, e.Getenv, e.Home)
	if len(failed) > 0 {
		fmt.Fprintf(out, "problem:     the hook of %s does not run: its prompts are not captured; run the installed 'hist-capture --install %s' again\n",
			strings.Join(failed, ", "), strings.Join(failed, ","))
		return cli.ExitFailure
	}
	return cli.ExitOK
}

func onOff(on bool) string { return map[bool]string{false: "off", true: "on"}[on] }

// stamp is a time and how long ago it was.
func stamp(t time.Time) string {
	d, ago := time.Since(t).Round(time.Second), "in the future"
	for _, u := range []struct {
		below, unit time.Duration
		s           string
	}{{time.Minute, time.Second, "s"}, {time.Hour, time.Minute, "m"}, {48 * time.Hour, time.Hour, "h"}, {math.MaxInt64, 24 * time.Hour, "d"}} {
		if d >= 0 && d < u.below {
			ago = fmt.Sprintf("%d%s ago", d/u.unit, u.s)
			break
		}
	}
	return t.Format("2006-01-02 15:04:05") + " (" + ago + ")"
}

// lastCaptures is the time of the newest prompt each agent captured on
// this machine, from its capture files (stamp).
func lastCaptures(st store.Store) map[string]string {
	last := map[string]int64{}
	files, _ := st.Files(store.Scope{All: true})
	for _, f := range files {
		if f.Kind != store.Capture || st.Machine == "" || store.MachineOf(filepath.Base(f.Path)) != st.Machine {
			continue
		}
		data, _ := atomicfile.ReadRegular(f.Path)
		for _, l := range bytes.Split(data, []byte("\n")) {
			if r, err := record.Parse(l); err == nil && r.Src != "" && r.TS > last[r.Src] {
				last[r.Src] = r.TS
			}
		}
	}
	stamps := map[string]string{}
	for src, ms := range last {
		stamps[src] = stamp(time.UnixMilli(ms))
	}
	return stamps
}

// machineStatus is this machine's id and where it comes from, read only.
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
