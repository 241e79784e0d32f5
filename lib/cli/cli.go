// Package cli holds what every hist command shares: its environment, the
// one-line error style ("hist-x: what went wrong: what to do"), the exit
// codes, and the flags every command takes (--store, the scope flags).
package cli

import (
	"cmp"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"hist/lib/agent"
	"hist/lib/history"
	"hist/lib/policy"
	"hist/lib/shellquote"
	"hist/lib/store"
	"hist/lib/termsafe"
	"hist/lib/tombstone"
	"hist/lib/words"
)

// Exit codes shared by every command. Commands document their own codes
// above these in their usage text and in README.
const (
	ExitOK        = 0
	ExitFailure   = 1 // the command could not do its job (the message says what state it left)
	ExitUsage     = 2 // bad flags or arguments, or HOME unset; nothing was read or changed
	ExitUntrusted = 3 // hidden.json cannot be trusted; nothing was shown or changed
)

// Env is a command's view of its process.
type Env struct {
	Name   string // the command's name, for messages
	Args   []string
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	Getenv func(string) string
	Lookup func(string) (string, bool)
	Home   string // $HOME; "" when unset (see HomeProblem)
	// Captures is set by hist-capture: a HIST_MACHINE that differs from
	// the recorded id is warned about, not refused (NeedMachine).
	Captures bool
}

// OSEnv is the real process's Env.
func OSEnv(name string) *Env {
	home, _ := os.UserHomeDir()
	return &Env{
		Name: name, Args: os.Args[1:],
		Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr,
		Getenv: os.Getenv, Lookup: os.LookupEnv, Home: home,
	}
}

// Say prints "name: msg" on stderr, as one line; on a terminal, control
// characters in msg show escaped (termsafe), so they cannot drive it.
func (e *Env) Say(format string, args ...any) {
	fmt.Fprintf(e.Stderr, "%s: %s\n", e.Name, termsafe.Message(e.Stderr, fmt.Sprintf(format, args...)))
}

// Errorf prints "name: msg" on stderr, as Say does.
func (e *Env) Errorf(format string, args ...any) { e.Say(format, args...) }

// Warnf prints "name: warning: msg" on stderr, as Say does.
func (e *Env) Warnf(format string, args ...any) { e.Say("warning: "+format, args...) }

// HomeProblem says why the command cannot run when HOME is unset or not
// absolute and something needs it: the store (no --store DIR in fs, no
// absolute $PI_CODING_AGENT_DIR) or the config home (no absolute
// $GENTLE_PI_CONFIG_HOME). "" when nothing does.
func (e *Env) HomeProblem(fs *flag.FlagSet) string {
	if filepath.IsAbs(e.Home) {
		return ""
	}
	needs := func(v string) bool { return !filepath.IsAbs(e.Getenv(v)) }
	f := fs.Lookup("store")
	storeNeeds := (f == nil || f.Value.String() == "") && needs("PI_CODING_AGENT_DIR")
	var fix string
	switch configNeeds := needs("GENTLE_PI_CONFIG_HOME"); {
	case storeNeeds && configNeeds:
		fix = "set HOME, or pass --store DIR and set GENTLE_PI_CONFIG_HOME"
	case storeNeeds:
		fix = "set HOME or pass --store DIR"
	case configNeeds:
		fix = "set HOME or GENTLE_PI_CONFIG_HOME"
	default:
		return ""
	}
	if e.Home == "" {
		return "HOME is not set: " + fix
	}
	return fmt.Sprintf("HOME is not an absolute path (%q): %s", e.Home, fix)
}

// Policy returns the effective capture policy.
func (e *Env) Policy() policy.State { return policy.Effective(e.Lookup, e.ConfigHome()) }

// ConfigHome is the config home.
func (e *Env) ConfigHome() string { return store.DefaultConfigHome(e.Getenv, e.Home) }

// StoreFlag registers --store on fs.
func StoreFlag(fs *flag.FlagSet) *string {
	return fs.String("store", "", "use the store at `DIR` (default $PI_CODING_AGENT_DIR/history or ~/.pi/agent/history)")
}

// Store returns the store named by --store, or the default one, with this
// machine's id, which is made only when capture is on (NeedMachine).
func (e *Env) Store(flagValue string) store.Store {
	st := e.StoreRoot(flagValue)
	st.Machine, _ = store.MachineID(e.Getenv, e.ConfigHome(), e.Policy().On)
	return st
}

