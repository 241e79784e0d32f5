package install

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"hist/lib/shellquote"
)

// TestJSONRoundTrip: a file indented with two spaces comes back byte for
// byte: key order, duplicate keys, number literals and <, >, & kept.
func TestJSONRoundTrip(t *testing.T) {
	in := `{
  "z": 1.50,
  "a": [
    true,
    null,
    "<b> & \"c\" é",
    {}
  ],
  "z": [],
  "m": {
    "k": -0.0e+1
  }
}
`
	v, err := parseJSON([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	if out := string(formatJSON(v)); out != in {
		t.Errorf("round trip changed the file:\n%s", out)
	}
	if v, err := parseJSON([]byte(" \n")); err != nil || len(v.(*object).members) != 0 {
		t.Errorf("white space: %v, %v; want an empty object", v, err)
	}
}

// TestJSONSyntaxLine: the error names the line where the JSON breaks.
func TestJSONSyntaxLine(t *testing.T) {
	for in, line := range map[string]int{
		"{\n  \"a\": 1,\n  ,\n}":     3,
		"{\n  \"a\": 1\n}\n{}":       4,
		"{\n  \"a\": [1,\n":          2,
		"{\"a\": 1} x":               1,
		"\n\n[1, 2 3]":               3,
		"{\n  \"a\": \"\x01\"\n}":    2,
		"{\n  \"a\": tru\n}":         2,
		"{\n  \"a\": 1,\n  \"b\"\n}": 4,
	} {
		_, err := parseJSON([]byte(in))
		var se *syntaxError
		if !errors.As(err, &se) || se.line != line {
			t.Errorf("parseJSON(%q) = %v; want line %d", in, err, line)
		}
	}
}

// TestIsOurs: hist's hook is recognised whatever folder names
// hist-capture, quoted or not; other commands are not.
func TestIsOurs(t *testing.T) {
	for cmd, want := range map[string]bool{
		"hist-capture --hook":                 true,
		"/home/me/go/bin/hist-capture --hook": true,
		shellquote.Quote("/my dir/hist-capture", shellquote.POSIX) + " --hook": true,
		"./hooks/hist-capture.sh":                true,
		"/home/me/.cursor/hooks/hist-capture.sh": true,
		"hist-capture --hook --x":                false,
		"my-hist-capture --hook":                 false,
		"hist-capture":                           false,
		"echo hist-capture --hook-like":          false,
		"./hooks/format.sh":                      false,
	} {
		if got := isOurs(cmd); got != want {
			t.Errorf("isOurs(%q) = %v, want %v", cmd, got, want)
		}
	}
}

// TestWithoutOurs: only hist's hooks go; a group keeps its other hooks.
func TestWithoutOurs(t *testing.T) {
	doc, err := parseJSON([]byte(`[
  {"hooks": [{"command": "a"}, {"command": "hist-capture --hook"}]},
  {"hooks": [{"command": "/x/hist-capture --hook"}]},
  {"command": "./hooks/hist-capture.sh"},
  {"command": "b"}
]`))
	if err != nil {
		t.Fatal(err)
	}
	kept, removed := withoutOurs(doc.([]any))
	want := "[\n  {\n    \"hooks\": [\n      {\n        \"command\": \"a\"\n      }\n    ]\n  },\n  {\n    \"command\": \"b\"\n  }\n]\n"
	if got := string(formatJSON(kept)); !removed || got != want {
		t.Errorf("withoutOurs = %v\n%s\nwant\n%s", removed, got, want)
	}
	if _, removed := withoutOurs(kept); removed {
		t.Errorf("withoutOurs removed something from a list without hist's hook")
	}
}

// TestEntriesAsDocumented: the files --install creates are the ones
// scripts/ ships for installing by hand.
func TestEntriesAsDocumented(t *testing.T) {
	r := &run{hook: plainHook}
	home := t.TempDir()
	for name, script := range map[string]string{
		"claude": "scripts/claude/settings.json",
		"codex":  "scripts/codex/hooks.json",
		"cursor": "scripts/cursor/hooks.json",
	} {
		tg := targets[name]
		ch, err := r.planHook(name, tg.dir(func(string) string { return "" }, home), tg.hooks[0], "")
		if err != nil {
			t.Fatal(err)
		}
		want, err := os.ReadFile(filepath.Join("..", "..", filepath.FromSlash(script)))
		if err != nil {
			t.Fatal(err)
		}
		if string(ch.data) != string(want) {
			t.Errorf("%s: --install would create\n%s\nbut %s is\n%s", name, ch.data, script, want)
		}
	}
}

// TestParseList: names, commas, duplicates, all; anything else is named.
func TestParseList(t *testing.T) {
	if got, err := ParseList("codex,pi,codex"); err != nil || len(got) != 2 || got[0] != "codex" || got[1] != "pi" {
		t.Errorf("ParseList(codex,pi,codex) = %v, %v", got, err)
	}
	if got, err := ParseList("all"); err != nil || len(got) != 5 {
		t.Errorf("ParseList(all) = %v, %v", got, err)
	}
	_, err := ParseList("pi,Claude")
	if want := `unknown agent "Claude": use pi, claude, codex, cursor, opencode or all`; err == nil || err.Error() != want {
		t.Errorf("ParseList(pi,Claude) error %v, want %s", err, want)
	}
}

// TestNoTarget: an agent of the list with nothing to install (no hook, no
// plugin) is skipped with a line saying so.
func TestNoTarget(t *testing.T) {
	var out bytes.Buffer
	r := &run{home: t.TempDir(), out: &out}
	r.agent("newagent")
	if got, want := out.String(), "newagent: nothing to install (hist-seed imports its sessions): skipped\n"; got != want || r.failed {
		t.Errorf("got %q (failed %v); want %q", got, r.failed, want)
	}
}
