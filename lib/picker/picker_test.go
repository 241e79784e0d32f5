package picker

import (
	"strings"
	"testing"
	"time"

	fzf "github.com/junegunn/fzf/src"
	"github.com/mattn/go-runewidth"

	"hist/lib/agent"
	"hist/lib/history"
	"hist/lib/shellquote"
	"hist/lib/termsafe"
)

func TestHeader(t *testing.T) {
	for _, tc := range []struct {
		h    headerState
		want []string
	}{
		{headerState{Cols: 100, Pos: 3, Matches: 1234567, Loaded: 1234567, Loading: true, Repo: true, Status: "newest first"},
			[]string{"Prompt history  3/1,234,567  1,234,567 loaded…" + strings.Repeat(" ", 17) + "◉ This repository | ○ All projects", "newest first"}},
		{headerState{Cols: 99, Pos: 1, Matches: 2, Loaded: 2, Status: "newest first"},
			[]string{"Prompt history  1/2  2 loaded", "◉ This folder | ○ All projects  newest first"}},
		{headerState{Cols: 80, Pos: 1, Matches: 2, Loaded: 2, All: true, Status: "most used · claude"},
			[]string{"Prompt history  1/2  2 loaded", "○ This folder | ◉ All projects  most used · claude"}},
		{headerState{Cols: 60, Pos: 1, Matches: 2, Loaded: 2, Repo: true, Status: "most used · claude · since 7d"},
			[]string{"Prompt history  1/2  2 loaded", "◉ This repository | ○ All projects  most used · claude ·…"}},
		{headerState{Cols: 59, Pos: 0, Matches: 0, Loaded: 10, Repo: true, Status: "relevance"},
			[]string{"Prompt history  0/0", "10 loaded  relevance", "◉ This repository | ○ All projects"}},
		{headerState{Cols: 50, Pos: 0, Matches: 0, Loaded: 10, Repo: true, Status: "relevance"},
			[]string{"Prompt history  0/0", "10 loaded  relevance", "◉ This repository | ○ All projects"}},
		{headerState{Cols: 30, Pos: 1, Matches: 1, Loaded: 1, Repo: true, Status: "newest first"},
			[]string{"Prompt history  1/1", "1 loaded  newest first", "◉ This repository | ○ All"}},
		{headerState{Cols: 30, Pos: 1, Matches: 1, Loaded: 1, All: true, Repo: true},
			[]string{"Prompt history  1/1", "1 loaded  ", "○ Repo | ◉ All projects"}},
	} {
		got := header(tc.h)
		if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
			t.Errorf("%d columns:\ngot  %q\nwant %q", tc.h.Cols, got, tc.want)
		}
		for _, r := range got {
			if w := runewidth.StringWidth(r); w > tc.h.Cols-3 {
				t.Errorf("%d columns: row %q is %d wide", tc.h.Cols, r, w)
			}
		}
	}
	// The wide header fits 7-digit counts at the breakpoint.
	h := header(headerState{Cols: wideMin, Pos: 9999999, Matches: 9999999, Loaded: 9999999, Loading: true, Repo: true})
	if !strings.HasSuffix(h[0], "◉ This repository | ○ All projects") || !strings.Contains(h[0], "9,999,999 loaded…  ") {
		t.Errorf("wide header at %d columns: %q", wideMin, h[0])
	}
}

// An item is the dim column (age, agent, uses over 1), a tab, the row.
func TestItem(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	at := func(d time.Duration) int64 { return now.Add(-d).UnixMilli() }
	for _, tc := range []struct {
		e    history.Entry
		uses int
		want string
	}{
		{history.Entry{Text: "a\nb", TS: at(30 * time.Second), Src: "claude"}, 1, " now claude      \ta\\nb"},
		{history.Entry{Text: "x", TS: at(3 * time.Minute)}, 5, "  3m pi        ×5\tx"},
		{history.Entry{Text: "x", TS: at(5 * time.Hour), Src: "opencode"}, 123, "  5h opencode×123\tx"},
		{history.Entry{Text: "x", TS: at(50 * 24 * time.Hour), Src: "\x1b[31m"}, 0, " 50d other       \tx"},
		{history.Entry{Text: "x", TS: at(150 * 24 * time.Hour), Src: "codex"}, 2, " 5mo codex     ×2\tx"},
		{history.Entry{Text: "x", TS: at(800 * 24 * time.Hour), Src: "cursor"}, 1, "  2y cursor      \tx"},
		{history.Entry{Text: "x", TS: now.Add(time.Hour).UnixMilli(), Src: "pi"}, 1, " now pi          \tx"},
	} {
		if got := item(tc.e, tc.uses, now); got != tc.want {
			t.Errorf("item(%+v, %d) = %q, want %q", tc.e, tc.uses, got, tc.want)
		}
	}
	if got := expandTabs("a\tb\n\tc é\td"); got != "a       b\n        c é     d" {
		t.Errorf("expandTabs = %q", got)
	}
}

