// Package shell holds hist-pick's key bindings for bash, zsh and fish
// (the files beside this one), which `hist-pick --shell NAME` prints.
package shell

import (
	"embed"
	"sort"
	"strings"
)

//go:embed hist-pick.bash hist-pick.zsh hist-pick.fish
var files embed.FS

// Script returns the key binding script for shell ("bash", "zsh", "fish").
func Script(shell string) (string, bool) {
	b, err := files.ReadFile("hist-pick." + shell)
	if err != nil {
		return "", false
	}
	return string(b), true
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
