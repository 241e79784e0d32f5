package install

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"hist/lib/shellquote"
)

// TestOwnCommand: the commands --install writes (and the hand-install
// files' one) are hist's own, whatever folder names hist-capture; a
// command that does more, or another program, is not.
func TestOwnCommand(t *testing.T) {
	for cmd, bin := range map[string]string{
		"hist-capture --hook":                 "hist-capture",
		"/home/me/go/bin/hist-capture --hook": "/home/me/go/bin/hist-capture",
		shellquote.Quote("/my dir/it's/hist-capture", shellquote.POSIX) + " --hook": "/my dir/it's/hist-capture",
		`"/my dir/hist-capture" --hook`:                                             "/my dir/hist-capture",
		`"$HOME/go/bin/hist-capture" --hook`:                                        "$HOME/go/bin/hist-capture",
		`$HOME/go/bin/hist-capture --hook`:                                          "$HOME/go/bin/hist-capture",
		"./hooks/hist-capture.sh":                                                   "",
		"/home/me/.cursor/hooks/hist-capture.sh":                                    "",
	} {
		if got, ok := ownCommand(cmd); !ok || got != bin {
			t.Errorf("ownCommand(%q) = %q, %v; want %q", cmd, got, ok, bin)
		}
	}
	for _, cmd := range []string{
		"audit-log && /path/hist-capture --hook", "hist-capture --hook --x", "my-hist-capture --hook",
		"hist-capture", "echo hist-capture --hook-like", "./hooks/format.sh", "bin/hist-capture --hook",
		`"$(evil)/hist-capture" --hook`, "/a;b/hist-capture --hook", `"$HOME$X/hist-capture" --hook`,
		"~/go/bin/hist-capture --hook",
	} {
		if _, ok := ownCommand(cmd); ok {
			t.Errorf("ownCommand(%q) = true, want false", cmd)
		}
	}
	if got := expandHome("$HOME/go/bin/hist-capture", "/h"); got != "/h/go/bin/hist-capture" {
		t.Errorf("expandHome = %q", got)
	}
}

// TestIsGoRunTemp: a binary that go run built is told from an installed one.
func TestIsGoRunTemp(t *testing.T) {
	for p, want := range map[string]bool{
		"/tmp/go-build1234567/b001/exe/hist-capture":       true,
		"/var/cache/go-build99/b083/exe/hist-capture":      true,
		"/home/me/go/bin/hist-capture":                     false,
		"/home/me/exe/hist-capture":                        false,
		"/home/me/go-build-tools/bin/exe-dir/hist-capture": false,
	} {
		if got := isGoRunTemp(p); got != want {
			t.Errorf("isGoRunTemp(%q) = %v, want %v", p, got, want)
		}
	}
}

// manualCommand is the hook command of scripts/claude/settings.json and
// scripts/codex/hooks.json: go install's default folder, expanded by sh.
const manualCommand = `"$HOME/go/bin/hist-capture" --hook`

// TestEntriesAsDocumented: the files --install creates are, but for the
// binary's path, the ones scripts/ ships for installing by hand.
func TestEntriesAsDocumented(t *testing.T) {
	for name, script := range map[string]string{
		"claude": "scripts/claude/settings.json",
		"codex":  "scripts/codex/hooks.json",
		"cursor": "scripts/cursor/hooks.json",
	} {
		h := targets[name].hooks[0]
		cmd := manualCommand
		if h.cursor {
			cmd = cursorScript
		}
		want, err := os.ReadFile(filepath.Join("..", "..", filepath.FromSlash(script)))
		if err != nil {
			t.Fatal(err)
		}
		if got := h.fresh(cmd); string(got) != string(want) {
			t.Errorf("%s: --install would create\n%s\nbut %s is\n%s", name, got, script, want)
		}
	}
}

// TestCopies: each copied file has its binaries' line once; the copy
// --install writes names the folder, reads back as hist's own, and the
// template itself is hist's own with no folder.
func TestCopies(t *testing.T) {
	for name, tg := range targets {
		for _, c := range tg.copies {
			pre, empty, suf := c.binLine()
			tmpl := pre + empty + suf
			if n := strings.Count(string(c.data), "\n"+tmpl+"\n"); n != 1 {
				t.Errorf("%s: %s holds the line %q %d times, want once", name, c.rel, tmpl, n)
			}
			for _, dir := range []string{"/home/me/go/bin", "/my dir/it's \"here\""} {
				got := c.fill(dir)
				if d, ok := c.binDir(got); !ok || d != dir {
					t.Errorf("%s: the copy for %q reads back as %q, %v", name, dir, d, ok)
				}
			}
			if d, ok := c.binDir(c.data); !ok || d != "" {
				t.Errorf("%s: the template reads back as %q, %v", name, d, ok)
			}
			if _, ok := c.binDir(append(c.fill("/x"), "// more\n"...)); ok {
				t.Errorf("%s: an edited copy reads as hist's own", name)
			}
		}
	}
}

