package store

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// A repository's project scope: its folders by path, a linked worktree's
// and another machine's checkout by the remote; not a folder named like a
// prefix of it, nor a repository nested in it.
func TestProjectScope(t *testing.T) {
	root, _ := filepath.EvalSymlinks(t.TempDir())
	app, wt := filepath.Join(root, "src", "app"), filepath.Join(root, "src", "app-wt")
	gitdir := filepath.Join(app, ".git")
	for _, d := range []string{filepath.Join(app, "sub"), filepath.Join(gitdir, "worktrees", "wt"), filepath.Join(wt, "docs"),
		filepath.Join(app, "vendor", "lib", ".git"), filepath.Join(root, "src", "app-old")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	write := func(path, data string) {
		if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(gitdir, "config"), "[remote \"origin\"]\n\turl = git@github.com:me/app.git\n")
	write(filepath.Join(wt, ".git"), "gitdir: "+filepath.Join(gitdir, "worktrees", "wt")+"\n")
	write(filepath.Join(gitdir, "worktrees", "wt", "commondir"), "../..\n")

	st := Store{Root: filepath.Join(root, "store"), Machine: "m1"}
	peer := Store{Root: st.Root, Machine: "m2"}
	folders := map[string]string{}
	register := func(s Store, dir, h string) string {
		if h == "" {
			h, _ = ProjectOf(dir)
		}
		if err := s.Register(h, dir); err != nil {
			t.Fatal(err)
		}
		if err := EnsureDir(s.ProjectDir(h)); err != nil {
			t.Fatal(err)
		}
		folders[dir] = h
		return h
	}
	for _, d := range []string{app, filepath.Join(app, "sub"), filepath.Join(wt, "docs"), filepath.Join(app, "vendor", "lib"), filepath.Join(root, "src", "app-old")} {
		register(st, d, "")
	}
	if h, _ := ProjectOf(filepath.Join(app, "sub")); h != Hash("git:github.com/me/app//sub") {
		t.Fatalf("the subfolder is not known by the remote: %s", h)
	}
	// Another machine's checkout, at a path this one does not have: its
	// capture hashed the remote's identity.
	peerOnly := register(peer, `C:\Users\me\code\app\tools`, Hash("git:github.com/me/app//tools"))

	sc, repo := st.ProjectScope(filepath.Join(app, "sub"))
	if repo != app {
		t.Errorf("repo %q, want %q", repo, app)
	}
	got := append([]string{sc.Project}, sc.Also...)
	for _, d := range []string{app, filepath.Join(app, "sub"), filepath.Join(wt, "docs")} {
		if !slices.Contains(got, folders[d]) {
			t.Errorf("%s is not in the scope", d)
		}
	}
	if !slices.Contains(got, peerOnly) {
		t.Error("the peer's checkout's tools folder is not in the scope")
	}
	for _, d := range []string{filepath.Join(app, "vendor", "lib"), filepath.Join(root, "src", "app-old")} {
		if slices.Contains(got, folders[d]) {
			t.Errorf("%s is in the scope", d)
		}
	}
	if sc, repo := st.ProjectScope(filepath.Join(root, "src", "app-old")); repo != "" || len(sc.Also) != 0 {
		t.Errorf("outside the repository: %+v, %q", sc, repo)
	}
}
