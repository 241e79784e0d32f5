package install

import (
	"bytes"
	"encoding/json"
	"os"
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

// copied is a file installed by copying it whole, with the folder of the
// hist binaries written into its one line that names it (binLine).
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
	"claude": {
		hooks: []hooked{{rel: "settings.json", event: "UserPromptSubmit"}},
	},
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
func Targets() []string {
	var names []string
	for n := range targets {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// binLine is c's line that names the folder of the hist binaries,
// split around the folder, which is empty in the template: a copy made
// by hand then finds them on PATH, or in $HIST_BIN_DIR.
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
// names ("" for none: PATH), and whether the file is c with some folder
// written in (hist's own, of this version).
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
	w, err := unquoteWord(v)
	return w, err == nil
}
