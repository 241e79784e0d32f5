package gitremote

import (
	"fmt"
	"hist/lib/store/storetest"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestNormalize(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"git@github.com:me/app.git", "github.com/me/app"},
		{"https://github.com/me/app", "github.com/me/app"},
		{"https://user:secret@GitHub.com/me/app.git/", "github.com/me/app"},
		{"ssh://git@github.com:22/me/app.git", "github.com/me/app"},
		{"git://example.org/team/app", "example.org/team/app"},
		{"github.com:me/app", "github.com/me/app"},
		{"/srv/git/app.git", ""},
		{"../app", ""},
		{"file:///srv/git/app.git", ""},
		{"https://github.com/", ""},
	} {
		got, ok := Normalize(c.in)
		if got != c.want || ok != (c.want != "") {
			t.Errorf("Normalize(%q) = %q, %v; want %q", c.in, got, ok, c.want)
		}
	}
}

func write(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestIdentity(t *testing.T) {
	root := t.TempDir()
	linux := filepath.Join(root, "home", "me", "src", "app")
	mac := filepath.Join(root, "Users", "me", "code", "app")
	write(t, filepath.Join(linux, ".git", "config"), "[core]\n\tbare = false\n[remote \"origin\"]\n\turl = git@github.com:me/app.git\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n")
	write(t, filepath.Join(mac, ".git", "config"), "[remote \"upstream\"]\n\turl = https://github.com/other/app\n[remote \"origin\"]\n\turl = https://github.com/me/app\n")
	os.MkdirAll(filepath.Join(linux, "sub", "dir"), 0o700)
	os.MkdirAll(filepath.Join(mac, "sub", "dir"), 0o700)
	a, ok1 := Identity(linux)
	b, ok2 := Identity(mac)
	if !ok1 || !ok2 || a != b || a != "git:github.com/me/app" {
		t.Errorf("the two checkouts: %q %v, %q %v", a, ok1, b, ok2)
	}
	sa, _ := Identity(filepath.Join(linux, "sub", "dir"))
	sb, _ := Identity(filepath.Join(mac, "sub", "dir"))
	if sa != sb || sa != "git:github.com/me/app//sub/dir" {
		t.Errorf("subfolders: %q, %q", sa, sb)
	}

	// A linked worktree: .git is a file naming its git folder, whose
	// commondir holds the config.
	wt := filepath.Join(root, "wt")
	write(t, filepath.Join(wt, ".git"), "gitdir: "+filepath.Join(linux, ".git", "worktrees", "wt")+"\n")
	write(t, filepath.Join(linux, ".git", "worktrees", "wt", "commondir"), "../..\n")
	if id, ok := Identity(wt); !ok || id != a {
		t.Errorf("worktree: %q %v", id, ok)
	}

	// No remote, several remotes without origin, no repository: none.
	noRemote := filepath.Join(root, "norem")
	write(t, filepath.Join(noRemote, ".git", "config"), "[core]\n\tbare = false\n")
	two := filepath.Join(root, "two")
	write(t, filepath.Join(two, ".git", "config"), "[remote \"a\"]\n\turl = https://x.org/a\n[remote \"b\"]\n\turl = https://x.org/b\n")
	for _, d := range []string{noRemote, two, filepath.Join(root, "plain")} {
		if id, ok := Identity(d); ok {
			t.Errorf("%s: %q", d, id)
		}
	}
	one := filepath.Join(root, "one")
	write(t, filepath.Join(one, ".git", "config"), "[remote \"fork\"]\n\turl = https://x.org/fork.git\n")
	if id, ok := Identity(one); !ok || id != "git:x.org/fork" {
		t.Errorf("the only remote: %q %v", id, ok)
	}
}

// A FIFO in place of the config, the commondir or the .git file is
// refused at once (no remote), never waited on; so is a config too large
// for git to have written.
func TestIdentityRefusesWhatIsNotAFile(t *testing.T) {
	root := t.TempDir()
	repo := filepath.Join(root, "repo")
	os.MkdirAll(filepath.Join(repo, ".git"), 0o700)
	if err := storetest.Mkfifo(filepath.Join(repo, ".git", "config")); err != nil {
		t.Skip(err)
	}
	tree, gitdir := filepath.Join(root, "tree"), filepath.Join(root, "gitdir")
	os.MkdirAll(tree, 0o700)
	os.MkdirAll(gitdir, 0o700)
	os.WriteFile(filepath.Join(tree, ".git"), []byte("gitdir: "+gitdir+"\n"), 0o600)
	storetest.Mkfifo(filepath.Join(gitdir, "commondir"))
	os.WriteFile(filepath.Join(gitdir, "config"), []byte("[remote \"origin\"]\n\turl = git@example.com:a/b.git\n"), 0o600)
	big := filepath.Join(root, "big")
	os.MkdirAll(filepath.Join(big, ".git"), 0o700)
	os.WriteFile(filepath.Join(big, ".git", "config"), append([]byte("[remote \"origin\"]\n\turl = git@example.com:a/b.git\n"), make([]byte, maxConfig)...), 0o600)

	done := make(chan string)
	go func() {
		var out string
		for _, dir := range []string{repo, tree, big} {
			id, ok := Identity(dir)
			out += fmt.Sprintf("%s: %q %v\n", filepath.Base(dir), id, ok)
		}
		done <- out
	}()
	select {
	case out := <-done:
		// The worktree's commondir is skipped: its own folder's config holds the remote.
		if want := "repo: \"\" false\ntree: \"git:example.com/a/b\" true\nbig: \"\" false\n"; out != want {
			t.Errorf("got\n%swant\n%s", out, want)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Identity blocked on a FIFO for 10 s")
	}
}
