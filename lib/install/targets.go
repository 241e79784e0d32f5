package install

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"hist/lib/atomicfile"
	"hist/lib/shellquote"
	integrations "hist/scripts"
)

// target is one agent's integration: files copied into its folder (the
// agent's Config), and hook entries added to its settings files.
type target struct {
	copies []copied
	hooks  []hooked
	note   string // added to the line of a hook added
}

// copied is a file installed whole, with the folder of the hist binaries
// written into its line that names it (binLine).
type copied struct {
	rel  string // under the agent's folder, with /
	data []byte // the template, as in scripts/
	mode os.FileMode
	what string // "the extension", for messages
	sh   bool   // the line is sh's dir=${HIST_BIN_DIR:-DIR}, else JavaScript's const installedBinDir = "DIR";
}

// hooked is a settings file that gets one hook entry.
type hooked struct {
	rel    string
	event  string // the array under "hooks"
	cursor bool   // Cursor's shape: {"command": script}, in a file that starts with "version": 1
}

var targets = map[string]target{
	"pi": {
		copies: []copied{{"extensions/hist.ts", integrations.PiExtension, atomicfile.FilePerm, "the extension", false}},
	},
	"claude": {hooks: []hooked{{rel: "settings.json", event: "UserPromptSubmit"}}},
	"codex": {
		hooks: []hooked{{rel: "hooks.json", event: "UserPromptSubmit"}},
		note:  `; trust it once: start codex and choose "Trust all and continue"`,
	},
	"cursor": {
		copies: []copied{{"hooks/hist-capture.sh", integrations.CursorHook, 0o700, "the hook script", true}},
		hooks:  []hooked{{rel: "hooks.json", event: "beforeSubmitPrompt", cursor: true}},
	},
	"opencode": {
		copies: []copied{{"plugin/hist.js", integrations.OpencodePlugin, atomicfile.FilePerm, "the plugin", false}},
	},
}

// Targets are the agents --install wires, sorted.
func Targets() []string { return slices.Sorted(maps.Keys(targets)) }

// binLine is c's line that names the folder of the hist binaries, split
// around the folder, which is empty in the template (a copy made by hand
// finds them on PATH, or in $HIST_BIN_DIR).
func (c copied) binLine() (prefix, empty, suffix string) {
	if c.sh {
		return "dir=${HIST_BIN_DIR:-", "", "}"
	}
	return "const installedBinDir = ", `""`, ";"
}

// fill is the copy with dir written into its binaries' line.
func (c copied) fill(dir string) []byte {
	pre, empty, suf := c.binLine()
	q := jsonString(dir)
	if c.sh {
		q = shellquote.Quote(dir, shellquote.POSIX)
	}
	return bytes.Replace(c.data, []byte("\n"+pre+empty+suf+"\n"), []byte("\n"+pre+q+suf+"\n"), 1)
}

// binDir reads a file installed from c: the folder its binaries' line
// names ("" for PATH), and whether the file is c with some folder written
// in (hist's own, of this version).
func (c copied) binDir(data []byte) (string, bool) {
	pre, empty, suf := c.binLine()
	i := bytes.Index(c.data, []byte("\n"+pre+empty+suf+"\n")) + 1
	head, tail := c.data[:i], c.data[i+len(pre+empty+suf):]
	if len(data) < len(head)+len(tail) || !bytes.HasPrefix(data, head) || !bytes.HasSuffix(data, tail) {
		return "", false
	}
	v, ok := strings.CutPrefix(string(data[len(head):len(data)-len(tail)]), pre)
	v, ok2 := strings.CutSuffix(v, suf)
	switch {
	case !ok || !ok2 || strings.Contains(v, "\n"):
		return "", false
	case !c.sh:
		var s string
		return s, json.Unmarshal([]byte(v), &s) == nil
	case v == "":
		return "", true
	}
	return unquoteWord(v)
}

// Executable is the hist-capture the hooks --install writes are to run:
// this process's own file by its absolute path, symbolic links resolved,
// so that a hook runs whatever the agent's PATH. A binary of `go run`,
// gone when it exits, is refused.
func Executable() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("finding this binary's path: %v: run the installed hist-capture by its full path", err)
	}
	if p, err := filepath.EvalSymlinks(exe); err == nil {
		exe = p
	}
	if isGoRunTemp(exe) {
		return "", fmt.Errorf("%s is a temporary build of 'go run', gone when it exits: install the binaries first (go install ./cmd/...), then run the installed hist-capture --install", exe)
	}
	return exe, nil
}

// isGoRunTemp reports whether path is a binary that `go run` built: it
// lives in <tmp>/go-build<digits>/b<digits>/exe/.
func isGoRunTemp(path string) bool {
	dir := filepath.Dir(path)
	return filepath.Base(dir) == "exe" && strings.Contains(filepath.ToSlash(filepath.Dir(dir)), "/go-build")
}

// hookCommand is the command of Claude Code's and Codex's hook, which
// they run with sh -c.
func hookCommand(exe string) string { return shellquote.Quote(exe, shellquote.POSIX) + " --hook" }

// cursorScript is the command of Cursor's hook entry: the script
// --install copies, run from Cursor's folder.
const cursorScript = "./hooks/hist-capture.sh"

// ownCommand reports whether command is one that --install writes (or
// wrote before), or scripts/ gives for installing by hand: "hist-capture
// --hook", one word naming a hist-capture by its absolute path (or under
// "$HOME/") followed by --hook, or Cursor's script; and the binary it
// runs, as written. A command that does more (`audit && hist-capture
// --hook`) is the user's own: reported, never changed.
func ownCommand(command string) (bin string, ok bool) {
	c := strings.TrimSpace(command)
	if c == cursorScript {
		return "", true
	}
	word, ok := strings.CutSuffix(c, " --hook")
	if !ok {
		w, ok := unquoteWord(c)
		return "", ok && strings.HasSuffix(w, "/hooks/hist-capture.sh")
	}
	w, ok := unquoteWord(strings.TrimRight(word, " \t"))
	abs := filepath.IsAbs(w) || strings.HasPrefix(w, homeVar+"/")
	return w, ok && (w == "hist-capture" || abs && filepath.Base(w) == "hist-capture")
}

// homeVar may start a hook's binary: sh expands it.
const homeVar = "$HOME"

// expandHome is bin with a leading $HOME replaced by home.
func expandHome(bin, home string) string {
	if rest, ok := strings.CutPrefix(bin, homeVar); ok {
		return home + rest
	}
	return bin
}

// unquoteWord reads s as one POSIX shell word of plain characters,
// 'single-quoted' runs, "double-quoted" runs without $, ` or \, and
// backslash escapes, and returns its value; anything else (spaces,
// operators, expansions) is not. Only $HOME may start it, unquoted or in
// double quotes: it stays in the value as written.
func unquoteWord(s string) (string, bool) {
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
				return "", false
			}
			b.WriteString(s[i+1 : i+1+j])
			i += j + 1
		case c == '\\' && i+1 < len(s):
			b.WriteByte(s[i+1])
			i++
		case shellquote.Plain(string(c)) || c == '~' || c == '=' || c == '%':
			b.WriteByte(c)
		default:
			return "", false
		}
	}
	return b.String(), b.Len() > 0
}
