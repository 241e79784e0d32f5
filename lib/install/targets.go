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
// hist binaries written into its one template line.
type copied struct {
	rel  string // under the agent's folder, with /
	data []byte // the template, as in scripts/
	mode os.FileMode
	what string // "the extension", for messages
	line binLine
}

// binLine is the line of a copied file that names the folder of the hist
// binaries: prefix + value + suffix, the value empty in the template (the
// copy made by hand then finds them on PATH, or in $HIST_BIN_DIR).
type binLine struct {
	prefix, empty, suffix string
	quote                 func(dir string) string
	unquote               func(v string) (string, bool)
}

// hooked is a settings file that gets one hook entry.
type hooked struct {
	rel    string
	event  string // the array under "hooks"
	cursor bool   // Cursor's shape: {"command": script}, in a file that starts with "version": 1
}

var (
	jsLine = binLine{prefix: "const installedBinDir = ", empty: `""`, suffix: ";", quote: jsonString, unquote: func(v string) (string, bool) {
		var s string
		return s, json.Unmarshal([]byte(v), &s) == nil
	}}
	shLine = binLine{prefix: "dir=${HIST_BIN_DIR:-", suffix: "}", quote: func(dir string) string {
		return shellquote.Quote(dir, shellquote.POSIX)
	}, unquote: func(v string) (string, bool) {
		if v == "" {
			return "", true
		}
		w, err := unquoteWord(v)
		return w, err == nil
	}}
)

var targets = map[string]target{
	"pi": {
		copies: []copied{{"extensions/hist.ts", integrations.PiExtension, atomicfile.FilePerm, "the extension", jsLine}},
	},
	"claude": {
		hooks: []hooked{{rel: "settings.json", event: "UserPromptSubmit"}},
	},
	"codex": {
		hooks: []hooked{{rel: "hooks.json", event: "UserPromptSubmit"}},
		note:  `; trust it once: start codex and choose "Trust all and continue"`,
	},
	"cursor": {
		copies: []copied{{"hooks/hist-capture.sh", integrations.CursorHook, 0o700, "the hook script", shLine}},
		hooks:  []hooked{{rel: "hooks.json", event: "beforeSubmitPrompt", cursor: true}},
	},
	"opencode": {
		copies: []copied{{"plugin/hist.js", integrations.OpencodePlugin, atomicfile.FilePerm, "the plugin", jsLine}},
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

// fill is the copy with dir written into its binaries' line.
func (c copied) fill(dir string) []byte {
	tmpl := c.line.prefix + c.line.empty + c.line.suffix
	return bytes.Replace(c.data, []byte("\n"+tmpl+"\n"), []byte("\n"+c.line.prefix+c.line.quote(dir)+c.line.suffix+"\n"), 1)
}

// binDir reads a file installed from c: the folder its binaries' line
// names ("" for none: PATH), and whether the file is c with some folder
// written in (hist's own, of this version).
func (c copied) binDir(data []byte) (string, bool) {
	tmpl := c.line.prefix + c.line.empty + c.line.suffix
	want, got := strings.Split(string(c.data), "\n"), strings.Split(string(data), "\n")
	if len(want) != len(got) {
		return "", false
	}
	dir, found := "", false
	for i, w := range want {
		switch {
		case w == got[i]:
		case w == tmpl && !found && strings.HasPrefix(got[i], c.line.prefix) && strings.HasSuffix(got[i], c.line.suffix) &&
			len(got[i]) >= len(c.line.prefix)+len(c.line.suffix):
			v := got[i][len(c.line.prefix) : len(got[i])-len(c.line.suffix)]
			d, ok := c.line.unquote(v)
			if !ok {
				return "", false
			}
			dir, found = d, true
		default:
			return "", false
		}
	}
	return dir, true
}

// jsonString is s as a JSON string, with <, > and & as they are.
func jsonString(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(s) // a string always encodes
	return strings.TrimSuffix(b.String(), "\n")
}
