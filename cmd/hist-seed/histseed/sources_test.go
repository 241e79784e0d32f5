package histseed

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	"hist/lib/agent"
	"hist/lib/store"
)

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
		want = append(want, store.SeedFile(n, ""))
	}
	sameSet(t, "the usage's seed files", files, want)
}

func sameSet(t *testing.T, where string, got, want []string) {
	t.Helper()
	if !slices.Equal(slices.Sorted(slices.Values(got)), slices.Sorted(slices.Values(want))) {
		t.Errorf("%s: %q; agent.List: %q", where, got, want)
	}
}