// The agent key cycles: every agent, each agent met in List's order,
// every agent again; several agents (--src) go to every agent.
func TestNextAgent(t *testing.T) {
	met := map[string]bool{"codex": true, "pi": true, "other": true}
	var got []string
	src := []string(nil)
	for range 4 {
		src = nextAgent(src, met)
		got = append(got, strings.Join(src, ","))
	}
	if strings.Join(got, " ") != "pi codex  pi" {
		t.Errorf("cycle: %q", got)
	}
	if s := nextAgent([]string{"claude", "codex"}, met); s != nil {
		t.Errorf("after two agents: %q", s)
	}
	if s := nextAgent([]string{"claude"}, met); strings.Join(s, ",") != "codex" {
		t.Errorf("after claude (not met): %q", s)
	}
}

// The header's status: the order (relevance while a query is typed and
// sorting is on), the agent filter, the other filters.
func TestStatus(t *testing.T) {
	p := &picker{cfg: Config{Filters: []string{"since 7d", "session a\x1bb"}}}
	if got := p.status(""); got != "newest first · since 7d · session a␛b" {
		t.Errorf("status %q", got)
	}
	p.src, p.frecent = []string{"claude"}, true
	if got := p.status(""); got != "most used · claude · since 7d · session a␛b" {
		t.Errorf("status %q", got)
	}
	if got := p.status("q"); !strings.HasPrefix(got, "relevance · claude") {
		t.Errorf("status with a query %q", got)
	}
	p.noSort = true
	if got := p.status("q"); !strings.HasPrefix(got, "most used · claude") {
		t.Errorf("status with a query, sorting off %q", got)
	}
}

