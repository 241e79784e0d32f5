package cli

import (
	"bytes"
	"errors"
	"flag"
	"hist/lib/store"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func testEnv(vals map[string]string) (*Env, *bytes.Buffer, *bytes.Buffer) {
	var out, errb bytes.Buffer
	return &Env{
		Name: "hist-x", Stdout: &out, Stderr: &errb,
		Getenv: func(k string) string { return vals[k] },
		Lookup: func(k string) (string, bool) { v, ok := vals[k]; return v, ok },
		Home:   "/home/u",
	}, &out, &errb
}

func TestSplitOptional(t *testing.T) {
	cases := []struct{ args, want []string }{
		{[]string{"--project"}, []string{"--project=true"}},
		{[]string{"--project", "dir"}, []string{"--project=dir"}},
		{[]string{"-project", "dir", "--json"}, []string{"--project=dir", "--json"}},
		{[]string{"--project", "--json"}, []string{"--project=true", "--json"}},
		{[]string{"--project", "dir", "TEXT"}, []string{"--project=dir", "TEXT"}},
		{[]string{"--project", "dir", "--", "-TEXT"}, []string{"--project=dir", "--", "-TEXT"}},
		{[]string{"--project=x", "y"}, []string{"--project=x", "y"}},
		{[]string{"--", "--project", "x"}, []string{"--", "--project", "x"}},
		{[]string{"a", "--project"}, []string{"a", "--project=true"}},
	}
	for _, c := range cases {
		if got := SplitOptional(c.args, "project"); !slices.Equal(got, c.want) {
			t.Errorf("SplitOptional(%q) = %q, want %q", c.args, got, c.want)
		}
	}
}

func TestParseArgs(t *testing.T) {
	e, out, errb := testEnv(nil)
	fs := e.Flags()
	n := fs.Int("n", 0, "")
	v := fs.Bool("v", false, "")
	pos, code, stop := e.ParseArgs(fs, "usage\n", []string{"a", "-n", "3", "b", "-v", "--", "-c", "--d"})
	if stop || code != ExitOK || *n != 3 || !*v || !slices.Equal(pos, []string{"a", "b", "-c", "--d"}) {
		t.Errorf("ParseArgs = %q %d %v n=%d v=%v", pos, code, stop, *n, *v)
	}
	fs = e.Flags()
	if _, code, stop := e.ParseArgs(fs, "the usage\n", []string{"x", "--help"}); !stop || code != ExitOK || out.String() != "the usage\n" {
		t.Errorf("--help: code=%d stop=%v out=%q", code, stop, out.String())
	}
	if errb.Len() != 0 {
		t.Errorf("--help wrote %q on stderr", errb.String())
	}
}

// A bad flag is named as typed, with what it expects, in one line.
func TestParseArgsErrors(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--bogus"}, "unknown flag --bogus: see 'hist-x --help'"},
		{[]string{"a", "-bogus=3", "b"}, "unknown flag -bogus: see 'hist-x --help'"},
		{[]string{"-v", "--bogus", "---x"}, "unknown flag --bogus: see 'hist-x --help'"},
		{[]string{"---x"}, "unknown flag ---x: see 'hist-x --help'"},
		{[]string{"-=x"}, "unknown flag -=x: see 'hist-x --help'"},
		{[]string{"--limit", "abc"}, `--limit takes a whole number, got "abc"`},
		{[]string{"-v", "x", "--limit=-"}, `--limit takes a whole number, got "-"`},
		{[]string{"--limit"}, "--limit needs a whole number: see 'hist-x --help'"},
		{[]string{"--wait", "soon"}, `--wait takes a duration such as 10s or 2m, got "soon"`},
		{[]string{"--v=maybe"}, `--v takes true or false, got "maybe"`},
		{[]string{"--name"}, "--name needs a value: see 'hist-x --help'"},
		{[]string{"--kind", "x"}, `--kind: not a kind: use a or b`},
	}
	for _, c := range cases {
		e, out, errb := testEnv(nil)
		fs := e.Flags()
		fs.Int("limit", 0, "")
		fs.Duration("wait", 0, "")
		fs.Bool("v", false, "")
		fs.String("name", "", "")
		fs.Func("kind", "", func(s string) error {
			if s != "a" && s != "b" {
				return errors.New("not a kind: use a or b")
			}
			return nil
		})
		pos, code, stop := e.ParseArgs(fs, "usage\n", c.args)
		if !stop || code != ExitUsage || pos != nil || out.Len() != 0 {
			t.Errorf("%q: pos=%q code=%d stop=%v out=%q", c.args, pos, code, stop, out.String())
		}
		if got := errb.String(); got != "hist-x: "+c.want+"\n" {
			t.Errorf("%q: error %q, want %q", c.args, got, c.want)
		}
	}
}