const hookCmd = "/usr/local/bin/hist-capture --hook"

// settingsCases are settings files as users have them, and whether the
// hook removed again without a backup gives back the same bytes.
var settingsCases = []struct {
	name, in string
	exact    bool
}{
	{"other keys", "{\n  \"model\": \"opus\",\n  \"cleanupPeriodDays\": 1.50\n}\n", true},
	{"other events", "{\n  \"hooks\": {\n    \"Stop\": [\n      {\"hooks\": [{\"type\": \"command\", \"command\": \"notify-send done\"}]}\n    ]\n  }\n}\n", true},
	{"an entry", "{\n  \"hooks\": {\n    \"UserPromptSubmit\": [\n      {\n        \"matcher\": \"\",\n        \"hooks\": [{\"type\": \"command\", \"command\": \"echo '<a>' && true\"}]\n      }\n    ]\n  }\n}\n", true},
	{"jsonc", "// mine\n{\n\t\"model\": \"opus\", /* why */\n\t\"hooks\": {\n\t\t\"Stop\": [],\n\t},\n}\n", true},
	{"one line", `{"model":"opus","env":{"A":"b"}}`, true},
	{"crlf", "{\r\n  \"model\": \"opus\"\r\n}\r\n", true},
	{"bad utf-8 and surrogates", "{\n  \"a\": \"\xff\xfe\",\n  \"b\": \"\\ud800 \\udfff\",\n  \"\xc3\": 1\n}\n", true},
	{"empty hooks", "{\n  \"hooks\": {}\n}\n", false},
	{"empty array", "{\n  \"hooks\": {\n    \"UserPromptSubmit\": []\n  }\n}\n", false},
	{"empty object", "{}", false},
	{"trailing comma in array", "{\"hooks\": {\"UserPromptSubmit\": [\n  {\"hooks\": []},\n]}}", true},
}

// TestAddRemove: adding the hook inserts text and changes no byte of the
// file; removing it with the backup gives back the very bytes; removing
// it without one cuts it out, in the usual shapes to the same bytes.
func TestAddRemove(t *testing.T) {
	for _, name := range []string{"claude", "cursor"} {
		h := targets[name].hooks[0]
		cmd := map[bool]string{false: hookCmd, true: cursorScript}[h.cursor]
		for _, c := range settingsCases {
			e, err := h.addHook([]byte(c.in), cmd)
			if err != nil || e.kind != added {
				t.Errorf("%s, %s: add: %v, kind %d", name, c.name, err, e.kind)
				continue
			}
			if !inserted(c.in, string(e.data)) {
				t.Errorf("%s, %s: the file's own bytes changed:\n%s", name, c.name, e.data)
			}
			if again, err := h.addHook(e.data, cmd); err != nil || again.kind != none {
				t.Errorf("%s, %s: a second add: %v, kind %d", name, c.name, err, again.kind)
			}
			back, err := h.removeHook(e.data, []backup{{"newer", []byte(`{"x": 1}`)}, {"b", []byte(c.in)}}, false)
			if err != nil || string(back.data) != c.in || back.from != "b" {
				t.Errorf("%s, %s: remove with the backup = %q from %q, %v", name, c.name, back.data, back.from, err)
			}
			cut, err := h.removeHook(e.data, nil, false)
			if err != nil || cut.kind != removed {
				t.Errorf("%s, %s: remove: %v", name, c.name, err)
				continue
			}
			if cut.gone {
				// The file is what --install creates where there is none:
				// without a backup, that is what it was.
				if string(e.data) != string(h.fresh(cmd)) {
					t.Errorf("%s, %s: removing the hook removes the file", name, c.name)
				}
			} else if d, err := parseHooks(cut.data, h.event); err != nil {
				t.Errorf("%s, %s: removed, the file does not parse: %v\n%s", name, c.name, err, cut.data)
			} else if d.own() != nil {
				t.Errorf("%s, %s: the hook is still there", name, c.name)
			}
			if c.exact && string(cut.data) != c.in {
				t.Errorf("%s, %s: removed without the backup:\n%q\nwant\n%q", name, c.name, cut.data, c.in)
			}
		}
	}
}

var fixedTime = time.Date(2026, 1, 2, 3, 4, 5, 0, time.Local)

// inserted reports whether out is in with text inserted at one place.
func inserted(in, out string) bool {
	i := 0
	for i < len(in) && in[i] == out[i] {
		i++
	}
	return strings.HasSuffix(out[i:], in[i:])
}

// TestNewFile: a missing or blank file gets the whole file; removing the
// hook from a file --install created removes it.
func TestNewFile(t *testing.T) {
	h := targets["claude"].hooks[0]
	for _, in := range []string{"", " \n"} {
		e, err := h.addHook([]byte(in), hookCmd)
		if err != nil || e.kind != created || string(e.data) != string(h.fresh(hookCmd)) {
			t.Errorf("add to %q: %v, %d\n%s", in, err, e.kind, e.data)
		}
	}
	if e, err := h.removeHook(h.fresh(hookCmd), nil, false); err != nil || !e.gone {
		t.Errorf("remove from the file created: %v, gone %v", err, e.gone)
	}
	// The same bytes behind a link: the link's target stays.
	if e, err := h.removeHook(h.fresh(hookCmd), nil, true); err != nil || e.gone || string(e.data) != "{\n}\n" {
		t.Errorf("remove through a link: %v, gone %v, %q", err, e.gone, e.data)
	}
}

