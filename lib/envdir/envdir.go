// Package envdir reads a folder from an environment variable the way the
// agents and hist's own store both do: surrounding white space trimmed,
// and a leading "~" expanded as a shell would.
package envdir

import (
	"path/filepath"
	"strings"
)

// Get is the folder that variable name gives ("" when it is unset or
// blank). getenv may be nil (no variable is set).
func Get(getenv func(string) string, name, home string) string {
	if getenv == nil {
		return ""
	}
	return Expand(strings.TrimSpace(getenv(name)), home)
}

// Expand replaces a leading "~" of p (alone or before "/") with home;
// any other p is returned as it is.
func Expand(p, home string) string {
	switch {
	case p == "~":
		return home
	case strings.HasPrefix(p, "~/"):
		return filepath.Join(home, p[2:])
	}
	return p
}