// StoreRoot is Store without the machine id, which it neither reads nor makes.
func (e *Env) StoreRoot(flagValue string) store.Store {
	return store.Store{Root: cmp.Or(flagValue, store.DefaultRoot(e.Getenv, e.Home))}
}

// NeedMachine gives st, about to be written, this machine's id, or says
// why not and returns ExitUsage (HIST_MACHINE bad, or not the recorded id)
// or ExitFailure (a machine-id file that cannot be read or made). A
// capture (Captures) whose HIST_MACHINE differs writes under the recorded
// id and warns: no prompt lost, the machine's history never split.
func (e *Env) NeedMachine(st *store.Store) int {
	if st.Machine != "" {
		return ExitOK
	}
	m, err := store.MachineID(e.Getenv, e.ConfigHome(), true)
	var mm *store.MismatchError
	switch {
	case errors.As(err, &mm) && e.Captures:
		e.Warnf("%v: the prompt is stored under %s; %s", mm, mm.Recorded, renameHint(mm))
		fallthrough
	case err == nil:
		st.Machine = m
		return ExitOK
	case errors.As(err, &mm):
		e.Errorf("%v: %s", mm, renameHint(mm))
		return ExitUsage
	case errors.Is(err, store.ErrBadMachine):
		e.badMachine()
		return ExitUsage
	}
	e.Errorf("finding this machine's id: %s: nothing was written; fix or remove %s (a new id is made), or set %s", words.Describe(err), filepath.Join(e.ConfigHome(), store.MachineFile), store.MachineEnv)
	return ExitFailure
}

// RenameFlag is hist-capture's flag that renames this machine.
const RenameFlag = "rename-machine"

// renameHint says how to end a mismatch.
func renameHint(mm *store.MismatchError) string {
	return fmt.Sprintf("unset %s, or give this machine that name with 'hist-capture --%s %s'", store.MachineEnv, RenameFlag, mm.Env)
}

// LoadHidden loads hidden.json, printing the recovery message when it
// cannot be trusted.
func (e *Env) LoadHidden(s store.Store) (*tombstone.Set, bool) {
	h, err := tombstone.Load(s.Hidden())
	var u *tombstone.UntrustedError
	switch {
	case errors.As(err, &u):
		e.Errorf("%v", u)
	case err != nil:
		e.Errorf("reading %s: %v", s.Hidden(), err)
	default:
		return h, true
	}
	return nil, false
}

// badMachine says HIST_MACHINE is not a machine id.
func (e *Env) badMachine() {
	e.Errorf("%s=%q is not a machine id: use 1 to 32 letters, digits, '-' and '_', or unset it", store.MachineEnv, e.Getenv(store.MachineEnv))
}

// ScopeFlags are the --project [DIR] and --all flags.
type ScopeFlags struct {
	Project    bool
	ProjectDir string
	All        bool
	// Set by Resolve: Gone when --project names a folder that no longer
	// exists but whose prompts the store holds; Repo, the top folder of
	// the git work tree the project scope covers ("" for one folder).
	Gone bool
	Repo string
}

// Register adds --project and --all to fs. --project takes an optional
// DIR (see SplitOptional).
func (sf *ScopeFlags) Register(fs *flag.FlagSet) {
	fs.Func("project", "the project at `DIR` (default: the working directory)", func(v string) error {
		sf.Project = true
		if v != "true" {
			sf.ProjectDir = v
		}
		return nil
	})
	fs.BoolVar(&sf.All, "all", false, "every project and history-global.jsonl")
}