func TestMessages(t *testing.T) {
	e, _, errb := testEnv(nil)
	e.Errorf("bad %s: do %s", "thing", "this")
	e.Warnf("careful")
	if errb.String() != "hist-x: bad thing: do this\nhist-x: warning: careful\n" {
		t.Errorf("%q", errb.String())
	}
}

func TestStoreAndPolicy(t *testing.T) {
	e, _, _ := testEnv(map[string]string{"PI_CODING_AGENT_DIR": "/agent", "GENTLE_PI_CONFIG_HOME": "/cfg"})
	if e.Store("").Root != "/agent/history" || e.Store("/s").Root != "/s" || e.ConfigHome() != "/cfg" {
		t.Error("Store/ConfigHome")
	}
	home := t.TempDir()
	e, _, _ = testEnv(map[string]string{"GENTLE_PI_HISTORY_CAPTURE": "1", "GENTLE_PI_CONFIG_HOME": home})
	if st := e.Policy(); !st.On {
		t.Error("the variable does not reach Policy")
	}
}

func TestLoadHidden(t *testing.T) {
	root := t.TempDir()
	e, _, errb := testEnv(nil)
	s := store.Store{Root: root}
	if h, ok := e.LoadHidden(s); !ok || h == nil || errb.Len() != 0 {
		t.Error("a missing hidden.json is trusted")
	}
	os.WriteFile(s.Hidden(), []byte("{"), 0o600)
	if h, ok := e.LoadHidden(s); ok || h != nil {
		t.Error("a corrupt hidden.json was trusted")
	}
	if msg := errb.String(); strings.Count(msg, "\n") != 1 || !strings.Contains(msg, s.Hidden()) || !strings.Contains(msg, "delete it yourself") {
		t.Errorf("recovery message %q", msg)
	}
}

func TestScopeFlags(t *testing.T) {
	s := store.Store{Root: "/r"}
	dir := t.TempDir()
	real, _ := filepath.EvalSymlinks(dir)
	var sf ScopeFlags
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	sf.Register(fs)
	if err := fs.Parse([]string{"--project=" + dir}); err != nil {
		t.Fatal(err)
	}
	sc, canon, err := sf.Resolve(s)
	if err != nil || sc.All || canon != real || sc.Project != store.Hash(real) {
		t.Errorf("--project DIR: %+v %s %v", sc, canon, err)
	}
	sf = ScopeFlags{}
	fs = flag.NewFlagSet("x", flag.ContinueOnError)
	sf.Register(fs)
	fs.Parse([]string{"--all"})
	if sc, _, err := sf.Resolve(s); err != nil || !sc.All {
		t.Errorf("--all: %+v %v", sc, err)
	}
	sf = ScopeFlags{}
	fs = flag.NewFlagSet("x", flag.ContinueOnError)
	sf.Register(fs)
	fs.Parse([]string{"--all", "--project=true"})
	if !sf.Project || sf.ProjectDir != "" {
		t.Errorf("--project=true: %+v", sf)
	}
	if _, _, err := sf.Resolve(s); err == nil {
		t.Error("--all with --project accepted")
	}
	sf = ScopeFlags{}
	wd, _ := os.Getwd()
	if sc, canon, err := sf.Resolve(s); err != nil || sc.Project != store.Hash(canon) || canon == "" || !strings.HasPrefix(wd, "/") {
		t.Errorf("default scope: %+v %s %v", sc, canon, err)
	}
}

