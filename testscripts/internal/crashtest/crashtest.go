// Package crashtest is the fixture of the crash tests (testscripts/concurrency
// and testscripts/stress): a store with one project, the real binaries run
// on it, capturers appending all along, and runs SIGKILLed at a random
// moment. Each test keeps its own model of what must be visible.
package crashtest

import (
	"bytes"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"hist/lib/atomicfile"
	"hist/lib/store"
)

// Fixture is one store with one project, in a test's temp folder.
type Fixture struct {
	T     *testing.T
	Bin   string // the built binaries' folder
	Store store.Store
	Home  string
	Proj  string
	Dir   string // Proj's folder in the store
	Env   []string
	Rng   *rand.Rand

	// Mu is held shared by a capture (while it runs and is recorded), and
	// exclusively by a check or a change of the model.
	Mu sync.RWMutex

	Est    time.Duration // how long a run takes (moving average)
	Killed int           // runs killed before they ended
	Ended  int           // runs that ended before their kill
}

// New makes the folders of a fixture; seed seeds its random numbers with
// the time, so that every run kills at other moments.
func New(t *testing.T, bin string, seed uint64) *Fixture {
	t.Helper()
	base := t.TempDir()
	f := &Fixture{
		T:     t,
		Bin:   bin,
		Store: store.Store{Root: filepath.Join(base, "store"), Machine: "crash"},
		Home:  filepath.Join(base, "home"),
		Proj:  filepath.Join(base, "proj"),
		Rng:   rand.New(rand.NewPCG(seed, uint64(time.Now().UnixNano()))),
		Est:   20 * time.Millisecond,
	}
	f.Env = []string{"HOME=" + f.Home, "PATH=" + os.Getenv("PATH"), "GENTLE_PI_HISTORY_CAPTURE=1", "HIST_MACHINE=" + f.Store.Machine}
	for _, d := range []string{f.Home, f.Proj} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	canon, _ := store.Canonical(f.Proj)
	f.Dir = f.Store.ProjectDir(store.Hash(canon))
	if err := store.EnsureDir(f.Dir); err != nil {
		t.Fatal(err)
	}
	return f
}

// Cmd is the binary name run on the fixture's store, in the project.
func (f *Fixture) Cmd(name string, args ...string) *exec.Cmd {
	cmd := exec.Command(filepath.Join(f.Bin, name), append([]string{"--store", f.Store.Root}, args...)...)
	cmd.Env, cmd.Dir = f.Env, f.Proj
	return cmd
}

// Capturers starts two capture loops; the returned func stops them. Round
// k of loop g runs hist-capture --cwd Proj with the arguments args gives
// (the prompt's text last), then calls added with the text, both while Mu
// is held shared; then it pauses for pause to three times pause.
func (f *Fixture) Capturers(args func(g, k int) []string, added func(text string), pause time.Duration) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	for g := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := 0; ; k++ {
				select {
				case <-done:
					return
				default:
				}
				a := args(g, k)
				f.Mu.RLock()
				out, err := f.Cmd("hist-capture", append([]string{"--cwd", f.Proj}, a...)...).CombinedOutput()
				if err != nil {
					f.Mu.RUnlock()
					f.T.Errorf("hist-capture: %v\n%s", err, out)
					return
				}
				added(a[len(a)-1])
				f.Mu.RUnlock()
				time.Sleep(pause + rand.N(2*pause))
			}
		}()
	}
	return func() { close(done); wg.Wait() }
}

// Delay is a random moment of a run: uniform over Est.
func (f *Fixture) Delay() time.Duration {
	return time.Duration(f.Rng.Int64N(int64(f.Est)))
}

// Learn folds the length of a run that ended into Est.
func (f *Fixture) Learn(d time.Duration) {
	f.Est = (7*f.Est + 3*d) / 10
}

// KillAt starts cmd and SIGKILLs it when trigger fires. It returns whether
// the kill stopped the run (false when the run ended first: then err is
// the run's own) and the run's output.
func (f *Fixture) KillAt(cmd *exec.Cmd, trigger <-chan time.Time) (killed bool, out []byte, err error) {
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	t0 := time.Now()
	if err := cmd.Start(); err != nil {
		f.T.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
		f.Learn(time.Since(t0))
	case <-trigger:
		cmd.Process.Kill()
		if err = <-done; err != nil {
			f.Killed++
			return true, buf.Bytes(), err
		}
	}
	f.Ended++
	return false, buf.Bytes(), err
}

// List runs hist-list -0 with args and returns the prompts it shows and its
// stderr; it fails the test when hist-list fails.
func (f *Fixture) List(when string, args ...string) (prompts [][]byte, stderr []byte) {
	f.T.Helper()
	var errb bytes.Buffer
	cmd := f.Cmd("hist-list", append([]string{"-0"}, args...)...)
	cmd.Stderr = &errb
	out, err := cmd.Output()
	if err != nil {
		f.T.Fatalf("%s: hist-list: %v: %s", when, err, errb.Bytes())
	}
	for len(out) > 0 {
		i := bytes.IndexByte(out, 0)
		if i < 0 {
			f.T.Fatalf("%s: hist-list -0 output does not end with NUL", when)
		}
		prompts = append(prompts, out[:i])
		out = out[i+1:]
	}
	return prompts, errb.Bytes()
}

// StaleTemps counts the temp files in dir whose process is gone.
func StaleTemps(dir string) int {
	ents, _ := os.ReadDir(dir)
	n := 0
	for _, e := range ents {
		if atomicfile.IsTemp(e.Name()) && atomicfile.Stale(e.Name()) {
			n++
		}
	}
	return n
}
