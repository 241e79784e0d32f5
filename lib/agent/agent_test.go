package agent

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"hist/lib/shellquote"
)

// TestList: names and display names are unique, a name is a plain lower
// case word (it goes into file names and --from), the resume command is
// made of plain words.
func TestList(t *testing.T) {
	names, displays := map[string]bool{}, map[string]bool{}
	for _, a := range List {
		if a.Name == "" || a.Name != strings.ToLower(a.Name) || !shellquote.Plain(a.Name) || strings.ContainsAny(a.Name, ",./:") {
			t.Errorf("agent name %q: want a plain lower-case word", a.Name)
		}
		if names[a.Name] || displays[a.Display] {
			t.Errorf("agent %q (%q) is listed twice", a.Name, a.Display)
		}
		names[a.Name], displays[a.Display] = true, true
		if a.Display == "" || a.Where == "" {
			t.Errorf("agent %q: no display name or location", a.Name)
		}
		for _, w := range a.Resume {
			if !shellquote.Plain(w) {
				t.Errorf("agent %q: resume word %q is not plain", a.Name, w)
			}
		}
		if _, ok := Lookup(a.Name); !ok {
			t.Errorf("Lookup(%q) finds nothing", a.Name)
		}
	}
	if _, ok := Lookup("nobody"); ok {
		t.Errorf("Lookup of an unknown name found an agent")
	}
}

// hookPayloads are a payload of each agent whose integration runs
// hist-capture --hook, with the session id it names.
var hookPayloads = map[string]struct{ payload, session string }{
	"claude": {`{"session_id":"8c3c","cwd":"/p","prompt":"x","hook_event_name":"UserPromptSubmit","transcript_path":"/h/.claude/projects/p/8c3c.jsonl"}`, "8c3c"},
	"codex":  {`{"session_id":"019a","turn_id":"t1","cwd":"/p","prompt":"x","transcript_path":"/h/.codex/sessions/rollout-1.jsonl"}`, "019a"},
	"cursor": {`{"conversation_id":"c1","workspace_roots":["/p"],"prompt":"x"}`, "c1"},
}

// TestFromHook: each agent with a hook recognises its own payload, and no
// other agent claims it; a generic payload names no agent.
func TestFromHook(t *testing.T) {
	for _, a := range List {
		if _, ok := hookPayloads[a.Name]; ok != (a.Hook != nil) {
			t.Errorf("agent %q: recognises hook payloads: %v; has a payload in this test: %v", a.Name, a.Hook != nil, ok)
		}
	}
	for name, hp := range hookPayloads {
		var h Hook
		if err := json.Unmarshal([]byte(hp.payload), &h); err != nil {
			t.Fatal(err)
		}
		if src, session := FromHook(&h); src != name || session != hp.session {
			t.Errorf("FromHook(%s) = %q, %q; want %q, %q", hp.payload, src, session, name, hp.session)
		}
		for _, a := range List {
			if a.Name != name && a.Hook != nil && a.Hook(&h) != "" {
				t.Errorf("agent %q claims %s's payload too", a.Name, name)
			}
		}
	}
	for _, p := range []string{`{"prompt":"x","cwd":"/p"}`, `{"prompt":"x"}`} {
		var h Hook
		json.Unmarshal([]byte(p), &h)
		if src, session := FromHook(&h); src != "" || session != "" {
			t.Errorf("FromHook(%s) = %q, %q; want none", p, src, session)
		}
	}
}

// TestVars: Where names its variables.
func TestVars(t *testing.T) {
	a, _ := Lookup("opencode")
	if got := a.Vars(); !slices.Equal(got, []string{"OPENCODE_DB", "XDG_DATA_HOME", "XDG_STATE_HOME"}) {
		t.Errorf("opencode's Vars() = %q", got)
	}
}

// TestSrcConstants: lib/transcript's Src constants, which the readers
// write into each prompt, are exactly the list's names.
func TestSrcConstants(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), filepath.Join("..", "transcript", "transcript.go"), nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, s := range g.Specs {
			v := s.(*ast.ValueSpec)
			for i, n := range v.Names {
				if strings.HasPrefix(n.Name, "Src") && i < len(v.Values) {
					if lit, ok := v.Values[i].(*ast.BasicLit); ok {
						s, _ := strconv.Unquote(lit.Value)
						got = append(got, s)
					}
				}
			}
		}
	}
	sameSet(t, "lib/transcript/transcript.go's Src constants", got, Names())
}

// TestDocTables: the agent tables of README.md, docs/hist-seed.md and
// docs/integrations.md (a table whose first column is "agent") have one
// row per agent of the list, by its display name.
func TestDocTables(t *testing.T) {
	var displays []string
	for _, a := range List {
		displays = append(displays, a.Display)
	}
	for _, doc := range []string{"README.md", "docs/hist-seed.md", "docs/integrations.md"} {
		b, err := os.ReadFile(filepath.Join("..", "..", doc))
		if err != nil {
			t.Fatal(err)
		}
		tables := agentTables(string(b))
		if len(tables) == 0 {
			t.Errorf("%s: no agent table (a table whose first column is \"agent\")", doc)
		}
		for _, rows := range tables {
			sameSet(t, doc+"'s agent table", rows, displays)
		}
	}
}

// agentTables returns the first cells of the rows of each Markdown table
// in doc whose header's first cell is "agent".
func agentTables(doc string) [][]string {
	var tables [][]string
	in := false
	for _, l := range strings.Split(doc, "\n") {
		l = strings.TrimSpace(l)
		if !strings.HasPrefix(l, "|") {
			in = false
			continue
		}
		cell := strings.TrimSpace(strings.SplitN(l[1:], "|", 2)[0])
		switch {
		case !in && cell == "agent":
			in = true
			tables = append(tables, nil)
		case in && strings.Trim(cell, "-: ") == "":
		case in:
			tables[len(tables)-1] = append(tables[len(tables)-1], cell)
		}
	}
	return tables
}

// sameSet reports the names in got that want lacks and the other way round.
func sameSet(t *testing.T, where string, got, want []string) {
	t.Helper()
	for _, g := range got {
		if !slices.Contains(want, g) {
			t.Errorf("%s names %q, which is not in agent.List", where, g)
		}
	}
	for _, w := range want {
		if !slices.Contains(got, w) {
			t.Errorf("%s misses %q of agent.List", where, w)
		}
	}
	if len(got) != len(want) {
		t.Errorf("%s has %d entries for the list's %d", where, len(got), len(want))
	}
}
