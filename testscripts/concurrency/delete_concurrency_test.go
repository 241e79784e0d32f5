package concurrency

import (
	"bytes"
	"flag"
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
	"hist/lib/identity"
	"hist/lib/record"
	"hist/lib/store"
)

var (
	delRuns     = flag.Int("delete.runs", testbin.Scale(2, 10), "TestDeleteConcurrency: runs in a row (capture loop processes; 2, or 10 with HIST_LONG=1)")
	delExecRuns = flag.Int("delete.execruns", 1, "TestDeleteConcurrency: runs in a row with one hist-capture process per prompt")
	delExecN    = flag.Int("delete.execprompts", testbin.Scale(100, 2000), "TestDeleteConcurrency: prompts each of the 4 writers captures in a run with one process per prompt (100, or 2000 with HIST_LONG=1)")
	delPrompts  = flag.Int("delete.prompts", testbin.Scale(500, 2000), "TestDeleteConcurrency: prompts each of the 4 writers captures (500, or 2000 with HIST_LONG=1)")
	delDeletes  = flag.Int("delete.deletes", testbin.Scale(50, 200), "TestDeleteConcurrency: deletes during a run (50, or 200 with HIST_LONG=1)")
)

// A capture loop process: the test binary started with writerEnv set
// captures its prompts with the code hist-capture runs (record.Marshal,
// store.Append on projects/<hash>/<instance>.jsonl), one after the other.
// Its j-th capture waits until the deleter has finished j*deletes/n
// deletes (a count the test writes to a file), so the captures span the
// deletes however loaded the machine is.
const writerEnv = "HIST_DELETE_TEST_WRITER"

func init() {
	spec := os.Getenv(writerEnv)
	if spec == "" {
		return
	}
	var path, progress string
	var w, n, deletes int
	if _, err := fmt.Sscanf(spec, "%d %d %d %s %s", &w, &n, &deletes, &progress, &path); err != nil {
		fmt.Fprintln(os.Stderr, "bad", writerEnv, spec, err)
		os.Exit(2)
	}
	done := 0
	start := time.Now()
	for j := range n {
		for {
			if data, err := os.ReadFile(progress); err == nil {
				fmt.Sscan(string(data), &done)
			}
			if done >= deletes || done >= j*deletes/n {
				break
			}
			time.Sleep(200 * time.Microsecond)
		}
		if done > 0 && done < deletes {
			// Spread this delete's share of captures over its duration.
			time.Sleep(time.Since(start) / time.Duration(done) * time.Duration(deletes) / time.Duration(n))
		}
		line := record.Marshal(record.Record{Text: capturedPrompt(w, j), TS: capturedTS(w, j)})
		if err := store.Append(path, line); err != nil {
			fmt.Fprintf(os.Stderr, "writer %d prompt %d: %v\n", w, j, err)
			os.Exit(1)
		}
	}
	os.Exit(0)
}

func capturedPrompt(w, j int) string {
	return fmt.Sprintf("writer %d prompt %05d %s", w, j, strings.Repeat("x", (w*131+j*17)%300))
}

func capturedTS(w, j int) int64 { return 1_700_000_000_000 + int64(w)*10_000_000 + int64(j) }

// TestDeleteConcurrency: 4 capture loops, each running the real
// hist-capture binary once per prompt, capture distinct prompts into one
// project (two of them into the same capture file, through --instance)
// while another loop runs hist-delete on other prompts of that project,
// each of which has a copy in every capture file, so every delete rewrites
// the files being appended to. Afterwards every captured prompt is listed
// exactly once, no deleted prompt is listed or left on disk, and every line
// of every store file is complete and valid. It runs several times in a row.
func TestDeleteConcurrency(t *testing.T) {
	if BinDir == "" {
		t.Skip("the binaries were not built")
	}
	runs, execRuns, n, deletes := *delRuns, *delExecRuns, *delPrompts, *delDeletes
	if testing.Short() {
		runs, execRuns, n, deletes = 2, 0, 500, 50
	}
	for i := range runs {
		ok := t.Run(fmt.Sprintf("loops/run%02d", i+1), func(t *testing.T) { concurrencyRun(t, false, n, deletes) })
		if !ok {
			t.Fatalf("run %d of %d failed", i+1, runs)
		}
	}
	for i := range execRuns {
		ok := t.Run(fmt.Sprintf("exec/run%02d", i+1), func(t *testing.T) { concurrencyRun(t, true, *delExecN, deletes) })
		if !ok {
			t.Fatalf("exec run %d of %d failed", i+1, execRuns)
		}
	}
}