// Resolve returns the scope the flags name, with the canonical project
// folder for --project: in a git repository the whole repository
// (store.ProjectScope). A --project DIR that does not exist is an error
// unless the store still holds that project's folder: then the scope is
// that folder alone, and Gone is set.
func (sf *ScopeFlags) Resolve(s store.Store) (store.Scope, string, error) {
	sf.Gone, sf.Repo = false, ""
	if sf.All && sf.Project {
		return store.Scope{}, "", errors.New("--project and --all name two scopes: choose one")
	}
	if sf.All {
		return store.Scope{All: true}, "", nil
	}
	dir := sf.ProjectDir
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return store.Scope{}, "", fmt.Errorf("finding the working directory: %v", err)
		}
		dir = wd
	}
	canon, err := store.Canonical(dir)
	if err != nil {
		return store.Scope{}, "", fmt.Errorf("--project %s: %v", dir, err)
	}
	hash, also := store.ProjectOf(canon)
	fi, err := os.Stat(canon)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if !s.HasProject(hash) {
			return store.Scope{}, "", fmt.Errorf("--project %s: no such folder", dir)
		}
		sf.Gone = true
	case err != nil:
		return store.Scope{}, "", fmt.Errorf("--project %s: %s", dir, words.Describe(err))
	case !fi.IsDir():
		return store.Scope{}, "", fmt.Errorf("--project %s: not a folder", dir)
	default:
		sc, repo := s.ProjectScope(canon)
		sf.Repo = repo
		return sc, canon, nil
	}
	return store.Scope{Project: hash, Also: also}, canon, nil
}

// Scope resolves sf for the command: on an error it prints it and
// returns ok=false (exit ExitUsage); a folder that is gone is warned of.
func (e *Env) Scope(sf *ScopeFlags, s store.Store) (sc store.Scope, dir string, ok bool) {
	sc, dir, err := sf.Resolve(s)
	if err != nil {
		e.Errorf("%v", err)
		return sc, dir, false
	}
	if sf.Gone {
		e.Warnf("the folder %s no longer exists: using the prompts the store still holds for it", dir)
	}
	return sc, dir, true
}

// SplitOptional rewrites "--name DIR" into "--name=DIR" when the argument
// after it is not a flag, and a lone "--name" into "--name=true", so that
// --project takes an optional DIR.
func SplitOptional(args []string, name string) []string {
	out := make([]string, 0, len(args))
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "--":
			return append(out, args[i:]...)
		case a != "--"+name && a != "-"+name:
			out = append(out, a)
		case i+1 < len(args) && !strings.HasPrefix(args[i+1], "-"):
			out = append(out, "--"+name+"="+args[i+1])
			i++
		default:
			out = append(out, "--"+name+"=true")
		}
	}
	return out
}

// Flags is a new flag set for the command's own flags, for ParseArgs.
func (e *Env) Flags() *flag.FlagSet { return flag.NewFlagSet(e.Name, flag.ContinueOnError) }

// ParseArgs parses args with fs, flags and arguments in any order (everything
// after "--" is an argument), and returns the arguments. When the command
// must stop here it returns stop=true and the exit code: ExitOK after
// -h/--help (the usage printed on stdout), ExitUsage after a bad flag (one
// line on stderr naming the flag as typed).
func (e *Env) ParseArgs(fs *flag.FlagSet, usage string, args []string) (pos []string, code int, stop bool) {
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				fmt.Fprint(e.Stdout, usage)
				return nil, ExitOK, true
			}
			e.Errorf("%s", flagError(fs, args[:len(args)-len(fs.Args())], err, e.Name))
			return nil, ExitUsage, true
		}
		rest := fs.Args()
		if len(rest) == 0 {
			break
		}
		if used := len(args) - len(rest); used > 0 && args[used-1] == "--" {
			pos = append(pos, rest...)
			break
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
	return e.checkHome(fs, pos)
}

// checkHome ends ParseArgs: it stops with ExitUsage, before anything is
// read or written, when HOME is needed and unusable (HomeProblem),
// --store names a folder that does not exist (makesStore), or
// HIST_MACHINE is not this machine's id (a command that Captures warns
// instead). A hook (--hook set) goes on: it must never fail, and checks
// HomeProblem itself.
func (e *Env) checkHome(fs *flag.FlagSet, pos []string) ([]string, int, bool) {
	if h := fs.Lookup("hook"); h != nil && h.Value.String() == "true" {
		return pos, ExitOK, false
	}
	if p := e.HomeProblem(fs); p != "" {
		e.Errorf("%s", p)
		return nil, ExitUsage, true
	}
	if f := fs.Lookup("store"); f != nil && f.Value.String() != "" && !makesStore[e.Name] {
		// A store named by hand that is not there is a typo more often
		// than a new store: reading it would show nothing, silently.
		dir := f.Value.String()
		if fi, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
			e.Errorf("--store %s: no such folder: check the path (to start a new store there, create it first: mkdir -m 700 %s)", dir, shellquote.Quote(dir, shellquote.Any))
			return nil, ExitUsage, true
		} else if err == nil && !fi.IsDir() {
			e.Errorf("--store %s: not a folder: give the store's folder", dir)
			return nil, ExitUsage, true
		}
	}
	v := e.Getenv(store.MachineEnv)
	if v != "" && !store.ValidMachine(v) {
		e.badMachine()
		return nil, ExitUsage, true
	}
	if v != "" && !e.Captures {
		var mm *store.MismatchError
		if _, err := store.MachineID(e.Getenv, e.ConfigHome(), false); errors.As(err, &mm) {
			e.Errorf("%v: %s", mm, renameHint(mm))
			return nil, ExitUsage, true
		}
	}
	return pos, ExitOK, false
}