// TestStaleAndTheirs: hist's hook that runs another binary is made to run
// this one; a hook of the user's that runs hist-capture is left alone,
// and counts as installed.
func TestStaleAndTheirs(t *testing.T) {
	h := targets["claude"].hooks[0]
	stale := strings.Replace(string(h.fresh("hist-capture --hook")), "hist-capture --hook", "/old/hist-capture --hook", 1)
	e, err := h.addHook([]byte(stale), hookCmd)
	if err != nil || e.kind != updated || e.was != "/old/hist-capture --hook" || !strings.Contains(string(e.data), hookCmd) {
		t.Fatalf("stale: %v, %d, %q\n%s", err, e.kind, e.was, e.data)
	}
	if !inserted(strings.Replace(stale, "/old/hist-capture --hook", "", 1), strings.Replace(string(e.data), hookCmd, "", 1)) {
		t.Errorf("the update changed more than the command:\n%s", e.data)
	}
	// Its backup holds hist's hook: removing gives no backup back, it cuts.
	r, err := h.removeHook(e.data, []backup{{"b", []byte(stale)}}, false)
	if err != nil || r.from != "" || strings.Contains(string(r.data), "hist-capture") {
		t.Errorf("remove after an update: %v, from %q\n%s", err, r.from, r.data)
	}
	compound := strings.Replace(string(h.fresh("x")), `"x"`, `"audit-log \u0026\u0026 /p/hist-capture --hook"`, 1)
	for _, f := range []func() (edit, error){
		func() (edit, error) { return h.addHook([]byte(compound), hookCmd) },
		func() (edit, error) { return h.removeHook([]byte(compound), nil, false) },
	} {
		e, err := f()
		if err != nil || e.kind != theirs || len(e.theirs) != 1 || e.theirs[0] != "audit-log && /p/hist-capture --hook" || e.data != nil {
			t.Errorf("compound: %v, %d, %q, %q", err, e.kind, e.theirs, e.data)
		}
	}
}

// TestRefused: what an agent would not read as one object, or would read
// otherwise than hist, is refused with a line that names the problem.
func TestRefused(t *testing.T) {
	h := targets["claude"].hooks[0]
	for in, want := range map[string]string{
		"{\n  \"model\": \"opus\",\n  \"hooks\": {,}\n}": "is not valid JSON (line 3, column",
		"[]":                                  "is not a JSON object",
		`{"hooks": []}`:                       `has a "hooks" that is not an object`,
		`{"hooks": {"UserPromptSubmit": {}}}`: `has a "hooks" → "UserPromptSubmit" that is not an array`,
		"{\n\"hooks\": {},\n\"a\": 1,\n\"hooks\": {}}":                             `has the key "hooks" twice (lines 2 and 4)`,
		`{"a": {"b": 1, "b": 2}}`:                                                  `has the key "b" twice`,
		`{"a": ` + strings.Repeat("[", 100000) + strings.Repeat("]", 100000) + `}`: "more than 200 levels deep (line 1)",
		`{"a": "` + strings.Repeat("[", 1000) + `"}`:                               "",
	} {
		for _, f := range []func() (edit, error){
			func() (edit, error) { return h.addHook([]byte(in), hookCmd) },
			func() (edit, error) { return h.removeHook([]byte(in), nil, false) },
		} {
			_, err := f()
			var r *refused
			if want == "" && err != nil || want != "" && (!errors.As(err, &r) || !strings.Contains(r.msg, want)) {
				t.Errorf("%.60q: %v, want %q", in, err, want)
			}
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
	o := Options{Home: t.TempDir(), Out: &out}
	if got := o.agent("newagent"); got != Done || out.String() != "newagent: nothing to install (hist-seed imports its sessions): skipped\n" {
		t.Errorf("got %q (%d)", out.String(), got)
	}
}

// TestBackupNames: a backup never replaces a file, its own earlier ones
// included.
func TestBackupNames(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "settings.json")
	var names []string
	for i := range 3 {
		n, err := writeBackup(path, []byte{byte('a' + i)}, fixedTime)
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, filepath.Base(n))
	}
	if names[0] != "settings.json.hist-backup-20260102-030405" || names[1] != names[0]+"-2" || names[2] != names[0]+"-3" {
		t.Errorf("names %q", names)
	}
	f := &file{real: path}
	if b := f.backups(); len(b) != 3 || string(b[0].data) != "c" || string(b[2].data) != "a" {
		t.Errorf("backups newest first: %v", b)
	}
}
