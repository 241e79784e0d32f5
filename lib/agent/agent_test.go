package agent

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
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

// TestReaders: every agent of the list has a transcript reader and its
// folder, a prompt-recall reader when it names a prompt-recall file (and
// only then), and each variable that Where names moves the transcripts'
// folder or the prompt-recall file.
func TestReaders(t *testing.T) {
	home := t.TempDir()
	for _, a := range List {
		if a.Root == nil || a.Scan == nil {
			t.Errorf("%q: no transcript reader", a.Name)
			continue
		}
		if (a.RecallPath != nil) != (a.Recall != "") || (a.RecallPath != nil) != (a.ScanRecall != nil) {
			t.Errorf("%q: a prompt-recall reader: %v; a prompt-recall file named: %q", a.Name, a.ScanRecall != nil, a.Recall)
			continue
		}
		where := func(env map[string]string) string {
			get := func(k string) string { return env[k] }
			p := a.Root(get, home)
			if a.RecallPath != nil {
				r := a.RecallPath(get, home)
				if filepath.Base(r) != a.Recall {
					t.Errorf("%q: the prompt-recall file is %s, Recall says %s", a.Name, r, a.Recall)
				}
				p += " " + r
			}
			return p
		}
		plain := where(nil)
		if len(vars(a)) == 0 {
			t.Errorf("%q: Where names no variable that moves its files", a.Name)
		}
		for _, v := range vars(a) {
			// An absolute folder holding the agent's subfolder, which
			// some readers look for before they take it.
			dir := t.TempDir()
			if err := os.Mkdir(filepath.Join(dir, a.Name), 0o700); err != nil {
				t.Fatal(err)
			}
			if got := where(map[string]string{v: dir}); got == plain {
				t.Errorf("%q: $%s does not move its files (%s)", a.Name, v, got)
			}
		}
		if a.Watched != nil {
			for _, f := range a.Watched("/r") {
				if f.Path != "/r" && !strings.HasPrefix(f.Path, "/r/") {
					t.Errorf("%q: watches %s, outside its root /r", a.Name, f.Path)
				}
			}
		}
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

var varRE = regexp.MustCompile(`\$[A-Z_][A-Z0-9_]*`)

// vars are the environment variables that a's Where names, without "$".
func vars(a Agent) []string {
	var vs []string
	for _, v := range varRE.FindAllString(a.Where, -1) {
		vs = append(vs, strings.TrimPrefix(v, "$"))
	}
	return vs
}

// TestVars: Where names its variables.
func TestVars(t *testing.T) {
	a, _ := Lookup("opencode")
	if got := vars(a); !slices.Equal(got, []string{"OPENCODE_DB", "XDG_DATA_HOME", "XDG_STATE_HOME"}) {
		t.Errorf("opencode's vars = %q", got)
	}
}

// TestSrcConstants: lib/transcript's Src constants, which the readers
// write into each prompt, name agents of the list (an agent added later
// may name itself in its own package).
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
	if len(got) == 0 {
		t.Fatal("no Src constants found in lib/transcript/transcript.go")
	}
	for _, g := range got {
		if _, ok := Lookup(g); !ok {
			t.Errorf("lib/transcript/transcript.go's Src constant %q is not in List", g)
		}
	}
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