// makesStore are the commands that make the store at a --store DIR that
// does not exist yet; the others refuse such a DIR.
var makesStore = map[string]bool{"hist-capture": true, "hist-seed": true}

// flagError words err, which fs.Parse returned after reading used: the
// flag as the user typed it and what it expects, instead of the flag
// package's wording ("flag provided but not defined: -x").
func flagError(fs *flag.FlagSet, used []string, err error, name string) string {
	if bad, ok := strings.CutPrefix(err.Error(), "bad flag syntax: "); ok {
		// "---x" or "-=x", which fs.Parse leaves unread.
		return fmt.Sprintf("unknown flag %s: see '%s --help'", bad, name)
	}
	// The failing flag is the last one fs.Parse started on: walk used as
	// it does (a flag that is not a bool and has no "=" takes the next
	// argument).
	typed, value, hasValue := "", "", false
	for i := 0; i < len(used); i++ {
		typed, value, hasValue = used[i], "", false
		if t, v, ok := strings.Cut(typed, "="); ok && strings.TrimLeft(t, "-") != "" {
			typed, value, hasValue = t, v, true
		}
		if f := fs.Lookup(strings.TrimLeft(typed, "-")); f != nil && !hasValue && !isBool(f) && i+1 < len(used) {
			i++
			value, hasValue = used[i], true
		}
	}
	f := fs.Lookup(strings.TrimLeft(typed, "-"))
	if f == nil {
		return fmt.Sprintf("unknown flag %s: see '%s --help'", typed, name)
	}
	want := expects(f)
	if !hasValue {
		return fmt.Sprintf("%s needs %s: see '%s --help'", typed, want, name)
	}
	if want == "a value" {
		// A value of the command's own type says what it expects.
		if err := f.Value.Set(value); err != nil {
			return fmt.Sprintf("%s: %v", typed, err)
		}
	}
	return fmt.Sprintf("%s takes %s, got %q", typed, want, value)
}

func isBool(f *flag.Flag) bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// expects says what kind of value f takes.
func expects(f *flag.Flag) string {
	g, ok := f.Value.(flag.Getter)
	if !ok {
		return "a value"
	}
	switch g.Get().(type) {
	case bool:
		return "true or false"
	case int, int64, uint, uint64:
		return "a whole number"
	case float64:
		return "a number"
	case time.Duration:
		return "a duration such as 10s or 2m"
	}
	return "a value"
}

// FilterFlags are the flags that select prompts (history.Filter):
// --src, --since, --until, --session and --machine.
type FilterFlags struct{ src, since, until, session, machine string }

// Register adds the filter flags to fs.
func (ff *FilterFlags) Register(fs *flag.FlagSet) {
	for name, p := range map[string]*string{"src": &ff.src, "since": &ff.since, "until": &ff.until, "session": &ff.session, "machine": &ff.machine} {
		fs.StringVar(p, name, "", "")
	}
}

// Words are the filters other than --src as given, for a header:
// "since 7d", "session ID".
func (ff *FilterFlags) Words() []string {
	var out []string
	for _, w := range [][2]string{{"since", ff.since}, {"until", ff.until}, {"session", ff.session}, {"machine", ff.machine}} {
		if w[1] != "" {
			out = append(out, w[0]+" "+w[1])
		}
	}
	return out
}