func TestRow(t *testing.T) {
	for in, want := range map[string]string{
		"plain text":             "plain text",
		"two\nlines":             `two\nlines`,
		"crlf\r\nline":           `crlf\nline`,
		"tab\there":              "tab\there",
		"esc\x1b[31mred":         "esc␛[31mred",
		"bell\a del\x7f":         "bell␇ del␡",
		"café ✓":                 "café ✓",
		"bad \xff byte":          "bad <0xFF> byte",
		"c1 \u009b control":      "c1 <U+009B> control",
		"rlo \u202e zw\u200b":    "rlo <U+202E> zw<U+200B>",
		"trailing newline\n":     `trailing newline\n`,
		"\n  indented\n\tlines ": "\\n  indented\\n\tlines ",
	} {
		if got := row(in); got != want {
			t.Errorf("Row(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestResumeCommand(t *testing.T) {
	const refused = "refused"
	// The agents a case below resumes: exactly those of agent.List with a
	// resume command.
	resumed := map[string]bool{}
	for _, tc := range []struct {
		src, session, cwd string
		sh                shellquote.Shell
		want              string
	}{
		{"pi", "0199-abc", "", shellquote.Any, "pi --session 0199-abc"},
		{"claude", "8c3c3ce8-03db", "/home/me/proj", shellquote.POSIX, "cd /home/me/proj && claude --resume 8c3c3ce8-03db"},
		{"codex", "019a-x", "/w/client 01/app", shellquote.POSIX, "cd '/w/client 01/app' && codex resume 019a-x"},
		{"cursor", "c1", "", shellquote.Fish, "cursor-agent --resume c1"},
		{"opencode", "ses_1", "", shellquote.Fish, "opencode -s ses_1"},
		// The folder is quoted for the shell that runs the command.
		{"pi", "s.1:2", `/w/x\'; touch P; echo \`, shellquote.POSIX, `cd '/w/x\'\''; touch P; echo \' && pi --session s.1:2`},
		{"pi", "s.1:2", `/w/x\'; touch P; echo \`, shellquote.Fish, `cd '/w/x\\\'; touch P; echo \\' && pi --session s.1:2`},
		{"pi", "s.1:2", `/w/x\'; touch P; echo \`, shellquote.Any, `cd '/w/x'\\\''; touch P; echo '\\ && pi --session s.1:2`},
		// A folder that is not an absolute path is not gone to.
		{"claude", "s", "-P", shellquote.POSIX, "claude --resume s"},
		// Ids that are not plain ids are refused.
		{"claude", "x'; rm -rf ~", "", shellquote.POSIX, refused},
		{"pi", `x\'; touch /tmp/PWNED; echo \`, "/p", shellquote.Fish, refused},
		{"claude", "--dangerously-skip-permissions", "/p", shellquote.POSIX, refused},
		{"codex", "--", "", shellquote.POSIX, refused},
		{"codex", "-", "", shellquote.POSIX, refused},
		{"opencode", "a b", "", shellquote.POSIX, refused},
		{"opencode", "a\nb", "", shellquote.POSIX, refused},
		{"cursor", "a$b", "", shellquote.POSIX, refused},
		{"claude", "", "/p", shellquote.POSIX, ""},
		{"", "s", "", shellquote.POSIX, ""},
		{"unknown", "s", "", shellquote.POSIX, ""},
	} {
		got, err := ResumeCommand(tc.src, tc.session, tc.cwd, tc.sh)
		if err == nil {
			resumed[tc.src] = true
		}
		switch {
		case tc.want == refused:
			if err == nil || err == errNoSession || got != "" || !strings.Contains(err.Error(), "is not a plain id") {
				t.Errorf("ResumeCommand(%q, %q, %q) = %q, %v; want a refusal", tc.src, tc.session, tc.cwd, got, err)
			}
		case tc.want == "":
			if err != errNoSession || got != "" {
				t.Errorf("ResumeCommand(%q, %q, %q) = %q, %v; want errNoSession", tc.src, tc.session, tc.cwd, got, err)
			}
		case got != tc.want || err != nil:
			t.Errorf("ResumeCommand(%q, %q, %q, %d) = %q, %v; want %q", tc.src, tc.session, tc.cwd, tc.sh, got, err, tc.want)
		}
	}
	for _, a := range agent.List {
		if (a.Resume != nil) != resumed[a.Name] {
			t.Errorf("agent %q: resume command %q, but resumed by a case here: %v", a.Name, a.Resume, resumed[a.Name])
		}
		if got := preview(history.Entry{Src: a.Name}, "", "", shellquote.POSIX, time.Now()); !strings.Contains(got, "Agent    "+a.Display+" (imported)\n") {
			t.Errorf("%q's preview:\n%s", a.Name, got)
		}
		delete(resumed, a.Name)
	}
	for src := range resumed {
		t.Errorf("%q is resumed but is not in agent.List", src)
	}
	if got := preview(history.Entry{Src: "unknown"}, "", "", shellquote.POSIX, time.Now()); !strings.Contains(got, "Agent    unknown (imported)\n") {
		t.Errorf("an unknown source is shown as it is:\n%s", got)
	}
}

func TestPreview(t *testing.T) {
	now := time.Date(2025, 6, 2, 12, 0, 0, 0, time.Local)
	ts := time.Date(2025, 6, 2, 9, 30, 0, 0, time.Local).UnixMilli()
	got := preview(history.Entry{Text: "fix it\nplease\x1b[2J", TS: ts, Project: "abcd", Src: "claude", Session: "s-1", File: "/s/seed.jsonl"}, "/home/me/p", "ctrl-o", shellquote.POSIX, now)
	for _, w := range []string{
		"Time     2025-06-02 09:30:00 (2h ago)\n", "Project  /home/me/p\n", "Agent    Claude Code (imported)\n",
		"Session  s-1\n", "Resume   cd /home/me/p && claude --resume s-1   (ctrl-o prints it)\n", "fix it\nplease␛[2J\n",
	} {
		if !strings.Contains(got, w) {
			t.Errorf("preview lacks %q:\n%s", w, got)
		}
	}
	got = preview(history.Entry{Text: "typed", TS: ts}, "", "ctrl-o", shellquote.POSIX, now)
	if strings.Contains(got, "Agent") || strings.Contains(got, "Resume") || !strings.Contains(got, "history-global.jsonl") {
		t.Errorf("a global captured prompt's preview:\n%s", got)
	}
	got = preview(history.Entry{Text: "t", TS: ts, Project: "abcd", Src: "claude", Session: "--dangerously-skip-permissions"}, "", "ctrl-o", shellquote.POSIX, now)
	if !strings.Contains(got, `Resume   refused: the session id "--dangerously-skip-permissions" is not a plain id`) || strings.Contains(got, "claude --resume") {
		t.Errorf("a hostile id's preview:\n%s", got)
	}
}

func TestWrapArgAndParseCmd(t *testing.T) {
	for _, s := range []string{"plain", "with (parens)", "()[]{}<>~~", "Store delete failed; nothing was removed."} {
		w := wrapArg(s)
		if w[1:len(w)-1] != s || strings.ContainsAny(s, w[:1]) || strings.ContainsAny(s, w[len(w)-1:]) {
			t.Errorf("wrapArg(%q) = %q", s, w)
		}
		// fzf parses it back.
		if _, err := fzf.ParseOptions(false, []string{"--bind=x:change-footer" + w + "+change-header:a\nb"}); err != nil {
			t.Errorf("fzf rejects %q: %v", w, err)
		}
	}
	n, verb, arg, err := parseCmd("12 preview '345'")
	if err != nil || n != 12 || verb != "preview" || arg != "345" {
		t.Errorf("parseCmd = %d %q %q %v", n, verb, arg, err)
	}
	if _, _, arg, _ := parseCmd("3 pick ''"); arg != "" {
		t.Errorf("empty placeholder: %q", arg)
	}
	if _, _, _, err := parseCmd("x"); err == nil {
		t.Error("parseCmd accepted a short command")
	}
}

// Every argument list the selector hands fzf parses.
func TestPassArgsParse(t *testing.T) {
	p := &picker{cfg: Config{ResumeKey: "ctrl-o", DeleteKeys: []string{"ctrl-delete", "alt-d"}}, exe: "/bin/hist-pick", cols: 100}
	l := &list{all: true}
	r := &run{n: 1, list: l, footer: "a notice (with parens); and more"}
	for name, args := range map[string][]string{
		"normal": p.normalArgs(r, "a query"),
		"armed":  p.armedArgs(&run{n: 2, armed: true, list: l, arm: decision{pos: 3, query: "q"}}),
	} {
		if _, err := fzf.ParseOptions(false, args); err != nil {
			t.Errorf("%s pass: fzf rejects its arguments: %v", name, err)
		}
	}
	for _, k := range armedIgnore {
		if _, err := fzf.ParseOptions(false, []string{"--bind=" + k + ":ignore"}); err != nil {
			t.Errorf("armed pass ignores %q, which fzf cannot bind: %v", k, err)
		}
	}
}

// Without a resume key (hist-pick --no-resume-key) nothing binds one and
// neither the header nor the preview names one; the arguments still parse.
func TestNoResumeKey(t *testing.T) {
	p := &picker{cfg: Config{DeleteKeys: []string{"ctrl-delete", "alt-d"}}, exe: "/bin/hist-pick", cols: 100}
	l := &list{all: true}
	normal := p.normalArgs(&run{n: 1, list: l}, "")
	armed := p.armedArgs(&run{n: 2, armed: true, list: l, arm: decision{pos: 3, query: "q"}})
	for name, args := range map[string][]string{"normal": normal, "armed": armed} {
		if _, err := fzf.ParseOptions(false, args); err != nil {
			t.Errorf("%s pass: fzf rejects its arguments: %v", name, err)
		}
		for _, a := range args {
			if strings.Contains(a, "resume") || strings.HasPrefix(a, "--bind=:") {
				t.Errorf("%s pass: %q", name, a)
			}
		}
	}
	p.cols = 200
	if h := p.footer(&run{}); strings.Contains(h, "resume") || !strings.Contains(h, "enter pick · tab scope") {
		t.Errorf("hint %q", h)
	}
	pv := preview(history.Entry{Text: "x", TS: 1, Project: "p", Src: "pi", Session: "s1"}, "/w", "", shellquote.Any, time.UnixMilli(1))
	if !strings.Contains(pv, "Resume   cd /w && pi --session s1\n") || strings.Contains(pv, "prints it") {
		t.Errorf("preview:\n%s", pv)
	}
}

// The preview's fields are one line each, whatever the folder name holds;
// the prompt keeps its lines; nothing in either drives the terminal.
func TestPreviewHostile(t *testing.T) {
	now := time.Date(2025, 6, 2, 12, 0, 0, 0, time.Local)
	it := history.Entry{Text: "a\x1b]0;t\a\nb\u202ec", TS: now.UnixMilli(), Project: "abcd", Src: "pi", Session: "s-1"}
	got := preview(it, "/p\nSession  fake\x1b[2J\u200b", "ctrl-o", shellquote.Bash, now)
	for _, want := range []string{
		"Project  /p\\nSession  fake␛[2J<U+200B>\n",
		"Resume   cd /p$'\\n''Session  fake'$'\\e''[2J'$'\\xe2\\x80\\x8b' && pi --session s-1   (ctrl-o prints it)\n",
		"────────\na␛]0;t␇\nb<U+202E>c\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the preview lacks %q:\n%s", want, got)
		}
	}
	if i, _ := termsafe.Cut(strings.ReplaceAll(got, "\n", "")); i < len(strings.ReplaceAll(got, "\n", "")) {
		t.Errorf("the preview holds a character a terminal would act on: %q", got)
	}
}
