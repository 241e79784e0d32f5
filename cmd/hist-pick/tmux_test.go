//go:build unix

package main

// These tests drive the real hist-pick in a real terminal: tmux runs it in
// a detached session of a given size, keys go in with send-keys, and the
// assertions read the screen with capture-pane. They skip when tmux is
// missing (.ci/run installs it).

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"hist/internal/testbin"
	"hist/lib/record"
	"hist/lib/store"
	"hist/lib/tombstone"
)

var binDir string

func TestMain(m *testing.M) {
	if os.Getenv("HIST_PICK_BENCH_CMD") != "" {
		os.Exit(m.Run()) // the stopwatch runs what PATH has
	}
	testbin.Main(m, &binDir)
}

// term is one tmux session on a private tmux server.
type term struct {
	t    *testing.T
	sock string
	dir  string // the test's folder: home, store, the project
}

func needTmux(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed (.ci/run installs it)")
	}
}

// newTerm starts bash in a cols x rows terminal, in dir/proj, with capture
// on unless env says otherwise.
func newTerm(t *testing.T, dir string, cols, rows int, env ...string) *term {
	t.Helper()
	rc := filepath.Join(dir, "bashrc")
	os.WriteFile(rc, []byte("PS1='$ '\n"), 0o600)
	return newShellTerm(t, dir, cols, rows, []string{"bash", "--noprofile", "--rcfile", rc, "-i"}, env...)
}

// newShellTerm runs shell (its prompt must be "$ ") in a cols x rows terminal.
func newShellTerm(t *testing.T, dir string, cols, rows int, shell []string, env ...string) *term {
	t.Helper()
	needTmux(t)
	tm := &term{t: t, sock: fmt.Sprintf("hist-pick-test-%d-%d", os.Getpid(), time.Now().UnixNano()), dir: dir}
	vars := append([]string{
		"HOME=" + filepath.Join(dir, "home"),
		"PATH=" + binDir + ":" + os.Getenv("PATH"),
		"LANG=C.UTF-8", "TERM=xterm-256color",
		"GENTLE_PI_HISTORY_CAPTURE=1", "HISTFILE=/dev/null",
		"PI_CODING_AGENT_DIR=" + filepath.Join(dir, "agent"),
	}, env...)
	args := []string{"-u", "-L", tm.sock, "-f", "/dev/null", "new-session", "-d", "-s", "t",
		"-x", fmt.Sprint(cols), "-y", fmt.Sprint(rows), "-c", filepath.Join(dir, "proj")}
	args = append(args, "env", "-i")
	args = append(args, vars...)
	args = append(args, shell...)
	if out, err := exec.Command("tmux", args...).CombinedOutput(); err != nil {
		t.Fatalf("tmux new-session: %v\n%s", err, out)
	}
	t.Cleanup(func() { exec.Command("tmux", "-L", tm.sock, "kill-server").Run() })
	tm.waitFor("the shell prompt", func(s string) bool { return strings.HasPrefix(s, "$") })
	return tm
}