// concurrencyRun is one run. With perPrompt each writer runs the
// hist-capture binary once per prompt (--instance names the file);
// otherwise each writer is one process capturing all its prompts.
func concurrencyRun(t *testing.T, perPrompt bool, n, deletes int) {
	start := time.Now()
	base := t.TempDir()
	home := filepath.Join(base, "home")
	proj := filepath.Join(base, "proj")
	// One machine: its id names the files it writes (hidden@dc.json).
	st := store.Store{Root: filepath.Join(base, "store"), Machine: "dc"}
	for _, d := range []string{home, proj} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	canon, _ := store.Canonical(proj)
	hash := store.Hash(canon)
	dir := st.ProjectDir(hash)
	env := []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "GENTLE_PI_HISTORY_CAPTURE=1", "HIST_MACHINE=" + st.Machine}
	run := func(name string, args ...string) (string, string, error) {
		cmd := exec.Command(filepath.Join(BinDir, name), append([]string{"--store", st.Root}, args...)...)
		cmd.Env, cmd.Dir = env, proj
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		return out.String(), errb.String(), err
	}

	// The prompts to delete: one copy in each capture file.
	instances := []string{"shared", "shared", "solo-b", "solo-c"}
	victim := func(k int) string {
		return fmt.Sprintf("Victim prompt %04d: please forget the token tok-%d", k, k*7919)
	}
	if err := store.EnsureDir(dir); err != nil {
		t.Fatal(err)
	}
	for _, inst := range []string{"shared", "solo-b", "solo-c"} {
		var buf []byte
		for k := range deletes {
			buf = record.Append(buf, record.Record{Text: victim(k), TS: int64(1_600_000_000_000 + k)})
		}
		if err := os.WriteFile(filepath.Join(dir, inst+".jsonl"), buf, 0o600); err != nil {
			t.Fatal(err)
		}
	}

	captured := capturedPrompt
	total := int64(len(instances) * n)

	progressFile := filepath.Join(base, "deletes-done")
	if err := os.WriteFile(progressFile, []byte("0"), 0o600); err != nil {
		t.Fatal(err)
	}
	var progress atomic.Int64
	var writersDone atomic.Bool
	var wg, writers sync.WaitGroup
	errs := make(chan error, len(instances)+1)
	for w, inst := range instances {
		writers.Add(1)
		go func() {
			defer writers.Done()
			if !perPrompt {
				cmd := exec.Command(os.Args[0], "-test.run=^$")
				cmd.Env = append(env, fmt.Sprintf("%s=%d %d %d %s %s", writerEnv, w, n, deletes, progressFile, filepath.Join(dir, inst+".jsonl")))
				if out, err := cmd.CombinedOutput(); err != nil {
					errs <- fmt.Errorf("capture loop %d: %v: %s", w, err, out)
				}
				progress.Add(int64(n))
				return
			}
			for j := range n {
				ts := fmt.Sprint(capturedTS(w, j))
				if _, stderr, err := run("hist-capture", "--cwd", proj, "--instance", inst, "--ts", ts, captured(w, j)); err != nil {
					errs <- fmt.Errorf("hist-capture (writer %d, prompt %d): %v: %s", w, j, err, stderr)
					return
				}
				progress.Add(1)
			}
		}()
	}
	go func() { writers.Wait(); writersDone.Store(true) }()
	var deleted, overlapped atomic.Int64
	wg.Add(1)
	go func() {
		defer wg.Done()
		// Lets the capture loops finish even when a delete fails.
		defer os.WriteFile(progressFile, fmt.Append(nil, deletes), 0o600)
		for k := range deletes {
			// Spread the deletes over the captures.
			for perPrompt && progress.Load() < total*int64(k)/int64(deletes) {
				time.Sleep(time.Millisecond)
			}
			if !writersDone.Load() {
				overlapped.Add(1)
			}
			_, stderr, err := run("hist-delete", "--project="+proj, victim(k))
			if err != nil {
				errs <- fmt.Errorf("hist-delete %d: %v: %s", k, err, stderr)
				return
			}
			if !strings.Contains(stderr, "removed 3 copies of 1 prompt, 3 files rewritten") {
				errs <- fmt.Errorf("hist-delete %d: %q, want 3 copies removed from 3 files", k, stderr)
				return
			}
			os.WriteFile(progressFile, fmt.Append(nil, deleted.Add(1)), 0o600)
		}
	}()
	wg.Wait()
	writers.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	captureTime := time.Since(start)

	// hist-list shows every captured prompt exactly once, and no victim.
	out, stderr, err := run("hist-list", "--project="+proj, "-0")
	if err != nil || stderr != "" {
		t.Fatalf("hist-list: %v: %s", err, stderr)
	}
	listed := map[string]int{}
	for _, p := range strings.Split(strings.TrimSuffix(out, "\x00"), "\x00") {
		listed[p]++
	}
	for w := range instances {
		for j := range n {
			if c := listed[captured(w, j)]; c != 1 {
				t.Errorf("writer %d prompt %d is listed %d times, want 1", w, j, c)
			}
		}
	}
	for k := range deletes {
		if listed[victim(k)] != 0 {
			t.Errorf("deleted prompt %d is listed", k)
		}
	}
	if len(listed) != int(total) {
		t.Errorf("hist-list printed %d prompts, want %d", len(listed), total)
	}

	// On disk: no torn or invalid line, no victim, every capture present.
	onDisk := map[string]int{}
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var carry, files []string
	for _, e := range ents {
		name := e.Name()
		if atomicfile.IsTemp(name) {
			t.Errorf("temp file left behind: %s", name)
			continue
		}
		switch store.Classify(name) {
		case store.Carry:
			carry = append(carry, name)
		case store.NotStore:
			t.Errorf("unexpected file %s", name)
			continue
		}
		files = append(files, name)
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if len(data) > 0 && data[len(data)-1] != '\n' {
			t.Errorf("%s ends with a torn line: %q", name, data[max(0, len(data)-80):])
		}
		for i, line := range bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n")) {
			if len(data) == 0 {
				break
			}
			rec, err := record.Parse(line)
			if err != nil {
				t.Errorf("%s line %d is not a valid record: %q", name, i+1, line)
				continue
			}
			onDisk[identity.Normalize(rec.Text)]++
		}
	}
	dups := 0
	for w := range instances {
		for j := range n {
			c := onDisk[identity.Normalize(captured(w, j))]
			if c == 0 {
				t.Errorf("writer %d prompt %d is not on disk", w, j)
			}
			dups += max(0, c-1)
		}
	}
	for k := range deletes {
		if c := onDisk[identity.Normalize(victim(k))]; c != 0 {
			t.Errorf("deleted prompt %d has %d copies on disk", k, c)
		}
	}
	hidden, err := os.ReadFile(st.Hidden())
	if err != nil {
		t.Fatal(err)
	}
	if got := bytes.Count(hidden, []byte(`"sha256:`)); got != deletes {
		t.Errorf("hidden.json holds %d tombstones, want %d", got, deletes)
	}
	t.Logf("%d captures by 4 writers, %d deletes (%d while captures ran) in %v (total %v); files %v; carry files %d; duplicate copies %d",
		total, deleted.Load(), overlapped.Load(), captureTime.Round(time.Millisecond), time.Since(start).Round(time.Millisecond), files, len(carry), dups)
}
