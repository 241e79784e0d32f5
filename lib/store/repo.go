package store

import (
	"path/filepath"
	"slices"
	"strings"

	"hist/lib/gitremote"
)

// ProjectScope is the project scope of the canonical folder canon
// (docs/hist-pick.md, "Scopes"), and repo the work tree's top: outside a
// git repository the folder's project (ProjectOf); inside one the whole
// repository, whose folders are captured under their own hashes, found by
// name: the folders from canon up to the top, every folder a registry
// names in the work tree but not in a repository nested in it (a home
// folder in git does not take in the repositories under it), and, with a
// remote, every folder a registry names under the hash of a folder of the
// same remote (another checkout, machine or worktree); each if the store
// holds it.
func (s Store) ProjectScope(canon string) (sc Scope, repo string) {
	hash, also := ProjectOf(canon)
	top, remote := gitremote.Repo(canon)
	if top == "" {
		return Scope{Project: hash, Also: also}, ""
	}
	in := map[string]bool{hash: true}
	for _, h := range also {
		in[h] = true
	}
	add := func(h string) {
		if !in[h] && s.HasProject(h) {
			in[h] = true
			also = append(also, h)
		}
	}
	for d := canon; ; d = filepath.Dir(d) {
		add(Hash(d))
		if remote != "" {
			add(Hash(gitremote.Sub(remote, top, d)))
		}
		if d == top || filepath.Dir(d) == d {
			break
		}
	}
	for h, dir := range s.LoadRegistry() {
		if !in[h] && (within(dir, top) && gitremote.Top(dir) == top || remote != "" && ofRemote(h, dir, remote)) {
			add(h)
		}
	}
	slices.Sort(also)
	return Scope{Project: hash, Also: also}, top
}

// within reports whether the folder dir is top or in it: "/src/app-old"
// is not in "/src/app".
func within(dir, top string) bool {
	if dir == top {
		return true
	}
	if !strings.HasSuffix(top, string(filepath.Separator)) {
		top += string(filepath.Separator)
	}
	return strings.HasPrefix(dir, top)
}

// ofRemote reports whether hash is the project of dir (a folder of any
// machine, / or \ separated) as a subfolder of a checkout of remote: the
// hash of remote's identity with some tail of dir's path (each checkout's
// top has remote's own hash, which the walk up to the top adds).
func ofRemote(hash, dir, remote string) bool {
	parts := strings.FieldsFunc(dir, func(r rune) bool { return r == '/' || r == '\\' })
	for i := len(parts) - 1; i >= 0; i-- {
		if Hash(remote+"//"+strings.Join(parts[i:], "/")) == hash {
			return true
		}
	}
	return false
}