func (tm *term) tmux(args ...string) string {
	tm.t.Helper()
	out, err := exec.Command("tmux", append([]string{"-L", tm.sock}, args...)...).CombinedOutput()
	if err != nil {
		tm.t.Fatalf("tmux %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// keys sends tmux key names (Enter, Escape, C-DC, Home, ...).
func (tm *term) keys(keys ...string) {
	tm.t.Helper()
	tm.tmux(append([]string{"send-keys", "-t", "t"}, keys...)...)
}

// text types s literally.
func (tm *term) text(s string) {
	tm.t.Helper()
	tm.tmux("send-keys", "-t", "t", "-l", s)
}

// run types a command line and Enter.
func (tm *term) run(cmd string) {
	tm.t.Helper()
	tm.text(cmd)
	tm.keys("Enter")
}

// clear empties the screen, so nothing from an earlier command can match.
func (tm *term) clear() {
	tm.t.Helper()
	tm.run("clear")
	tm.waitFor("a clear screen", func(s string) bool { return strings.TrimSpace(s) == "$" })
}

func (tm *term) screen() string {
	tm.t.Helper()
	return tm.tmux("capture-pane", "-p", "-t", "t")
}

// cursor is the cursor's column, from 0.
func (tm *term) cursor() string {
	tm.t.Helper()
	return strings.TrimSpace(tm.tmux("display-message", "-p", "-t", "t", "#{cursor_x}"))
}

func (tm *term) screenColors() string {
	tm.t.Helper()
	return tm.tmux("capture-pane", "-p", "-e", "-t", "t")
}

// waitFor polls the screen until ok holds (20 s at most: a loaded CI
// machine can be slow to spawn the callbacks).
func (tm *term) waitFor(what string, ok func(screen string) bool) string {
	tm.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		s := tm.screen()
		if ok(s) {
			return s
		}
		if time.Now().After(deadline) {
			tm.t.Fatalf("waiting for %s; the screen:\n%s", what, s)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (tm *term) waitText(text string) string {
	tm.t.Helper()
	return tm.waitFor(fmt.Sprintf("%q", text), func(s string) bool { return strings.Contains(s, text) })
}

// waitCount waits for the selector's match count: a field "M/N" that
// starts with prefix ("1/", "3/30"), on a row that is not the shell's
// command line (which holds paths such as ".../001/out").
func (tm *term) waitCount(prefix string) string {
	tm.t.Helper()
	return tm.waitFor(fmt.Sprintf("the count %q", prefix), func(s string) bool {
		for _, row := range strings.Split(s, "\n") {
			if strings.HasPrefix(row, "$") {
				continue
			}
			for _, f := range strings.Fields(row) {
				if countField.MatchString(f) && strings.HasPrefix(f, prefix) {
					return true
				}
			}
		}
		return false
	})
}

var countField = regexp.MustCompile(`^\d+/\d+$`)

// settle waits until the screen stops changing (the callbacks are done).
func (tm *term) settle() string {
	tm.t.Helper()
	prev := ""
	same := 0
	for i := 0; i < 200; i++ {
		s := tm.screen()
		if s == prev {
			same++
			if same >= 4 {
				return s
			}
		} else {
			same = 0
		}
		prev = s
		time.Sleep(25 * time.Millisecond)
	}
	return prev
}

// fixture is a store with a known project.
type fixture struct {
	dir, store, proj, canon, hash, other string
}

// prompts are the project's prompts, oldest first: "prompt 01" ...
// "prompt 30" (one every minute), then a multi-line one and an imported
// Claude Code one, which are the newest.
func newFixture(t *testing.T) *fixture {
	t.Helper()
	dir := t.TempDir()
	f := &fixture{dir: dir, store: filepath.Join(dir, "agent", "history"), proj: filepath.Join(dir, "proj")}
	for _, d := range []string{f.proj, filepath.Join(dir, "home"), filepath.Join(dir, "other")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	canon, _ := store.Canonical(f.proj)
	f.canon = canon
	f.hash = store.Hash(canon)
	otherCanon, _ := store.Canonical(filepath.Join(dir, "other"))
	f.other = store.Hash(otherCanon)
	st := store.Store{Root: f.store}
	if err := st.Register(f.hash, canon); err != nil {
		t.Fatal(err)
	}
	if err := st.Register(f.other, otherCanon); err != nil {
		t.Fatal(err)
	}
	ts := int64(1700000000000)
	var a, b []byte
	for i := 1; i <= 30; i++ {
		ts += 60000
		rec := record.Record{Text: fmt.Sprintf("prompt %02d", i), TS: ts}
		if i%2 == 0 {
			a = record.Append(a, rec)
		} else {
			b = record.Append(b, rec)
		}
		if i == 5 { // an older copy of prompt 29, in other case and spacing
			a = record.Append(a, record.Record{Text: "PROMPT   29", TS: ts})
		}
	}
	a = record.Append(a, record.Record{Text: "first line\nsecond line", TS: ts + 60000})
	b = record.Append(b, record.Record{Text: "fix the flaky test", TS: ts + 120000, Src: "claude", Session: "sess-123"})
	write := func(path string, data []byte) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(st.ProjectDir(f.hash), "aaaa.jsonl"), a)
	write(filepath.Join(st.ProjectDir(f.hash), "seed.jsonl"), b)
	write(filepath.Join(st.ProjectDir(f.other), "cccc.jsonl"),
		record.Append(record.Append(nil, record.Record{Text: "prompt 29", TS: 1}), record.Record{Text: "other project prompt", TS: ts}))
	write(st.Global(), record.Append(nil, record.Record{Text: "legacy editor prompt", TS: 1600000000000}))
	return f
}

// pick starts hist-pick with args, its stdout and exit code going to files.
func (tm *term) pick(args string) {
	tm.t.Helper()
	tm.clear()
	tm.run("clear; hist-pick " + args + " >" + tm.dir + "/out 2>" + tm.dir + "/err; echo $? >" + tm.dir + "/code")
}

// result waits for hist-pick to exit and returns its code, stdout, stderr.
func (tm *term) result() (code, stdout, stderr string) {
	tm.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		b, err := os.ReadFile(filepath.Join(tm.dir, "code"))
		if err == nil && len(b) > 0 {
			out, _ := os.ReadFile(filepath.Join(tm.dir, "out"))
			serr, _ := os.ReadFile(filepath.Join(tm.dir, "err"))
			os.Remove(filepath.Join(tm.dir, "code"))
			return strings.TrimSpace(string(b)), string(out), string(serr)
		}
		if time.Now().After(deadline) {
			tm.t.Fatalf("hist-pick did not exit; the screen:\n%s", tm.screen())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// promptRow is a list row: the gutter, the dim column (age, agent, uses)
// and the prompt.
var promptRow = regexp.MustCompile(`^[▌ ] [ \w]{4} [a-z ]{8}[ ×\d]{4} \S`)

// rowText is a list row's prompt: what follows the gutter and the column.
func rowText(r string) string {
	rs := []rune(strings.TrimRight(r, " │"))
	if len(rs) < 20 {
		return ""
	}
	return strings.TrimSpace(string(rs[20:]))
}

// layout splits a selector screen: header rows (above the "> " row), the
// list rows, and the footer row.
type layout struct {
	header []string
	query  string
	list   []string
	footer string
}

func parseLayout(t *testing.T, screen string) layout {
	t.Helper()
	rows := strings.Split(screen, "\n")
	var l layout
	i := 0
	for ; i < len(rows) && !strings.HasPrefix(rows[i], ">") && !strings.HasPrefix(rows[i], "  >"); i++ {
		l.header = append(l.header, rows[i])
	}
	if i == len(rows) {
		t.Fatalf("no search box row on the screen:\n%s", screen)
	}
	l.query = strings.TrimPrefix(strings.TrimSpace(rows[i]), ">")
	for i++; i < len(rows) && promptRow.MatchString(rows[i]); i++ {
		l.list = append(l.list, rows[i])
	}
	if i < len(rows) {
		l.footer = strings.TrimSpace(rows[i])
	}
	return l
}

// selectedIs reports a screen whose header shows pos and whose selected
// row is want.
func selectedIs(pos, want string) func(string) bool {
	return func(s string) bool {
		if !strings.Contains(s, pos) {
			return false
		}
		for _, r := range strings.Split(s, "\n") {
			if strings.HasPrefix(r, "▌") {
				return rowText(r) == want
			}
		}
		return false
	}
}

// selected is the selected list row's text.
func (l layout) selected() string {
	for _, r := range l.list {
		if strings.HasPrefix(r, "▌") {
			return rowText(r)
		}
	}
	return ""
}

const fullRadio = "◉ This folder | ○ All projects"

func TestHeaderWidths(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	for _, tc := range []struct {
		cols    int
		class   string
		header  int
		list    int
		row0    []string
		radioAt int
		radio   string
	}{
		{200, "wide", 2, 10, []string{"Prompt history", "1/32", "32 loaded", fullRadio}, 0, fullRadio},
		{120, "wide", 2, 10, []string{"Prompt history", "1/32", "32 loaded", fullRadio}, 0, fullRadio},
		{80, "medium", 2, 10, []string{"Prompt history", "1/32", "32 loaded"}, 1, fullRadio + "  newest first"},
		{50, "narrow", 3, 9, []string{"Prompt history", "1/32"}, 2, fullRadio},
		{32, "narrow, short radio", 3, 9, []string{"Prompt history", "1/32"}, 2, "◉ This folder | ○ All"},
	} {
		t.Run(tc.class, func(t *testing.T) {
			tm := newTerm(t, f.dir, tc.cols, 40)
			tm.pick("")
			s := tm.waitFor("the loaded header", func(s string) bool {
				return strings.Contains(s, "32 loaded") && !strings.Contains(s, "loaded…")
			})
			l := parseLayout(t, s)
			if len(l.header) != tc.header {
				t.Errorf("%d header rows, want %d:\n%s", len(l.header), tc.header, s)
			}
			for _, w := range tc.row0 {
				if !strings.Contains(l.header[0], w) {
					t.Errorf("first header row %q lacks %q", l.header[0], w)
				}
			}
			if got := strings.TrimSpace(l.header[tc.radioAt]); !strings.HasSuffix(got, tc.radio) {
				t.Errorf("header row %d = %q, want the radio %q", tc.radioAt, got, tc.radio)
			}
			switch tc.class {
			case "wide":
				if strings.TrimSpace(l.header[1]) != "newest first" {
					t.Errorf("wide: the order is not under the first row: %q", l.header[1])
				}
			case "medium":
				if strings.Contains(l.header[0], "◉") {
					t.Errorf("medium: the radio is on the first row: %q", l.header[0])
				}
			default:
				if strings.TrimSpace(l.header[1]) != "32 loaded  newest first" {
					t.Errorf("narrow: second row %q, want the loaded count and the order", l.header[1])
				}
			}
			if !strings.HasPrefix(l.footer, "enter pick · ") || tc.cols >= 120 && !strings.Contains(l.footer, "ctrl-r relevance") {
				t.Errorf("the footer is not the key hint: %q", l.footer)
			}
			// The newest prompt: Claude Code's, captured once; prompt 29:
			// twice (other case and spacing), the agent unknown (pi).
			if len(l.list) > 0 && !regexp.MustCompile(`^▌ +\d+[a-z]+ claude +fix the fl`).MatchString(l.list[0]) {
				t.Errorf("first row %q: want its age and agent before it", l.list[0])
			}
			if tc.cols >= 50 && !regexp.MustCompile(`(?m)^  +\d+[a-z]+ pi +×2 prompt 29`).MatchString(s) {
				t.Errorf("no row of prompt 29 with its agent and 2 uses:\n%s", s)
			}
			if len(l.list) != tc.list {
				t.Errorf("%d list rows, want %d:\n%s", len(l.list), tc.list, s)
			}
			// 30 rows: the preview's top border is row 15, and its 15 rows follow.
			if rows := strings.Split(s, "\n"); len(rows) < 15 || !strings.HasPrefix(rows[14], "────") {
				t.Errorf("the preview border is not on row 15 (30 rows in all):\n%s", s)
			}
			if tc.cols >= 50 && l.selected() != "fix the flaky test" {
				t.Errorf("selected %q, want the newest prompt", l.selected())
			}
			if tc.cols >= 50 && !strings.Contains(s, `first line\nsecond line`) {
				t.Errorf("the multi-line prompt is not on one row with \\n:\n%s", s)
			}
			tm.keys("Escape")
			code, out, _ := tm.result()
			if code != "130" || out != "" {
				t.Errorf("Esc: exit %s, stdout %q; want 130 and nothing", code, out)
			}
		})
	}
}

// Resizing recomputes the header: wide -> narrow -> medium.
func TestHeaderResize(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	tm := newTerm(t, f.dir, 120, 40)
	tm.pick("")
	tm.waitText("32 loaded")
	for _, tc := range []struct {
		cols, header, list int
	}{{50, 3, 9}, {80, 2, 10}, {120, 2, 10}} {
		tm.tmux("resize-window", "-t", "t", "-x", fmt.Sprint(tc.cols))
		s := tm.waitFor(fmt.Sprintf("%d header rows at %d columns", tc.header, tc.cols), func(s string) bool {
			l := layout{}
			for _, r := range strings.Split(s, "\n") {
				if strings.HasPrefix(r, ">") {
					break
				}
				l.header = append(l.header, r)
			}
			return len(l.header) == tc.header
		})
		if l := parseLayout(t, tm.settle()); len(l.list) != tc.list {
			t.Errorf("at %d columns: %d list rows, want %d:\n%s", tc.cols, len(l.list), tc.list, s)
		}
	}
	tm.keys("Escape")
	tm.result()
}

func TestHomeEnd(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	tm := newTerm(t, f.dir, 100, 40)
	tm.pick("")
	tm.waitText("32 loaded")

	// Empty search box: End selects the oldest, Home the newest.
	// The header's position and the list are drawn apart: wait for both.
	tm.keys("End")
	s := tm.waitFor("End: 32/32 with the oldest selected", selectedIs("32/32", "prompt 01"))
	if sel := parseLayout(t, s).selected(); sel != "prompt 01" {
		t.Errorf("End: selected %q, want the oldest, prompt 01", sel)
	}
	tm.keys("Home")
	s = tm.waitFor("Home: 1/32 with the newest selected", selectedIs("1/32", "fix the flaky test"))
	if sel := parseLayout(t, s).selected(); sel != "fix the flaky test" {
		t.Errorf("Home: selected %q, want the newest", sel)
	}

	// Text in the search box: Home/End move the caret, never to the newest
	// or oldest; like every editing key, they select the first match.
	tm.text("promp")
	tm.waitCount("1/30")
	tm.keys("Down", "Down")
	tm.waitCount("3/30")
	tm.keys("Home")
	tm.text("z")
	tm.waitFor("the query zpromp", func(s string) bool { return parseLayout(t, s).query == " zpromp" })
	tm.keys("BSpace") // the caret is after the z
	tm.waitFor("the query promp", func(s string) bool { return parseLayout(t, s).query == " promp" })
	tm.keys("Down", "Down")
	tm.waitCount("3/30")
	tm.keys("End")
	tm.text("t")
	s = tm.waitFor("the query prompt", func(s string) bool { return parseLayout(t, s).query == " prompt" })
	l := parseLayout(t, tm.settle())
	if !strings.Contains(strings.Join(l.header, "\n"), "1/30") || l.selected() != "prompt 30" {
		t.Errorf("after typing, the selection should be the first match:\n%s", s)
	}
	if strings.Contains(s, "32/32") || strings.Contains(s, "30/30") {
		t.Errorf("End with text selected the oldest:\n%s", s)
	}
	tm.keys("Down", "Down")
	tm.waitCount("3/30")
	tm.keys("End")
	s = tm.waitCount("1/30")
	if l := parseLayout(t, tm.settle()); l.selected() != "prompt 30" {
		t.Errorf("End with text: selection %q, want the first match (never the oldest):\n%s", l.selected(), s)
	}
	tm.keys("Home")
	tm.text("<")
	tm.keys("End")
	tm.text(">")
	tm.waitFor("the query <prompt>", func(s string) bool { return parseLayout(t, s).query == " <prompt>" })
	tm.keys("BSpace", "Home", "Delete")
	tm.waitFor("the query prompt", func(s string) bool { return parseLayout(t, s).query == " prompt" })

	// Whitespace is text too.
	tm.keys("End", "C-u")
	tm.waitCount("1/32")
	tm.text(" ")
	tm.keys("End")
	s = tm.settle()
	if !strings.Contains(s, "1/32") || strings.Contains(s, "32/32") {
		t.Errorf("End with a space in the search box moved the list:\n%s", s)
	}
	tm.keys("Escape")
	tm.result()
}

func storeHas(t *testing.T, root, text string) []string {
	t.Helper()
	var found []string
	filepath.Walk(root, func(path string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() || !strings.HasSuffix(path, ".jsonl") {
			return nil
		}
		data, _ := os.ReadFile(path)
		for _, line := range strings.Split(string(data), "\n") {
			rec, err := record.Parse([]byte(line))
			if err == nil && strings.EqualFold(strings.Join(strings.Fields(rec.Text), " "), text) {
				found = append(found, path)
			}
		}
		return nil
	})
	return found
}

func TestDelete(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	tm := newTerm(t, f.dir, 120, 40)
	tm.pick("")
	tm.waitText("32 loaded")
	tm.keys("Down", "Down", "Down") // fix the flaky test, first line, prompt 30, prompt 29
	s := tm.waitCount("4/32")
	if sel := parseLayout(t, s).selected(); sel != "prompt 29" {
		t.Fatalf("selected %q, want prompt 29", sel)
	}

	arm := func() layout {
		t.Helper()
		tm.keys("C-DC")
		s := tm.waitText("Delete this prompt from history (y/n)? Prompt stays in session log")
		l := parseLayout(t, tm.settle())
		if l.selected() != "prompt 29" {
			t.Errorf("armed on %q, want prompt 29:\n%s", l.selected(), s)
		}
		if !regexp.MustCompile(`\x1b\[(41|48;5;1|48;5;9)m[^\n]*prompt 29`).MatchString(tm.screenColors()) {
			t.Errorf("the armed row is not red:\n%q", tm.screenColors())
		}
		return l
	}

	// Any other key is ignored: nothing typed, selection and footer stay.
	before := arm()
	tm.text("xq")
	tm.keys("Up", "Down", "Enter", "Home", "C-c", "Tab", "BSpace")
	s = tm.settle()
	after := parseLayout(t, s)
	if after.selected() != "prompt 29" || after.query != before.query || !strings.Contains(s, "(y/n)?") {
		t.Errorf("a key other than y/n/Esc changed the armed selector:\n%s", s)
	}

	// n cancels; Esc cancels.
	for _, k := range []string{"n", "Escape"} {
		tm.keys(k)
		tm.waitFor("the footer to clear", func(s string) bool { return !strings.Contains(s, "(y/n)?") })
		s = tm.waitCount("4/32")
		l := parseLayout(t, tm.settle())
		if l.selected() != "prompt 29" || !strings.Contains(s, "4/32") {
			t.Errorf("after %s: selection %q, want prompt 29 at 4/32:\n%s", k, l.selected(), s)
		}
		if got := storeHas(t, f.store, "prompt 29"); len(got) != 3 {
			t.Fatalf("after %s: the store has prompt 29 in %d places, want 3 (nothing deleted)", k, len(got))
		}
		arm()
	}

	// y deletes every copy in the scope (the project: two files; the other
	// project's copy stays) and tombstones it.
	tm.keys("y")
	s = tm.waitCount("4/31")
	l := parseLayout(t, tm.settle())
	if strings.Contains(s, "prompt 29") || l.selected() != "prompt 28" {
		t.Errorf("after y: want prompt 29 gone and prompt 28 selected at the same position:\n%s", s)
	}
	if got := storeHas(t, f.store, "prompt 29"); len(got) != 1 || !strings.Contains(got[0], f.other) {
		t.Errorf("after y: prompt 29 is still in %v; want only the other project's copy", got)
	}
	h, err := tombstone.Load(filepath.Join(f.store, "hidden.json"))
	if err != nil || !h.Hidden("prompt 29") {
		t.Errorf("after y: hidden.json does not hide prompt 29 (%v)", err)
	}
	tm.keys("Escape")
	tm.result()
}

// ctrl-r (sorting by relevance off) holds in the armed pass, so the
// armed row is the selected one.
func TestDeleteUnsorted(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	tm := newTerm(t, f.dir, 120, 40)
	tm.pick("--query 'pt 1'")
	tm.waitText("32 loaded")
	tm.keys("C-r", "Down", "Down")
	tm.waitCount("3/")
	want := parseLayout(t, tm.settle()).selected()
	tm.keys("C-DC")
	s := tm.waitText("(y/n)?")
	if got := parseLayout(t, tm.settle()).selected(); got != want || want == "" {
		t.Errorf("armed %q, want the selected %q:\n%s", got, want, s)
	}
	tm.keys("y")
	tm.waitFor("the armed footer to go", func(s string) bool { return !strings.Contains(s, "(y/n)?") })
	s = tm.settle()
	if strings.Contains(s, want+"\n") || strings.Contains(s, "list changed") {
		t.Errorf("after y, %q should be gone:\n%s", want, s)
	}
	if got := storeHas(t, f.store, want); len(got) != 0 {
		t.Errorf("%q is still in %v", want, got)
	}
	tm.keys("Escape")
	tm.result()
}

func TestDeleteFailureNotice(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	// A hidden.json of 900 entries (65 KB) cannot be rewritten under
	// ulimit -f 32 (KiB), while the small store files can: the copies go,
	// the tombstone write fails.
	var entries []string
	for i := range 900 {
		entries = append(entries, fmt.Sprintf(`"sha256:%064x"`, i))
	}
	hidden := filepath.Join(f.store, "hidden.json")
	if err := os.WriteFile(hidden, []byte("["+strings.Join(entries, ",")+"]"), 0o600); err != nil {
		t.Fatal(err)
	}
	tm := newTerm(t, f.dir, 120, 40)
	tm.run("clear; (ulimit -f 32; hist-pick >" + f.dir + "/out 2>" + f.dir + "/err; echo $? >" + f.dir + "/code)")
	tm.waitText("32 loaded")
	tm.keys("C-DC")
	tm.waitText("(y/n)?")
	tm.keys("y")
	tm.waitText("Deleted from the store, but hiding failed")
	s := tm.waitCount("1/31")
	if strings.Contains(s, "(y/n)?") || strings.Contains(s, "fix the flaky test") || !strings.Contains(s, "1/31") {
		t.Errorf("after the failed hiding: want the prompt gone from the list and the notice:\n%s", s)
	}
	if got := storeHas(t, f.store, "fix the flaky test"); len(got) != 0 {
		t.Errorf("the copies are still in %v", got)
	}
	tm.keys("Escape")
	tm.result()
}

func TestScopeSwitch(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	tm := newTerm(t, f.dir, 120, 40)
	tm.pick("")
	tm.waitText("32 loaded")
	tm.keys("Tab")
	s := tm.waitFor("all projects loaded", func(s string) bool {
		return strings.Contains(s, "○ This folder | ◉ All projects") && strings.Contains(s, "34 loaded") && !strings.Contains(s, "loaded…")
	})
	if !strings.Contains(s, "other project prompt") || !strings.Contains(s, "1/34") {
		t.Errorf("All projects should list the other project's prompt:\n%s", s)
	}
	tm.text("legacy")
	s = tm.waitCount("1/1")
	if parseLayout(t, s).selected() != "legacy editor prompt" {
		t.Errorf("history-global.jsonl's prompt is not in All projects:\n%s", s)
	}
	tm.keys("Tab")
	s = tm.waitFor("back to the project", func(s string) bool { return strings.Contains(s, fullRadio) && strings.Contains(s, "0/0") })
	if l := parseLayout(t, s); l.query != " legacy" {
		t.Errorf("the query did not survive the switch: %q", l.query)
	}
	tm.keys("Escape")
	tm.result()
}

func TestPickAndResume(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	tm := newTerm(t, f.dir, 120, 40)

	tm.pick("--query 'first line'")
	tm.waitCount("1/1")
	tm.waitText("Project  " + f.canon)
	tm.keys("Enter")
	code, out, _ := tm.result()
	if code != "0" || out != "first line\nsecond line\n" {
		t.Errorf("Enter: exit %s, stdout %q", code, out)
	}

	tm.pick("--json --query flaky")
	tm.waitCount("1/1")
	for _, w := range []string{"Agent    Claude Code", "Session  sess-123", "claude --resume sess-123"} {
		tm.waitText(w)
	}
	tm.keys("C-o")
	code, out, _ = tm.result()
	if code != "0" || !strings.Contains(out, `"resume":"cd `+f.canon+` \u0026\u0026 claude --resume sess-123"`) {
		t.Errorf("ctrl-o --json: exit %s, stdout %q", code, out)
	}

	tm.pick("-0 --query 'prompt 07'")
	tm.waitCount("1/")
	tm.keys("C-o") // a captured prompt has no session: a notice, still open
	tm.waitText("no session to resume")
	tm.keys("Enter")
	code, out, _ = tm.result()
	if code != "0" || out != "prompt 07\x00" {
		t.Errorf("-0: exit %s, stdout %q", code, out)
	}

	// ctrl-c: nothing printed, 130.
	tm.pick("--query flaky")
	tm.waitCount("1/1")
	tm.keys("C-c")
	code, out, _ = tm.result()
	if code != "130" || out != "" {
		t.Errorf("ctrl-c: exit %s, stdout %q; want 130 and nothing", code, out)
	}

	// Works inside $(...).
	tm.clear()
	tm.run("clear; x=$(hist-pick --query 'prompt 12'); echo \"got[$x]\"")
	tm.waitCount("1/")
	tm.keys("Enter")
	tm.waitText("got[prompt 12]")
}

func TestCaptureOffAndUntrusted(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	tm := newTerm(t, f.dir, 100, 30, "GENTLE_PI_HISTORY_CAPTURE=")
	tm.pick("")
	code, out, errs := tm.result()
	if code != "1" || out != "" || !strings.Contains(errs, "hist-capture --enable") {
		t.Errorf("capture off: exit %s, stdout %q, stderr %q", code, out, errs)
	}
	tm.run("clear; hist-pick")
	s := tm.waitText("hist-capture --enable")
	if strings.Contains(s, "Prompt history") {
		t.Errorf("capture off opened the selector:\n%s", s)
	}

	pref := filepath.Join(f.dir, "home", ".pi", "gentle-ai", "history-capture.json")
	os.MkdirAll(filepath.Dir(pref), 0o700)
	os.WriteFile(pref, []byte("{not json"), 0o600)
	tm.run("clear; hist-pick")
	s = tm.waitText("invalid or unreadable")
	if !strings.Contains(strings.ReplaceAll(s, "\n", ""), "history-capture.json") || strings.Contains(s, "Prompt history") {
		t.Errorf("invalid preference: want the file named and no selector:\n%s", s)
	}

	tm2 := newTerm(t, f.dir, 100, 30)
	os.WriteFile(filepath.Join(f.store, "hidden.json"), []byte("{corrupt"), 0o600)
	tm2.pick("")
	code, out, errs = tm2.result()
	if code != "3" || out != "" || !strings.Contains(errs, "cannot be trusted") {
		t.Errorf("untrusted hidden.json: exit %s, stdout %q, stderr %q", code, out, errs)
	}
}

// Without a terminal (no controlling tty) hist-pick says so and exits 1.
func TestNoTerminal(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	cmd := exec.Command(filepath.Join(binDir, "hist-pick"), "--store", f.store)
	cmd.Env = append(os.Environ(), "GENTLE_PI_HISTORY_CAPTURE=1", "HOME="+filepath.Join(f.dir, "home"))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	out, err := cmd.CombinedOutput()
	if code := cmd.ProcessState.ExitCode(); code != 1 || !strings.Contains(string(out), "hist-pick: no terminal to draw the selector on") {
		t.Errorf("exit %d (%v), output %q", code, err, out)
	}
}

// The shell key bindings: alt-r (or the --key chosen) opens the selector,
// and the chosen prompt lands at the cursor. bash always; zsh and fish
// when installed.
func TestShellWidgets(t *testing.T) {
	t.Parallel()
	zsh := func(dir string) []string {
		os.WriteFile(filepath.Join(dir, ".zshrc"), []byte("PROMPT='$ '\n"), 0o600)
		return []string{"env", "ZDOTDIR=" + dir, "zsh", "-i"}
	}
	fish := func(dir string) []string {
		return []string{"fish", "--no-config", "-i", "-C", "function fish_prompt; echo -n '$ '; end; set -g fish_greeting ''"}
	}
	for _, sh := range []struct {
		name, shell string
		argv        func(dir string) []string
		setup, key  string
	}{
		{"bash", "bash", nil, `eval "$(hist-pick --shell bash)"`, "M-r"},
		{"bash ctrl-r", "bash", nil, `eval "$(hist-pick --shell bash --key ctrl-r)"`, "C-r"},
		{"zsh", "zsh", zsh, `eval "$(hist-pick --shell zsh)"`, "M-r"},
		{"zsh ctrl-r", "zsh", zsh, `eval "$(hist-pick --shell zsh --key ctrl-r)"`, "C-r"},
		{"fish", "fish", fish, `hist-pick --shell fish | source`, "M-r"},
		{"fish ctrl-r", "fish", fish, `hist-pick --shell fish --key ctrl-r | source`, "C-r"},
	} {
		t.Run(sh.name, func(t *testing.T) {
			t.Parallel()
			if _, err := exec.LookPath(sh.shell); err != nil {
				t.Skipf("%s is not installed", sh.shell)
			}
			f := newFixture(t)
			var tm *term
			if sh.argv == nil {
				tm = newTerm(t, f.dir, 100, 40)
			} else {
				tm = newShellTerm(t, f.dir, 100, 40, sh.argv(f.dir))
			}
			tm.run(sh.setup + "; clear; echo ready")
			tm.waitText("ready\n$")
			tm.text(`echo "é<>"`)   // a multibyte character before the cursor
			tm.keys("Left", "Left") // the cursor between < and >
			// The key goes in only once the line editor reads keys: in
			// cooked mode the terminal itself would take it. The editor
			// has moved the cursor between < and > (the terminal would
			// have echoed the arrows as ^[[D).
			tm.waitFor("the line editor to move the cursor", func(s string) bool {
				return strings.Contains(s, `$ echo "é<>"`) && !strings.Contains(s, "^[") && tm.cursor() == "10"
			})
			tm.keys(sh.key)
			tm.waitText("32 loaded")
			tm.text("prompt 17")
			tm.waitCount("1/1")
			tm.keys("Enter")
			s := tm.waitFor("the prompt at the cursor", func(s string) bool { return strings.Contains(s, `$ echo "é<'prompt 17'>"`) })
			if strings.Contains(s, "Prompt history") {
				t.Errorf("the selector is still on the screen:\n%s", s)
			}
			tm.keys("Enter")
			tm.waitText("\né<'prompt 17'>")
		})
	}
}

// TestBenchFirstScreen is scripts/bench-pick.sh's stopwatch, not a test:
// it runs only with HIST_PICK_BENCH_CMD set. In a 120x40 tmux terminal it
// runs the command HIST_PICK_BENCH_RUNS times (after one warm-up run) and
// prints, one a line, the milliseconds from the shell's $EPOCHREALTIME
// just before the command to the first screen whose row 2 holds
// HIST_PICK_BENCH_MATCH and whose row 14 (the tenth list row) is drawn.
// With HIST_PICK_BENCH_UNTIL (a regexp) it goes on to the first screen
// that matches it (every prompt loaded) and prints that time too. A run
// that has not got there after HIST_PICK_BENCH_TIMEOUT (a Go duration,
// default 5m) fails with the screen it shows.
func TestBenchFirstScreen(t *testing.T) {
	cmd := os.Getenv("HIST_PICK_BENCH_CMD")
	if cmd == "" {
		t.Skip("a stopwatch for scripts/bench-pick.sh (HIST_PICK_BENCH_CMD unset)")
	}
	match := os.Getenv("HIST_PICK_BENCH_MATCH")
	var until *regexp.Regexp
	if u := os.Getenv("HIST_PICK_BENCH_UNTIL"); u != "" {
		until = regexp.MustCompile(u)
	}
	runs := 11
	fmt.Sscan(os.Getenv("HIST_PICK_BENCH_RUNS"), &runs)
	// A run whose screen never matches fails instead of polling forever.
	limit := 5 * time.Minute
	if s := os.Getenv("HIST_PICK_BENCH_TIMEOUT"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil {
			t.Fatalf("HIST_PICK_BENCH_TIMEOUT=%s: %v", s, err)
		}
		limit = d
	}
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "home"), 0o700)
	os.MkdirAll(filepath.Join(dir, "proj"), 0o700)
	tm := newTerm(t, dir, 120, 40, "PATH="+os.Getenv("PATH"))
	tm.run(`t() { printf %s "$EPOCHREALTIME" >` + dir + `/t0; "$@"; echo __done__; }`)
	for i := 0; i <= runs; i++ {
		tm.clear()
		os.Remove(filepath.Join(dir, "t0"))
		tm.run("t " + cmd)
		var end, all time.Time
		deadline := time.Now().Add(limit)
		for {
			out, err := exec.Command("tmux", "-L", tm.sock, "capture-pane", "-p", "-t", "t").Output()
			if err != nil {
				t.Fatal(err)
			}
			if time.Now().After(deadline) {
				if end.IsZero() {
					t.Fatalf("run %d: after %v no first screen (%q on row 2, ten list rows):\n%s", i, limit, match, out)
				}
				t.Fatalf("run %d: after %v no screen matches HIST_PICK_BENCH_UNTIL=%s:\n%s", i, limit, until, out)
			}
			rows := strings.Split(string(out), "\n")
			if end.IsZero() && len(rows) >= 14 && strings.Contains(rows[1], match) && strings.TrimSpace(rows[13]) != "" {
				end = time.Now()
			}
			if !end.IsZero() && (until == nil || until.Match(out)) {
				all = time.Now()
				break
			}
			if until != nil && !end.IsZero() {
				time.Sleep(20 * time.Millisecond)
			}
		}
		b, err := os.ReadFile(filepath.Join(dir, "t0"))
		if err != nil {
			t.Fatal(err)
		}
		var sec, usec int64
		if _, err := fmt.Sscanf(strings.Replace(string(b), ",", ".", 1), "%d.%d", &sec, &usec); err != nil {
			t.Fatalf("t0 %q: %v", b, err)
		}
		ms := float64(end.UnixMicro()-(sec*1e6+usec)) / 1000
		if i > 0 {
			fmt.Printf("first-screen-ms %.1f t0 %d end %d\n", ms, sec*1e6+usec, end.UnixMicro())
			if until != nil {
				fmt.Printf("loaded-ms %.1f\n", float64(all.UnixMicro()-(sec*1e6+usec))/1000)
			}
		}
		time.Sleep(200 * time.Millisecond)
		tm.keys("Escape")
		tm.waitText("__done__")
	}
}

// A store file that cannot be read: the others are listed, the footer
// says so.
func TestUnreadableFile(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	// A folder with a store file's name cannot be read, even by root.
	if err := os.Mkdir(filepath.Join(f.store, "projects", f.hash, "dddd.jsonl"), 0o700); err != nil {
		t.Fatal(err)
	}
	tm := newTerm(t, f.dir, 120, 40)
	tm.pick("")
	tm.waitText("32 loaded")
	tm.waitText("Some prompts are not listed: could not read")
	tm.keys("Escape")
	tm.result()
}

// A machine with nothing in the store yet: the selector opens, empty, with
// a one-line hint on how prompts get in.
func TestEmptyStore(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "home"), 0o700)
	os.MkdirAll(filepath.Join(dir, "proj"), 0o700)
	tm := newTerm(t, dir, 120, 40)
	tm.pick("--all")
	s := tm.waitText("No prompts yet")
	if !strings.Contains(s, "0 loaded") || !strings.Contains(s, "hist-seed") {
		t.Errorf("empty store:\n%s", s)
	}
	tm.keys("Enter") // nothing to pick: stays open
	time.Sleep(200 * time.Millisecond)
	tm.keys("Escape")
	if code, out, _ := tm.result(); code != "130" || out != "" {
		t.Errorf("exit %s, stdout %q", code, out)
	}
	if _, err := os.Stat(filepath.Join(dir, "agent", "history")); err == nil {
		t.Error("the selector created the store")
	}
}
