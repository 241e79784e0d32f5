package histlist

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"hist/lib/cli"
	"hist/lib/record"
	"hist/lib/store"
)

// hist-list streams: the newest prompts of a capture file are printed
// without its start being read. The file below is a terabyte hole with
// three records at its end, which a reader from the start could not get
// through; --limit 2 and the default format print the two newest, and
// --json the same with their provenance, from the end alone.
func TestListStreamsFromTheEnd(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, store.ProjectsDir, "aaaaaaaaaaaaaaaa")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "0b1c.jsonl")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	var tail []byte
	tail = append(tail, '\n')
	tail = record.Append(tail, record.Record{Text: "oldest", TS: 1})
	tail = record.Append(tail, record.Record{Text: "older", TS: 2, Src: "claude", Session: "s1"})
	tail = record.Append(tail, record.Record{Text: "newest", TS: 3, Src: "claude", Session: "s1"})
	if _, err := f.WriteAt(tail, 1<<40); err != nil {
		f.Close()
		t.Skipf("no sparse terabyte file here: %v", err)
	}
	f.Close()
	for _, c := range []struct{ flag, want string }{
		{"--limit=2", "newest\nolder\n"},
		{"--json", `{"text":"newest","ts":3,"cwd":"","file":"` + path + `","src":"claude","session":"s1"}` + "\n" +
			`{"text":"older","ts":2,"cwd":"","file":"` + path + `","src":"claude","session":"s1"}` + "\n"},
	} {
		var out, errb bytes.Buffer
		env := map[string]string{"GENTLE_PI_HISTORY_CAPTURE": "1"}
		e := &cli.Env{
			Name: "hist-list", Args: []string{c.flag, "--all", "--limit", "2", "--store", root},
			Stdout: &out, Stderr: &errb,
			Getenv: func(k string) string { return env[k] },
			Lookup: func(k string) (string, bool) { v, ok := env[k]; return v, ok },
			Home:   root,
		}
		done := make(chan int)
		go func() { done <- run(e) }()
		select {
		case code := <-done:
			if code != 0 || out.String() != c.want {
				t.Errorf("%s: exit %d, stdout %q, stderr %q; want 0 and %q", c.flag, code, out.String(), errb.String(), c.want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: hist-list did not print the newest prompts in 10 s", c.flag)
		}
	}
}
