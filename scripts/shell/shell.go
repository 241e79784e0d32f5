// Package shell holds hist-pick's key bindings for bash, zsh and fish
// (the files beside this one), which `hist-pick --shell NAME [--key KEY]`
// prints.
package shell

import (
	"embed"
	"errors"
	"fmt"
	"sort"
	"strings"
)

//go:embed hist-pick.bash hist-pick.zsh hist-pick.fish
var files embed.FS

// DefaultKey is the key the bindings take unless told otherwise: pi's own
// key for its prompt selector.
const DefaultKey = "alt-r"

// KeyNames says which keys --key takes: the same in every shell.
const KeyNames = "ctrl-a to ctrl-z (not ctrl-c, ctrl-i, ctrl-j, ctrl-m or ctrl-z) or alt-a to alt-z"

// Script returns the key binding script for shell ("bash", "zsh", "fish"),
// binding key (an fzf key name, KeyNames) instead of DefaultKey. ok is
// false for a shell without a script; err says why key cannot be bound.
func Script(shell, key string) (script string, ok bool, err error) {
	b, err := files.ReadFile("hist-pick." + shell)
	if err != nil {
		return "", false, nil
	}
	from, _ := notation(shell, DefaultKey)
	to, err := notation(shell, key)
	if err != nil {
		return "", true, err
	}
	lines := strings.SplitAfter(string(b), "\n")
	for i, l := range lines {
		if t := strings.TrimSpace(l); strings.HasPrefix(t, "bind") {
			lines[i] = strings.Replace(l, from, to, 1)
		}
	}
	return strings.Join(lines, ""), true, nil
}

// notation is key as shell's binding commands write it, quotes included
// where the scripts have them.
func notation(shell, key string) (string, error) {
	mod, c, ok := strings.Cut(key, "-")
	if !ok || len(c) != 1 || c[0] < 'a' || c[0] > 'z' || mod != "ctrl" && mod != "alt" {
		return "", fmt.Errorf("not a key the bindings take: use %s", KeyNames)
	}
	if mod == "ctrl" && strings.Contains("cijmz", c) {
		return "", errors.New("the terminal or the line editor uses it (interrupt, tab, enter, suspend): choose another")
	}
	switch {
	case mod == "alt" && shell == "bash":
		return `"\e` + c + `"`, nil
	case mod == "alt" && shell == "zsh":
		return `'\e` + c + `'`, nil
	case mod == "alt":
		return `\e` + c, nil
	case shell == "bash":
		return `"\C-` + c + `"`, nil
	case shell == "zsh":
		return `'^` + strings.ToUpper(c) + `'`, nil
	}
	return `\c` + c, nil
}

// Names lists the shells there are scripts for.
func Names() []string {
	ents, _ := files.ReadDir(".")
	var out []string
	for _, e := range ents {
		out = append(out, strings.TrimPrefix(e.Name(), "hist-pick."))
	}
	sort.Strings(out)
	return out
}
