package concurrency

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"hist/internal/testbin"
	"hist/lib/atomicfile"
	"hist/lib/history"
	"hist/lib/record"
	"hist/lib/store"
)

// TestRedactConcurrency: 4 writers append prompts holding a (fake) token,
// unredacted as with GENTLE_PI_HISTORY_REDACT=0, two to each of two
// capture files, with the capture's own code (record.Marshal,
// store.Append), while hist-compact --redact --all runs again and again.
// After a last run: every prompt is there, visible once, redacted; no line
// is torn or merged; no temp file is left; every file is 0600.
func TestRedactConcurrency(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	home := t.TempDir()
	root := filepath.Join(home, ".pi", "agent", "history")
	st := store.Store{Root: root}
	dir := st.ProjectDir("0123456789abcdef")
	if err := store.EnsureDir(dir); err != nil {
		t.Fatal(err)
	}
	token := "ghp_" + strings.Repeat("a1B2", 9)
	const writers = 4
	prompts := testbin.Scale(300, 1500)
	text := func(w, j int) string { return fmt.Sprintf("writer %d prompt %05d uses %s here", w, j, token) }

	// The j-th prompt of each writer waits for j*rounds/prompts redact
	// runs, so the captures span the runs however loaded the machine is.
	rounds := testbin.Scale(10, 25)
	var stop atomic.Bool
	var runs atomic.Int64
	var failed atomic.Bool
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for !stop.Load() {
			cmd := exec.Command(filepath.Join(BinDir, "hist-compact"), "--redact", "--all", "--wait", "30s")
			cmd.Env = append(os.Environ(), "HOME="+home, "PI_CODING_AGENT_DIR=", "GENTLE_PI_HISTORY_CAPTURE=1")
			if out, err := cmd.CombinedOutput(); err != nil {
				failed.Store(true)
				t.Errorf("hist-compact --redact: %v: %s", err, out)
				return
			}
			runs.Add(1)
		}
	}()
	var ww sync.WaitGroup
	for w := range writers {
		ww.Add(1)
		go func() {
			defer ww.Done()
			path := filepath.Join(dir, fmt.Sprintf("inst%d.jsonl", w%2))
			for j := range prompts {
				line := record.Marshal(record.Record{Text: text(w, j), TS: int64(1_700_000_000_000 + w*10_000_000 + j)})
				if err := store.Append(path, line); err != nil {
					t.Errorf("writer %d prompt %d: %v", w, j, err)
					return
				}
				for runs.Load() < int64(j*rounds/prompts) && !failed.Load() {
					time.Sleep(200 * time.Microsecond)
				}
			}
		}()
	}
	ww.Wait()
	stop.Store(true)
	wg.Wait()
	if failed.Load() {
		return
	}
	cmd := exec.Command(filepath.Join(BinDir, "hist-compact"), "--redact", "--all")
	cmd.Env = append(os.Environ(), "HOME="+home, "PI_CODING_AGENT_DIR=", "GENTLE_PI_HISTORY_CAPTURE=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("last hist-compact --redact: %v: %s", err, out)
	}
	t.Logf("%d redact runs during %d captures", runs.Load(), writers*prompts)

	files, err := st.Files(store.Scope{All: true})
	if err != nil {
		t.Fatal(err)
	}
	res := history.Read(files, nil)
	if res.Stats.Malformed != 0 || len(res.Failed) != 0 {
		t.Fatalf("malformed %d, failed %v", res.Stats.Malformed, res.Failed)
	}
	seen := map[string]int{}
	for i := range res.Len() {
		seen[res.At(i).Text]++
	}
	for w := range writers {
		for j := range prompts {
			want := strings.Replace(text(w, j), token, "[REDACTED:github-token]", 1)
			if seen[want] != 1 {
				t.Errorf("%q visible %d times", want, seen[want])
			}
		}
	}
	if res.Len() != writers*prompts {
		t.Errorf("%d prompts visible, want %d", res.Len(), writers*prompts)
	}
	filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			t.Error(err)
			return nil
		}
		fi, _ := d.Info()
		switch {
		case d.IsDir() && fi.Mode().Perm() != atomicfile.DirPerm:
			t.Errorf("%s: %v", p, fi.Mode())
		case !d.IsDir() && fi.Mode().Perm() != atomicfile.FilePerm:
			t.Errorf("%s: %v", p, fi.Mode())
		case atomicfile.IsTemp(d.Name()):
			t.Errorf("temp file left: %s", p)
		}
		if !d.IsDir() && store.Classify(d.Name()) != store.NotStore {
			data, _ := os.ReadFile(p)
			if strings.Contains(string(data), "ghp_") {
				t.Errorf("%s still holds a token", p)
			}
		}
		return nil
	})
}
