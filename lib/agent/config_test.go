package agent_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"hist/lib/agent"
	"hist/lib/install"
)

// configVars is the variable that moves each agent's folder.
var configVars = map[string]string{
	"pi": "PI_CODING_AGENT_DIR", "claude": "CLAUDE_CONFIG_DIR", "codex": "CODEX_HOME",
	"cursor": "CURSOR_CONFIG_DIR", "opencode": "XDG_CONFIG_HOME",
}

// TestConfig: each agent's folder is found one way, for its reader and
// for --install: its variable read as lib/envdir reads one (white space
// trimmed, a leading ~ expanded), and its transcripts (but opencode's,
// which live in its data folder) under it.
func TestConfig(t *testing.T) {
	home := t.TempDir()
	for _, a := range agent.List {
		v, ok := configVars[a.Name]
		if a.Config == nil || !ok {
			t.Errorf("%s: no Config, or no variable for it in this test", a.Name)
			continue
		}
		value, want := " ~/moved ", filepath.Join(home, "moved")
		if v == "XDG_CONFIG_HOME" { // the XDG variables take absolute paths only
			value, want = " "+home+" ", filepath.Join(home, a.Name)
		}
		env := func(k string) string {
			if k == v {
				return value
			}
			return ""
		}
		if got := a.Config(env, home); got != want {
			t.Errorf("%s: $%s=%q gives %s, want %s", a.Name, v, value, got, want)
		}
		if got := a.Config(nil, home); !strings.HasPrefix(got, home+string(filepath.Separator)) {
			t.Errorf("%s: the default folder %s is not under HOME", a.Name, got)
		}
		if root := a.Root(env, home); a.Name != "opencode" && !strings.HasPrefix(root, a.Config(env, home)) {
			t.Errorf("%s: its transcripts (%s) are not under its folder (%s)", a.Name, root, a.Config(env, home))
		}
	}
}

// TestInstallTargets: --install knows every agent of the list, and only
// those.
func TestInstallTargets(t *testing.T) {
	names := agent.Names()
	slices.Sort(names)
	if got := install.Targets(); !slices.Equal(got, names) {
		t.Errorf("install's targets %q, the agents %q: give the new agent its integration in lib/install/targets.go", got, names)
	}
}

// TestCaptureUsage: hist-capture's usage names the agents from the list
// (its AGENTS placeholder) where it lists them, and names none by hand.
func TestCaptureUsage(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), filepath.Join("..", "..", "cmd", "hist-capture", "histcapture", "main.go"), nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var usage string
	ast.Inspect(f, func(n ast.Node) bool {
		if v, ok := n.(*ast.ValueSpec); ok && len(v.Names) == 1 && v.Names[0].Name == "usage" {
			usage, _ = strconv.Unquote(v.Values[0].(*ast.BasicLit).Value)
		}
		return true
	})
	for _, flag := range []string{"--src NAME", "--install [LIST]"} {
		i := strings.Index(usage, "\n    "+flag)
		if i < 0 {
			t.Fatalf("hist-capture's usage has no %s", flag)
		}
		if para := usage[i+1:]; !strings.Contains(para[:strings.Index(para, "\n    --")], "(AGENTS)") {
			t.Errorf("hist-capture's %s does not list the agents with (AGENTS)", flag)
		}
	}
	if strings.Contains(usage, "opencode)") || strings.Contains(usage, "claude, codex") {
		t.Errorf("hist-capture's usage lists agents by hand")
	}
}
