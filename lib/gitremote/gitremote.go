// Package gitremote finds the git remote of a folder, so that the same
// repository checked out at different paths (on different machines) is one
// project (docs/sync.md). It reads the repository's config file itself:
// git is never run.
package gitremote

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"

	"hist/lib/atomicfile"
)

// maxConfig bounds the config file read: a bigger one is not a config
// that git wrote.
const maxConfig = 1 << 20

// Identity returns the identity of dir's repository and dir's place in
// it: "git:<host>/<path>" of its remote ("origin", or the only remote),
// then "//<sub>" when dir is a subfolder of the work tree. ok is false
// when dir is in no repository or the repository has no usable remote.
// dir must be canonical (absolute, symbolic links resolved).
func Identity(dir string) (id string, ok bool) {
	top, remote := Repo(dir)
	return Sub(remote, top, dir), remote != ""
}

// Sub is the identity of the folder dir in the work tree top of a
// repository whose remote is remote.
func Sub(remote, top, dir string) string {
	if rel, err := filepath.Rel(top, dir); err == nil && rel != "." && remote != "" {
		return remote + "//" + filepath.ToSlash(rel)
	}
	return remote
}

// Repo returns the top folder of the work tree that holds dir ("" when
// dir is in no repository) and the identity of its remote,
// "git:<host>/<path>" ("" when it has no usable remote). dir must be
// canonical.
func Repo(dir string) (top, remote string) {
	top, gitdir := find(dir)
	if top == "" {
		return "", ""
	}
	url, ok := remoteURL(gitdir)
	if norm, ok2 := Normalize(url); ok && ok2 {
		return top, "git:" + norm
	}
	return top, ""
}

// Top returns the top folder of the work tree that holds dir, or "" when
// dir is in no repository.
func Top(dir string) string {
	top, _ := find(dir)
	return top
}

// find returns the work tree's top folder holding dir and its git folder
// (where config is), or "" when dir is in no repository.
func find(dir string) (top, gitdir string) {
	for d := dir; ; d = filepath.Dir(d) {
		p := filepath.Join(d, ".git")
		fi, err := os.Stat(p)
		switch {
		case err == nil && fi.IsDir():
			return d, p
		case err == nil && fi.Mode().IsRegular():
			// A worktree or a submodule: "gitdir: <path>".
			if g := readGitdirFile(p); g != "" {
				if !filepath.IsAbs(g) {
					g = filepath.Join(d, g)
				}
				return d, commonDir(g)
			}
			return "", ""
		}
		if filepath.Dir(d) == d {
			return "", ""
		}
	}
}

func readGitdirFile(p string) string {
	b, err := readSmall(p)
	line, _, _ := bytes.Cut(b, []byte("\n"))
	g, ok := bytes.CutPrefix(bytes.TrimSpace(line), []byte("gitdir:"))
	if err != nil || !ok {
		return ""
	}
	return string(bytes.TrimSpace(g))
}

// commonDir returns the folder that holds a linked worktree's shared
// config ("commondir"), or g itself.
func commonDir(g string) string {
	b, err := readSmall(filepath.Join(g, "commondir"))
	if err != nil {
		return g
	}
	c := strings.TrimSpace(string(b))
	if !filepath.IsAbs(c) {
		c = filepath.Join(g, c)
	}
	return filepath.Clean(c)
}

// readSmall reads a file of the user's repository: anything but a
// regular file (a FIFO would block a capture hook), and anything over
// maxConfig, is refused without reading it.
func readSmall(p string) ([]byte, error) { return atomicfile.ReadLimited(p, maxConfig) }

// remoteURL reads the url of remote "origin" from gitdir's config, or of
// the only remote there is.
func remoteURL(gitdir string) (string, bool) {
	b, _ := readSmall(filepath.Join(gitdir, "config")) // nothing when unreadable: no remote
	urls := map[string]string{}
	var section string
	for line := range strings.Lines(string(b)) {
		line = strings.TrimSpace(line)
		switch {
		case line == "" || line[0] == '#' || line[0] == ';':
		case line[0] == '[':
			section = ""
			if name, ok := strings.CutPrefix(strings.TrimSuffix(line, "]"), "[remote "); ok {
				section = strings.Trim(strings.TrimSpace(name), `"`)
			}
		case section != "":
			k, v, ok := strings.Cut(line, "=")
			if ok && strings.EqualFold(strings.TrimSpace(k), "url") {
				if _, seen := urls[section]; !seen {
					urls[section] = strings.Trim(strings.TrimSpace(v), `"`)
				}
			}
		}
	}
	if u, ok := urls["origin"]; ok {
		return u, true
	}
	if len(urls) == 1 {
		for _, u := range urls {
			return u, true
		}
	}
	return "", false
}

// Normalize reduces a remote URL to "<host>/<path>": no scheme, user,
// password or port, the host in lower case, no trailing ".git" or "/".
// The forms git takes: scheme://[user@]host[:port]/path and the scp-like
// [user@]host:path. A local path is not a remote: ok is false.
func Normalize(url string) (string, bool) {
	host, path, ok := strings.Cut(url, ":")
	if scheme, rest, isURL := strings.Cut(url, "://"); isURL {
		if scheme == "file" {
			return "", false
		}
		host, path, _ = strings.Cut(rest, "/")
	} else if !ok || strings.ContainsRune(host, '/') {
		return "", false // a local path
	}
	host = strings.ToLower(host[strings.LastIndexByte(host, '@')+1:])
	if h, _, ok := strings.Cut(host, ":"); ok && !strings.HasPrefix(host, "[") {
		host = h // the port
	}
	path = strings.TrimSuffix(strings.TrimSuffix(strings.Trim(path, "/"), ".git"), "/")
	if host == "" || path == "" {
		return "", false
	}
	return host + "/" + path, true
}
