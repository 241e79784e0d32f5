package store

import (
	"path/filepath"
	"slices"
	"strings"

	"hist/lib/gitremote"
)

// ProjectScope is the project scope of the folder canon (canonical), as
// hist-list, hist-pick, hist-delete and hist-compact read it
// (docs/hist-pick.md, "Scopes"). Outside a git repository it is the
// folder's project (ProjectOf). Inside one it is the whole repository:
// the project of every folder in its work tree, each captured under its
// own hash as before (a session resumes in its own folder). They are
// found by name: the folders from canon up to the work tree's top, and
// every folder that a machine's registry file names in the work tree but
// not in a repository nested in it (a home folder kept in git does not
// take in the repositories under it);
// and, for a repository with a remote, every folder a registry names
// whose hash is that of a folder of the same remote (another checkout,
// on this machine or another, a linked worktree). Only folders the store
// holds are added. repo is the work tree's top folder ("" outside a
// repository).
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
			add(Hash(remoteID(remote, top, d)))
		}
		if d == top || filepath.Dir(d) == d {
			break
		}
	}
	for h, dir := range s.LoadRegistry() {
		if !in[h] && (Within(dir, top) && gitremote.Top(dir) == top || remote != "" && ofRemote(h, dir, remote)) {
			add(h)
		}
	}
	slices.Sort(also)
	return Scope{Project: hash, Also: also}, top
}

// remoteID is the identity of the folder d in the work tree top of a
// repository whose remote is remote (gitremote.Identity).
func remoteID(remote, top, d string) string {
	if rel, err := filepath.Rel(top, d); err == nil && rel != "." {
		return remote + "//" + filepath.ToSlash(rel)
	}
	return remote
}

// Within reports whether the folder dir is top or in it: "/src/app-old"
// is not in "/src/app".
func Within(dir, top string) bool {
	if dir == top {
		return true
	}
	if !strings.HasSuffix(top, string(filepath.Separator)) {
		top += string(filepath.Separator)
	}
	return strings.HasPrefix(dir, top)
}

// ofRemote reports whether hash is the project of dir (a folder of any
// machine, with / or \ separators) as a folder of a checkout of remote:
// the hash of remote's identity with some tail of dir's path as its
// subfolder (every checkout's top has remote's own hash, which the
// folders up to this checkout's top include).
func ofRemote(hash, dir, remote string) bool {
	parts := strings.FieldsFunc(dir, func(r rune) bool { return r == '/' || r == '\\' })
	for i := len(parts) - 1; i >= 0; i-- {
		if Hash(remote+"//"+strings.Join(parts[i:], "/")) == hash {
			return true
		}
	}
	return false
}