// FilterUsage describes the filter flags, for the commands' usage texts.
const FilterUsage = `Filters (each narrows the prompts; a prompt shows at its newest copy
that they all select):
    --src LIST       Copies from these agents (comma-separated: pi, claude,
                     codex, cursor, opencode). A copy that names no agent
                     counts as pi's.
    --since WHEN     Copies at or after WHEN: a date (2026-11-30), a date and
                     time (2026-11-30T14:00), or a time ago (90m, 3h, 7d, 2w).
    --until WHEN     Copies before WHEN (same forms).
    --session ID     Copies from this agent session.
    --machine NAME   Copies in the store files of this machine (the @NAME in
                     their names; files from before machine ids match none).
`

// Filter returns the filter ff names at e's time (Now), or prints what
// is wrong and returns ok=false (exit ExitUsage).
func (e *Env) Filter(ff *FilterFlags) (f history.Filter, ok bool) {
	now, err := e.Now()
	if err == nil {
		f, err = ff.resolve(now)
	}
	if err != nil {
		e.Errorf("%v", err)
	}
	return f, err == nil
}

func (ff *FilterFlags) resolve(now time.Time) (history.Filter, error) {
	f := history.Filter{Session: ff.session, Machine: ff.machine}
	for _, s := range strings.Split(ff.src, ",") {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		if !slices.Contains(agent.Names(), s) {
			return f, fmt.Errorf("--src %s: %q is not an agent: use %s", ff.src, s, strings.Join(agent.Names(), ", "))
		}
		f.Src = append(f.Src, s)
	}
	if ff.machine != "" && !store.ValidMachine(ff.machine) {
		return f, fmt.Errorf("--machine %q: not a machine id (1 to 32 letters, digits, '-' and '_')", ff.machine)
	}
	for _, w := range []struct {
		flag, v string
		to      *int64
	}{{"since", ff.since, &f.Since}, {"until", ff.until, &f.Until}} {
		if w.v == "" {
			continue
		}
		t, err := When(w.v, now)
		if err != nil {
			return f, fmt.Errorf("--%s %s: %v", w.flag, w.v, err)
		}
		*w.to = t.UnixMilli()
	}
	if f.Since != 0 && f.Until != 0 && f.Since >= f.Until {
		return f, fmt.Errorf("--since %s is not before --until %s: no prompt can match", ff.since, ff.until)
	}
	return f, nil
}

// When reads a time given on the command line, at now: a date (local
// midnight), a local date and time to the minute or second, RFC 3339, or
// a time ago: a whole number of minutes, hours, days or weeks (90m, 3h,
// 7d, 2w).
func When(s string, now time.Time) (time.Time, error) {
	if t, ok := absolute(s); ok {
		return t, nil
	}
	units := map[byte]time.Duration{'m': time.Minute, 'h': time.Hour, 'd': 24 * time.Hour, 'w': 7 * 24 * time.Hour}
	if n, err := strconv.Atoi(s[:max(0, len(s)-1)]); err == nil && n >= 0 && units[s[len(s)-1]] != 0 {
		return now.Add(-time.Duration(n) * units[s[len(s)-1]]), nil
	}
	return time.Time{}, errors.New("not a date (2026-11-30, 2026-11-30T14:00) or a time ago (90m, 3h, 7d, 2w)")
}

// absolute reads a date, a local date and time, or RFC 3339.
func absolute(s string) (time.Time, bool) {
	for _, layout := range []string{"2006-01-02", "2006-01-02T15:04", "2006-01-02T15:04:05"} {
		if t, err := time.ParseInLocation(layout, s, time.Local); err == nil {
			return t, true
		}
	}
	t, err := time.Parse(time.RFC3339, s)
	return t, err == nil
}

// NowEnv names the variable that fixes "now" for the commands that read
// it (time filters, ages, frecency, hist-stats' charts), for tests and
// reproducible reports: a date, a date and time, or RFC 3339.
const NowEnv = "HIST_NOW"

// Now is the time now, or $HIST_NOW.
func (e *Env) Now() (time.Time, error) {
	v := e.Getenv(NowEnv)
	if v == "" {
		return time.Now(), nil
	}
	t, ok := absolute(v)
	if !ok {
		return t, fmt.Errorf("%s=%s: not a time: use 2026-11-30T14:00 or RFC 3339, or unset it", NowEnv, v)
	}
	return t, nil
}
