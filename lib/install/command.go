package install

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"hist/lib/shellquote"
)

// Executable is the hist-capture binary that the hooks --install writes
// are to run: this process's own file, by its absolute path with symbolic
// links resolved, so that a hook runs whatever the PATH of the agent that
// starts it. A binary that `go run` built in a temporary folder, which
// vanishes when it exits, is refused.
func Executable() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("finding this binary's path: %v: run the installed hist-capture by its full path", err)
	}
	if p, err := filepath.EvalSymlinks(exe); err == nil {
		exe = p
	}
	if IsGoRunTemp(exe) {
		return "", fmt.Errorf("%s is a temporary build of 'go run', gone when it exits: install the binaries first (go install ./cmd/...), then run the installed hist-capture --install", exe)
	}
	return exe, nil
}

// IsGoRunTemp reports whether path is a binary that `go run` built: it
// lives in <tmp>/go-build<digits>/b<digits>/exe/.
func IsGoRunTemp(path string) bool {
	dir := filepath.Dir(path)
	if filepath.Base(dir) != "exe" {
		return false
	}
	for d := filepath.Dir(dir); d != filepath.Dir(d); d = filepath.Dir(d) {
		if strings.HasPrefix(filepath.Base(d), "go-build") {
			return true
		}
	}
	return false
}

// HookCommand is the command written into Claude Code's and Codex's hook
// settings, which they run with sh -c: exe quoted for the shell, then
// --hook.
func HookCommand(exe string) string {
	return shellquote.Quote(exe, shellquote.POSIX) + " --hook"
}

// cursorScript is the command of Cursor's hook entry: the script
// --install copies, run from Cursor's folder.
const cursorScript = "./hooks/hist-capture.sh"

// ownCommand reports whether command is one that --install writes (or
// wrote before), or the one scripts/ gives for installing by hand:
// "hist-capture --hook", or one word naming a hist-capture binary by its
// absolute path (or under "$HOME/") followed by --hook, or Cursor's
// script; and, for the first two, the binary it runs, as written. A
// command that does more (`audit && hist-capture --hook`) is the user's
// own: it is reported, never rewritten or removed.
func ownCommand(command string) (bin string, ok bool) {
	c := strings.TrimSpace(command)
	if c == cursorScript {
		return "", true
	}
	word, ok := strings.CutSuffix(c, " --hook")
	if !ok {
		w, err := unquoteWord(c)
		return "", err == nil && strings.HasSuffix(w, "/hooks/hist-capture.sh")
	}
	w, err := unquoteWord(strings.TrimRight(word, " \t"))
	abs := filepath.IsAbs(w) || strings.HasPrefix(w, homeVar+"/")
	if err != nil || (w != "hist-capture" && !(abs && filepath.Base(w) == "hist-capture")) {
		return "", false
	}
	return w, true
}

// homeVar may start a hook's binary: sh expands it.
const homeVar = "$HOME"

// ExpandHome is bin with a leading $HOME replaced by home.
func ExpandHome(bin, home string) string {
	if rest, ok := strings.CutPrefix(bin, homeVar); ok {
		return home + rest
	}
	return bin
}

// unquoteWord reads s as one POSIX shell word made of plain characters,
// 'single-quoted' runs, "double-quoted" runs without $, ` or \, and
// backslash-escaped characters, and returns its value; anything else
// (spaces, operators, expansions) is an error. Only $HOME may start it,
// unquoted or in double quotes: it stays in the value as written.
func unquoteWord(s string) (string, error) {
	var b strings.Builder
	if rest, ok := strings.CutPrefix(s, `"`+homeVar); ok && strings.HasPrefix(rest, "/") {
		b.WriteString(homeVar)
		s = `"` + rest
	} else if rest, ok := strings.CutPrefix(s, homeVar+"/"); ok {
		b.WriteString(homeVar)
		s = "/" + rest
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\'' || c == '"':
			j := strings.IndexByte(s[i+1:], c)
			if j < 0 || c == '"' && strings.ContainsAny(s[i+1:i+1+j], "$`\\") {
				return "", fmt.Errorf("not one word")
			}
			b.WriteString(s[i+1 : i+1+j])
			i += j + 1
		case c == '\\' && i+1 < len(s):
			b.WriteByte(s[i+1])
			i++
		case shellquote.Plain(string(c)) || c == '~' || c == '=' || c == '%':
			b.WriteByte(c)
		default:
			return "", fmt.Errorf("not one word")
		}
	}
	if b.Len() == 0 {
		return "", fmt.Errorf("empty")
	}
	return b.String(), nil
}
