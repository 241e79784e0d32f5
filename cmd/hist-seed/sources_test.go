package main

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"hist/lib/agent"
	"hist/lib/seed"
)

// TestReaders: hist-seed has a reader for exactly the agents of the list,
// a prompt-recall reader for those with a prompt-recall file (named as the
// agent), and each variable the list says moves an agent's files moves
// the reader's transcripts or prompt-recall file.
func TestReaders(t *testing.T) {
	for n := range readers {
		if _, ok := agent.Lookup(n); !ok {
			t.Errorf("hist-seed has a reader for %q, which is not in agent.List", n)
		}
	}
	home := t.TempDir()
	for _, a := range agent.List {
		r, ok := readers[a.Name]
		if !ok {
			t.Errorf("hist-seed has no reader for %q of agent.List", a.Name)
			continue
		}
		if (r.recall != nil) != (a.Recall != "") || (r.recall != nil) != (r.scanRecall != nil) {
			t.Errorf("%q: a prompt-recall reader: %v; a prompt-recall file in agent.List: %q", a.Name, r.recall != nil, a.Recall)
			continue
		}
		where := func(env map[string]string) string {
			get := func(k string) string { return env[k] }
			p := r.root(get, home)
			if r.recall != nil {
				s := r.recall(get, home)
				if s.Name != a.Name {
					t.Errorf("%q: the prompt-recall file is named %q", a.Name, s.Name)
				}
				if filepath.Base(s.Path) != a.Recall {
					t.Errorf("%q: the prompt-recall file is %s, agent.List says %s", a.Name, s.Path, a.Recall)
				}
				p += " " + s.Path
			}
			return p
		}
		plain := where(nil)
		if len(a.Vars()) == 0 {
			t.Errorf("%q: agent.List names no variable that moves its files", a.Name)
		}
		for _, v := range a.Vars() {
			// An absolute folder holding the agent's subfolder, which
			// some readers look for before they take it.
			dir := t.TempDir()
			if err := os.Mkdir(filepath.Join(dir, a.Name), 0o700); err != nil {
				t.Fatal(err)
			}
			if got := where(map[string]string{v: dir}); got == plain {
				t.Errorf("%q: $%s does not move its files (%s)", a.Name, v, got)
			}
		}
	}
}

// TestUsageAgents: the usage's passages that name the agents (--from's
// list, the seed files, where the files are read from) name exactly the
// list, and --from takes exactly the list's names.
func TestUsageAgents(t *testing.T) {
	names := agent.Names()
	if got, all, err := parseFrom(allSourcesWord); err != nil || !all || !slices.Equal(got, names) {
		t.Errorf("parseFrom(all) = %q, %v, %v; want %q", got, all, err, names)
	}
	for _, n := range names {
		if got, _, err := parseFrom(n); err != nil || !slices.Equal(got, []string{n}) {
			t.Errorf("parseFrom(%q) = %q, %v", n, got, err)
		}
	}
	if _, _, err := parseFrom("nobody"); err == nil || !strings.Contains(err.Error(), strings.Join(names, ", ")) {
		t.Errorf("parseFrom(nobody) = %v; want an error naming %q", err, names)
	}

	if strings.Contains(usage, "{{") {
		t.Errorf("the usage has a passage left unfilled")
	}
	lines := strings.Split(usage, "\n")
	// --from: the line after "The sources:".
	i := slices.IndexFunc(lines, func(l string) bool { return strings.HasSuffix(l, "The sources:") })
	if i < 0 {
		t.Fatalf("the usage has no list of --from's sources")
	}
	from := strings.Split(strings.TrimSuffix(strings.TrimSpace(lines[i+1]), "."), ", ")
	sameSet(t, "--from's list in the usage", from, names)
	// Where the files are read from: the first word of each line that is
	// not a continuation.
	i = slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(l, "Where the transcripts are read from") })
	if i < 0 {
		t.Fatalf("the usage does not say where the transcripts are read from")
	}
	var where []string
	for _, l := range lines[i+1:] {
		if l == "" {
			break
		}
		if !strings.HasPrefix(l, "     ") {
			where = append(where, strings.Fields(l)[0])
		}
	}
	sameSet(t, "the usage's locations", where, names)
	// The seed files.
	var files []string
	for _, f := range regexp.MustCompile(`seed(-[a-z0-9]+)?\.jsonl`).FindAllString(usage, -1) {
		if !slices.Contains(files, f) {
			files = append(files, f)
		}
	}
	var want []string
	for _, n := range names {
		want = append(want, seed.FileName(n, ""))
	}
	sameSet(t, "the usage's seed files", files, want)
}

func sameSet(t *testing.T, where string, got, want []string) {
	t.Helper()
	if !slices.Equal(slices.Sorted(slices.Values(got)), slices.Sorted(slices.Values(want))) {
		t.Errorf("%s: %q; agent.List: %q", where, got, want)
	}
}
