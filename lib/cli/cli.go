// Package cli holds what every hist command shares: its environment, the
// one-line error style ("hist-x: what went wrong: what to do"), the exit
// codes, and the flags every command takes (--store, the scope flags).
package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"hist/lib/policy"
	"hist/lib/store"
	"hist/lib/tombstone"
)

// Exit codes shared by every command. Commands document their own codes
// above these in their usage text and in README.
const (
	ExitOK        = 0
	ExitFailure   = 1 // the command could not do its job (the message says what state it left)
	ExitUsage     = 2 // bad flags or arguments; nothing was read or changed
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
	Home   string
}

// OSEnv is the real process's Env.
func OSEnv(name string) *Env {
	home, err := os.UserHomeDir()
	if err != nil {
		home = "/"
	}
	return &Env{
		Name: name, Args: os.Args[1:],
		Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr,
		Getenv: os.Getenv, Lookup: os.LookupEnv, Home: home,
	}
}

// Errorf prints "name: msg" on stderr.
func (e *Env) Errorf(format string, args ...any) {
	fmt.Fprintf(e.Stderr, "%s: %s\n", e.Name, fmt.Sprintf(format, args...))
}

// Warnf prints "name: warning: msg" on stderr.
func (e *Env) Warnf(format string, args ...any) {
	fmt.Fprintf(e.Stderr, "%s: warning: %s\n", e.Name, fmt.Sprintf(format, args...))
}

// Policy returns the effective capture policy.
func (e *Env) Policy() policy.State {
	return policy.Effective(e.Lookup, store.DefaultConfigHome(e.Getenv, e.Home))
}

// ConfigHome is the config home.
func (e *Env) ConfigHome() string { return store.DefaultConfigHome(e.Getenv, e.Home) }

// StoreFlag registers --store on fs.
func StoreFlag(fs *flag.FlagSet) *string {
	return fs.String("store", "", "use the store at `DIR` (default $PI_CODING_AGENT_DIR/history or ~/.pi/agent/history)")
}

// Store returns the store named by --store, or the default one.
func (e *Env) Store(flagValue string) store.Store {
	if flagValue != "" {
		return store.Store{Root: flagValue}
	}
	return store.Store{Root: store.DefaultRoot(e.Getenv, e.Home)}
}

// LoadHidden loads hidden.json, printing the recovery message when it
// cannot be trusted.
func (e *Env) LoadHidden(s store.Store) (*tombstone.Set, bool) {
	h, err := tombstone.Load(s.Hidden())
	if err != nil {
		var u *tombstone.UntrustedError
		if errors.As(err, &u) {
			e.Errorf("%v", u)
		} else {
			e.Errorf("reading %s: %v", s.Hidden(), err)
		}
		return nil, false
	}
	return h, true
}

// ScopeFlags are the --project [DIR] and --all flags.
type ScopeFlags struct {
	Project    bool
	ProjectDir string
	All        bool
}

// Register adds --project and --all to fs. --project takes an optional
// DIR: write --project=DIR, or --project DIR where the command takes no
// other argument at that place (see SplitOptional).
func (sf *ScopeFlags) Register(fs *flag.FlagSet) {
	fs.Func("project", "the project at `DIR` (default: the working directory)", func(v string) error {
		sf.Project = true
		if v != "true" {
			sf.ProjectDir = v
		}
		return nil
	})
	// Lets "--project" stand alone.
	fs.Lookup("project").DefValue = ""
	fs.BoolVar(&sf.All, "all", false, "every project and history-global.jsonl")
}

// Resolve returns the scope the flags name, with the canonical project
// folder for --project.
func (sf *ScopeFlags) Resolve(s store.Store) (store.Scope, string, error) {
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
		return store.Scope{}, "", err
	}
	return store.Scope{Project: store.Hash(canon)}, canon, nil
}

// SplitOptional rewrites "--project DIR" into "--project=DIR" when the
// argument after --project is not a flag and at least minRest arguments
// that are not flags follow it (so "hist-delete --project TEXT" keeps TEXT
// as the prompt). A lone "--project" becomes "--project=true".
func SplitOptional(args []string, name string, minRest int) []string {
	out := make([]string, 0, len(args))
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			out = append(out, args[i:]...)
			break
		}
		if a != "--"+name && a != "-"+name {
			out = append(out, a)
			continue
		}
		if i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") && positionalsAfter(args[i+2:]) >= minRest {
			out = append(out, "--"+name+"="+args[i+1])
			i++
			continue
		}
		out = append(out, "--"+name+"=true")
	}
	return out
}

func positionalsAfter(args []string) int {
	n := 0
	for i, a := range args {
		if a == "--" {
			return n + len(args) - i - 1
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			n++
		}
	}
	return n
}

// Flags is a new flag set for the command's own flags, for ParseArgs.
func (e *Env) Flags() *flag.FlagSet { return flag.NewFlagSet(e.Name, flag.ContinueOnError) }

// ParseArgs parses args with fs, flags and arguments in any order (everything
// after "--" is an argument), and returns the arguments, with stop=false.
// When the command must stop here it returns stop=true and the exit code:
// ExitOK after -h/--help (the usage printed on stdout), ExitUsage after a
// bad flag (one line on stderr naming the flag as typed). Usage:
//
//	args, code, stop := e.ParseArgs(fs, usage, e.Args)
//	if stop {
//		return code
//	}
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
			return pos, ExitOK, false
		}
		if used := len(args) - len(rest); used > 0 && args[used-1] == "--" {
			return append(pos, rest...), ExitOK, false
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

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

// Plural is n and the word for it: "1 file", "2 files", "0 entries".
func Plural(n int, one, many string) string {
	if n == 1 {
		return strconv.Itoa(n) + " " + one
	}
	return strconv.Itoa(n) + " " + many
}

// Describe is err without the path that an *fs.PathError or
// *os.LinkError carries, for messages that name the file themselves.
func Describe(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err.Error()
	}
	if errors.Is(err, syscall.EISDIR) {
		return "is a directory"
	}
	return err.Error()
}

// Parse is ParseArgs with its outcome as ok (parsed) and help (--help
// printed), for hist-seed until it calls ParseArgs.
func (e *Env) Parse(fs *flag.FlagSet, usage string, args []string) (pos []string, ok, help bool) {
	pos, code, stop := e.ParseArgs(fs, usage, args)
	return pos, !stop, stop && code == ExitOK
}