// A --store DIR that does not exist is a usage error that names it,
// except for the commands that write prompts, which make the store.
func TestStoreMissing(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	os.WriteFile(file, nil, 0o600)
	for _, c := range []struct{ name, store, want string }{
		{"hist-list", filepath.Join(dir, "typo"), "hist-list: --store " + dir + "/typo: no such folder: check the path (to start a new store there, create it first: mkdir -m 700 " + dir + "/typo)\n"},
		{"hist-list", file, "hist-list: --store " + file + ": not a folder: give the store's folder\n"},
		{"hist-list", dir, ""},
		{"hist-capture", filepath.Join(dir, "new"), ""},
		{"hist-seed", filepath.Join(dir, "new"), ""},
	} {
		e, _, errb := testEnv(nil)
		e.Name = c.name
		fs := e.Flags()
		StoreFlag(fs)
		_, code, stop := e.ParseArgs(fs, "usage\n", []string{"--store", c.store})
		if got := errb.String(); got != c.want || stop != (c.want != "") || stop && code != ExitUsage {
			t.Errorf("%s --store %s: stderr %q, stop=%v code=%d; want %q", c.name, c.store, got, stop, code, c.want)
		}
	}
}

func TestHomeProblem(t *testing.T) {
	cases := []struct {
		home string
		vals map[string]string
		args []string
		want string // "" when the command may run
	}{
		{"/home/u", nil, nil, ""},
		{"", nil, nil, "hist-x: HOME is not set: set HOME, or pass --store DIR and set GENTLE_PI_CONFIG_HOME\n"},
		{"", map[string]string{"GENTLE_PI_CONFIG_HOME": "/c"}, nil, "hist-x: HOME is not set: set HOME or pass --store DIR\n"},
		{"", map[string]string{"GENTLE_PI_CONFIG_HOME": "/c"}, []string{"--store", "/"}, ""},
		{"", map[string]string{"GENTLE_PI_CONFIG_HOME": "/c", "PI_CODING_AGENT_DIR": "/p"}, nil, ""},
		{"", map[string]string{"GENTLE_PI_CONFIG_HOME": "~/c"}, []string{"--store", "/s"}, "hist-x: HOME is not set: set HOME or GENTLE_PI_CONFIG_HOME\n"},
		{"rel", map[string]string{"GENTLE_PI_CONFIG_HOME": "/c"}, nil, "hist-x: HOME is not an absolute path (\"rel\"): set HOME or pass --store DIR\n"},
	}
	for _, c := range cases {
		e, _, errb := testEnv(c.vals)
		e.Home = c.home
		fs := e.Flags()
		StoreFlag(fs)
		_, code, stop := e.ParseArgs(fs, "usage\n", c.args)
		if got := errb.String(); got != c.want || stop != (c.want != "") || stop && code != ExitUsage {
			t.Errorf("home %q %v %q: stderr %q, stop=%v code=%d; want %q", c.home, c.vals, c.args, got, stop, code, c.want)
		}
	}
	// A hook goes on: it checks HomeProblem itself and never fails.
	e, _, errb := testEnv(nil)
	e.Home = ""
	fs := e.Flags()
	fs.Bool("hook", false, "")
	if _, _, stop := e.ParseArgs(fs, "usage\n", []string{"--hook"}); stop || errb.Len() != 0 || e.HomeProblem(fs) == "" {
		t.Errorf("--hook: stop=%v stderr %q", stop, errb.String())
	}
}

func TestResolveMissingFolder(t *testing.T) {
	dir := t.TempDir()
	st := store.Store{Root: filepath.Join(dir, "store")}
	gone := filepath.Join(dir, "gone")
	sf := ScopeFlags{Project: true, ProjectDir: gone}
	if _, _, err := sf.Resolve(st); err == nil || err.Error() != "--project "+gone+": no such folder" {
		t.Errorf("missing folder: %v", err)
	}
	file := filepath.Join(dir, "file")
	os.WriteFile(file, nil, 0o600)
	sf.ProjectDir = file
	if _, _, err := sf.Resolve(st); err == nil || err.Error() != "--project "+file+": not a folder" {
		t.Errorf("a file: %v", err)
	}
	// A removed folder whose prompts the store holds still resolves.
	if err := os.MkdirAll(st.ProjectDir(store.Hash(gone)), 0o700); err != nil {
		t.Fatal(err)
	}
	sf.ProjectDir = gone
	sc, canon, err := sf.Resolve(st)
	if err != nil || !sf.Gone || canon != gone || sc.Project != store.Hash(gone) {
		t.Errorf("removed folder in the store: %v %q %v gone=%v", sc, canon, err, sf.Gone)
	}
	e, _, errb := testEnv(nil)
	if _, _, ok := e.Scope(&sf, st); !ok || !strings.Contains(errb.String(), "hist-x: warning: the folder "+gone+" no longer exists") {
		t.Errorf("Scope: ok=%v stderr %q", ok, errb.String())
	}
}
