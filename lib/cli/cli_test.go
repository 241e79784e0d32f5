package cli

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"hist/lib/store"
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
	cases := []struct {
		args    []string
		minRest int
		want    []string
	}{
		{[]string{"--project"}, 0, []string{"--project=true"}},
		{[]string{"--project", "dir"}, 0, []string{"--project=dir"}},
		{[]string{"-project", "dir", "--json"}, 0, []string{"--project=dir", "--json"}},
		{[]string{"--project", "--json"}, 0, []string{"--project=true", "--json"}},
		{[]string{"--project", "TEXT"}, 1, []string{"--project=true", "TEXT"}},
		{[]string{"--project", "dir", "TEXT"}, 1, []string{"--project=dir", "TEXT"}},
		{[]string{"--project", "dir", "--", "-TEXT"}, 1, []string{"--project=dir", "--", "-TEXT"}},
		{[]string{"--project=x", "y"}, 0, []string{"--project=x", "y"}},
		{[]string{"--", "--project", "x"}, 0, []string{"--", "--project", "x"}},
		{[]string{"a", "--project"}, 0, []string{"a", "--project=true"}},
	}
	for _, c := range cases {
		if got := SplitOptional(c.args, "project", c.minRest); !slices.Equal(got, c.want) {
			t.Errorf("SplitOptional(%q, %d) = %q, want %q", c.args, c.minRest, got, c.want)
		}
	}
}

func TestParse(t *testing.T) {
	e, out, errb := testEnv(nil)
	fs := flag.NewFlagSet("hist-x", flag.ContinueOnError)
	n := fs.Int("n", 0, "")
	v := fs.Bool("v", false, "")
	pos, ok, help := e.Parse(fs, "usage\n", []string{"a", "-n", "3", "b", "-v", "--", "-c", "--d"})
	if !ok || help || *n != 3 || !*v || !slices.Equal(pos, []string{"a", "b", "-c", "--d"}) {
		t.Errorf("Parse = %q %v %v n=%d v=%v", pos, ok, help, *n, *v)
	}
	fs = flag.NewFlagSet("hist-x", flag.ContinueOnError)
	fs.Int("n", 0, "")
	if _, ok, help := e.Parse(fs, "usage\n", []string{"-bogus"}); ok || help {
		t.Error("a bad flag parsed")
	}
	if msg := errb.String(); strings.Count(msg, "\n") != 1 || !strings.HasPrefix(msg, "hist-x: flag provided but not defined: -bogus") {
		t.Errorf("error %q is not one line in house style", msg)
	}
	fs = flag.NewFlagSet("hist-x", flag.ContinueOnError)
	if _, ok, help := e.Parse(fs, "the usage\n", []string{"x", "--help"}); ok || !help || out.String() != "the usage\n" {
		t.Errorf("--help: ok=%v help=%v out=%q", ok, help, out.String())
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
