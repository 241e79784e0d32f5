//go:build unix

// Package pi holds hist's pi extension (hist.ts) and its end-to-end test:
// the real pi, installed from npm, runs against a mock model on 127.0.0.1
// with the extension installed in a temporary HOME. The test runs only
// under HIST_E2E=1.
package pi

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"hist/internal/testbin"
	"hist/lib/picker"
	"hist/lib/record"
	"hist/lib/seed"
	"hist/lib/shellquote"
	"hist/lib/store"
	"hist/scripts/mockmodel"
)

const (
	piPackage   = "@earendil-works/pi-coding-agent"
	piVersion   = "1.6.0"
	nodeVersion = "22.23.5"
	// pi 1.x needs Node >= 22.19.
	minNodeMajor, minNodeMinor = 22, 19
)

// cacheDir is where pi (and Node 22, when needed) are installed once and
// reused by later runs: $HIST_E2E_CACHE, or <user cache dir>/hist-e2e.
func cacheDir(t *testing.T) string {
	if d := os.Getenv("HIST_E2E_CACHE"); d != "" {
		return d
	}
	d, err := os.UserCacheDir()
	if err != nil {
		t.Skipf("no cache folder for the npm installs (%v): set HIST_E2E_CACHE", err)
	}
	return filepath.Join(d, "hist-e2e")
}

// lockCache serialises installs into the cache between concurrent test runs.
func lockCache(t *testing.T, dir string) func() {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatalf("creating the cache folder: %v", err)
	}
	f, err := os.OpenFile(filepath.Join(dir, ".lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		t.Fatalf("opening the cache lock: %v", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatalf("locking the cache: %v", err)
	}
	return func() { syscall.Flock(int(f.Fd()), syscall.LOCK_UN); f.Close() }
}

var netErr = regexp.MustCompile(`(?i)ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ECONNRESET|ETIMEDOUT|ENETUNREACH|network|socket hang up|getaddrinfo|request to .* failed`)

// npm runs npm with PATH; a failure that looks like the network skips the test.
func npm(t *testing.T, ctx context.Context, path string, args ...string) {
	cmd := exec.CommandContext(ctx, "npm", args...)
	cmd.Env = append(os.Environ(), "PATH="+path, "npm_config_update_notifier=false", "npm_config_fund=false", "npm_config_audit=false")
	out, err := cmd.CombinedOutput()
	if err == nil {
		return
	}
	if netErr.Match(out) || ctx.Err() != nil {
		t.Skipf("npm registry not reachable: npm %s: %v: %s", strings.Join(args, " "), err, lastLines(out, 3))
	}
	t.Fatalf("npm %s: %v\n%s", strings.Join(args, " "), err, out)
}

func lastLines(b []byte, n int) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}

// nodeOK reports whether the node on PATH is new enough for pi.
func nodeOK() bool {
	out, err := exec.Command("node", "--version").Output()
	if err != nil {
		return false
	}
	v := strings.TrimPrefix(strings.TrimSpace(string(out)), "v")
	f := strings.SplitN(v, ".", 3)
	if len(f) < 2 {
		return false
	}
	major, _ := strconv.Atoi(f[0])
	minor, _ := strconv.Atoi(f[1])
	return major > minNodeMajor || major == minNodeMajor && minor >= minNodeMinor
}

// installPi returns the PATH prefix holding node (22) and pi, and pi's path,
// installing them into the cache when they are not there yet. The tests
// that need pi run only under HIST_E2E=1: a plain go test ./... installs
// nothing from npm.
func installPi(t *testing.T) (string, string) {
	if os.Getenv("HIST_E2E") != "1" {
		t.Skip("end to end with the real pi, installed from npm: set HIST_E2E=1 to run it")
	}
	if _, err := exec.LookPath("npm"); err != nil {
		t.Skip("npm is not installed: the pi end-to-end test needs it to install pi")
	}
	cache := cacheDir(t)
	unlock := lockCache(t, cache)
	defer unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	path := os.Getenv("PATH")
	var prefix []string

	// install runs fn into a temporary folder beside final and renames it
	// into place, so a half-finished install is never reused.
	install := func(final string, fn func(tmp string)) {
		if _, err := os.Stat(final); err == nil {
			return
		}
		tmp := final + ".tmp"
		os.RemoveAll(tmp)
		start := time.Now()
		fn(tmp)
		if err := os.Rename(tmp, final); err != nil {
			t.Fatalf("installing into the cache: %v", err)
		}
		t.Logf("installed %s in %s", filepath.Base(final), time.Since(start).Round(time.Second))
	}

	if !nodeOK() {
		arch := map[string]string{"amd64": "x64", "arm64": "arm64"}[runtime.GOARCH]
		if runtime.GOOS != "linux" || arch == "" {
			t.Skipf("node >= %d.%d is needed and no Node binary package is known for %s/%s", minNodeMajor, minNodeMinor, runtime.GOOS, runtime.GOARCH)
		}
		pkg := "node-linux-" + arch
		dir := filepath.Join(cache, "node-"+nodeVersion)
		install(dir, func(tmp string) {
			npm(t, ctx, path, "install", "--no-save", "--prefix", tmp, pkg+"@"+nodeVersion)
		})
		bin := filepath.Join(dir, "node_modules", pkg, "bin")
		prefix = append(prefix, bin)
		path = bin + string(os.PathListSeparator) + path
	}
	dir := filepath.Join(cache, "pi-"+piVersion)
	install(dir, func(tmp string) {
		npm(t, ctx, path, "install", "-g", "--prefix", tmp, piPackage+"@"+piVersion)
	})
	if _, err := os.Stat(filepath.Join(dir, "bin", "pi")); err != nil {
		t.Fatalf("pi is not in the cache after the install: %v (remove %s and run again)", err, dir)
	}
	prefix = append(prefix, filepath.Join(dir, "bin"))
	return strings.Join(prefix, string(os.PathListSeparator)), filepath.Join(dir, "bin", "pi")
}

// binDir is the folder of the commands TestMain put on PATH.
var binDir string

func TestMain(m *testing.M) { testbin.Main(m, &binDir) }

// buildHist returns the folder of the hist commands the extension calls.
func buildHist(t *testing.T) string {
	for _, b := range []string{"hist-capture", "hist-seed", "hist-compact", "hist-list"} {
		if _, err := os.Stat(filepath.Join(binDir, b)); err != nil {
			t.Fatalf("%s is not on PATH: the extension calls it", b)
		}
	}
	return binDir
}

// logEntry is one line of the extension's HIST_PI_LOG.
type logEntry struct {
	PID   int      `json:"pid"`
	Ev    string   `json:"ev"`
	Start int64    `json:"start"` // when it was started (Unix ms); lines are written at exit
	Args  []string `json:"args"`
	Code  *int     `json:"code"`
	Err   string   `json:"error"`
	Msg   string   `json:"stderr"`
	MS    int64    `json:"ms"` // how long it ran
}

func (e logEntry) exit() string {
	if e.Code == nil {
		return fmt.Sprintf("without a code (%s)", e.Err)
	}
	return strconv.Itoa(*e.Code)
}

func readLog(t *testing.T, path string) []logEntry {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("the extension wrote no log (was it loaded?): %v", err)
	}
	var out []logEntry
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var e logEntry
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		out = append(out, e)
	}
	return out
}

func flagValue(args []string, name string) string {
	for i, a := range args {
		if a == name && i+1 < len(args) {
			return args[i+1]
		}
	}
	return ""
}

// run is what one pi process did, according to the extension's log.
type run struct {
	pid      int
	seed     []logEntry
	captures []logEntry
	compact  []logEntry
	order    []string
}

// runs groups the log entries by pi process, in the order they first appear.
func runs(entries []logEntry) []*run {
	var out []*run
	byPID := map[int]*run{}
	for _, e := range entries {
		r := byPID[e.PID]
		if r == nil {
			r = &run{pid: e.PID}
			byPID[e.PID] = r
			out = append(out, r)
		}
		r.order = append(r.order, e.Ev)
		switch e.Ev {
		case "hist-seed":
			r.seed = append(r.seed, e)
		case "hist-capture":
			r.captures = append(r.captures, e)
		case "hist-compact":
			r.compact = append(r.compact, e)
		}
	}
	return out
}

func readRecords(t *testing.T, path string) []record.Record {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading %s: %v", path, err)
	}
	var out []record.Record
	for _, line := range bytes.SplitAfter(data, []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		rec, err := record.Parse(bytes.TrimSuffix(line, []byte("\n")))
		if err != nil {
			t.Fatalf("%s: malformed line %q: %v", path, line, err)
		}
		out = append(out, rec)
	}
	return out
}

func texts(recs []record.Record) []string {
	var out []string
	for _, r := range recs {
		out = append(out, r.Text)
	}
	return out
}

// piHome is a temporary HOME with pi pointed at the mock model and the
// extension installed, and the environment to run pi and hist in it.
type piHome struct {
	tmp, home, proj, agent, log string
	env                         []string
}

func newPiHome(t *testing.T, mockURL, bin, piPath string) *piHome {
	tmp := t.TempDir()
	home := filepath.Join(tmp, "home")
	proj := filepath.Join(tmp, "my project")
	agent := filepath.Join(home, ".pi", "agent")
	for _, d := range []string{proj, filepath.Join(agent, "extensions"), filepath.Join(agent, "prompts")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	models := fmt.Sprintf(`{"providers":{"mock":{"baseUrl":%q,"api":"openai-completions","apiKey":"dummy",`+
		`"compat":{"supportsStore":false,"supportsReasoningEffort":false,"maxTokensField":"max_tokens"},`+
		`"models":[{"id":"mock-model","contextWindow":128000,"maxTokens":4096,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0}}]}}}`,
		mockURL+"/v1")
	ext, err := os.ReadFile(filepath.Join(testbin.Root(), "scripts", "pi", "hist.ts"))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		filepath.Join(agent, "models.json"):           models,
		filepath.Join(agent, "prompts", "greet.md"):   "---\ndescription: Greet someone\n---\nPlease greet $1 warmly, in one sentence.\n",
		filepath.Join(agent, "extensions", "hist.ts"): string(ext),
	}
	for p, s := range files {
		if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	logPath := filepath.Join(tmp, "hist-pi.log")
	env := []string{
		"HOME=" + home,
		"PATH=" + piPath + string(os.PathListSeparator) + os.Getenv("PATH"),
		"TMPDIR=" + tmp,
		"LANG=C.UTF-8",
		"TERM=dumb",
		"PI_OFFLINE=1", "PI_SKIP_VERSION_CHECK=1", "PI_TELEMETRY=0",
		// Node writes its compile cache under TMPDIR as it exits: a pi
		// still exiting when the test ends would leave files in the temp
		// folder while it is removed.
		"NODE_DISABLE_COMPILE_CACHE=1",
		"HIST_BIN_DIR=" + bin,
		"HIST_PI_LOG=" + logPath,
		// The machine id in the store's file names (docs/store-format.md).
		"HIST_MACHINE=" + machine,
	}
	return &piHome{tmp: tmp, home: home, proj: proj, agent: agent, log: logPath, env: env}
}

func TestPiExtension(t *testing.T) {
	if testing.Short() {
		t.Skip("end to end with the real pi: skipped in -short mode")
	}
	// Each test has its own HOME, mock model and binaries: they wait for
	// pi and for prompts to settle side by side.
	t.Parallel()
	start := time.Now()
	piPath, piBin := installPi(t)
	t.Logf("pi ready after %s", time.Since(start).Round(time.Millisecond))
	bin := buildHist(t)

	mock := mockmodel.New()
	srv := httptest.NewServer(mock) // listens on 127.0.0.1
	defer srv.Close()

	h := newPiHome(t, srv.URL, bin, piPath)
	proj, agent, env, logPath := h.proj, h.agent, h.env, h.log
	pi := func(args ...string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, piBin, append([]string{"-p", "--provider", "mock", "--model", "mock-model"}, args...)...)
		cmd.Dir = proj
		cmd.Env = env // its PATH finds Node 22 for pi's "#!/usr/bin/env node"
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("pi %s: %v\nstdout: %s\nstderr: %s", strings.Join(args, " "), err, stdout.String(), stderr.String())
		}
		if !strings.Contains(stdout.String(), mockmodel.Reply) {
			t.Fatalf("pi %s printed %q, not the mock's reply", strings.Join(args, " "), stdout.String())
		}
		return stderr.String()
	}
	hist := func(name string, args ...string) []byte {
		t.Helper()
		cmd := exec.Command(filepath.Join(bin, name), args...)
		cmd.Dir = proj
		cmd.Env = env
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, stderr.String())
		}
		return out
	}

	canon, err := store.Canonical(proj)
	if err != nil {
		t.Fatal(err)
	}
	st := store.Store{Root: filepath.Join(agent, "history")}
	pdir := st.ProjectDir(store.Hash(canon))

	// Run 0, capture off (no preference, no variable): the extension runs
	// the binaries, which store nothing.
	const before = "a prompt typed before capture was on"
	pi(before)
	r0 := runs(readLog(t, logPath))
	if len(r0) != 1 {
		t.Fatalf("capture off: want one pi process in the extension's log, got %d", len(r0))
	}
	if len(r0[0].seed) != 1 || len(r0[0].captures) != 1 || len(r0[0].compact) != 1 {
		t.Fatalf("capture off: want one seed, one capture and one compact call, got %v", r0[0].order)
	}
	if _, err := os.Stat(st.Root); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("capture off: the store %s exists (%v): the extension must be inert", st.Root, err)
	}

	hist("hist-capture", "--enable")
	// Run 1's hist-seed imports run 0's prompt once it has settled (a
	// prompt typed a moment ago is left to a later run: seed.Settle).
	time.Sleep(seed.Settle)

	// Sixty capture files left by other pi processes, all newer than
	// anything this test types, so that only --current keeps a shutting-down
	// session's own file out of compaction.
	if err := os.MkdirAll(pdir, 0o700); err != nil {
		t.Fatal(err)
	}
	future := time.Now().Add(24 * time.Hour).UnixMilli()
	var older []string
	for i := range 60 {
		text := fmt.Sprintf("prompt %02d from another pi process", i)
		older = append(older, text)
		line := record.Marshal(record.Record{Text: text, TS: future + int64(i)})
		if err := os.WriteFile(filepath.Join(pdir, fmt.Sprintf("other-%02d.jsonl", i)), line, 0o600); err != nil {
			t.Fatal(err)
		}
	}

	// Run 1: a new session with two typed prompts (one multi-line, with
	// leading and trailing spaces kept).
	p1, p2 := "first typed prompt: fix the flaky test", "  second prompt\nspans two lines  "
	pi(p1, p2)
	// Run 2: the same session, continued.
	p3 := "third prompt, in the continued session"
	pi("--continue", p3)
	// Run 3: a prompt template, which pi expands; the typed text is
	// command-like, so nothing is captured.
	pi(`/greet "Ada Lovelace"`)

	all := runs(readLog(t, logPath))
	if len(all) != 4 {
		t.Fatalf("want 4 pi processes in the extension's log, got %d", len(all))
	}
	want := [][]string{{p1, p2}, {p3}, nil}
	instances := map[string]bool{}
	var session string
	for i, r := range all[1:] {
		name := fmt.Sprintf("run %d (pid %d)", i+1, r.pid)
		// hist-seed ran at session start, for this project, and succeeded.
		if len(r.seed) != 1 || flagValue(r.seed[0].Args, "--project") != proj || r.seed[0].Code == nil || *r.seed[0].Code != 0 {
			t.Errorf("%s: hist-seed: want one successful call with --project %q, got %d calls (%v)", name, proj, len(r.seed), r.seed)
		}
		if len(r.seed) == 1 && len(r.captures) > 0 && r.seed[0].Start > r.captures[0].Start {
			t.Errorf("%s: hist-seed started after the first hist-capture, not at session start", name)
		}
		// One hist-capture per typed prompt, all with one instance id.
		wantCalls := max(len(want[i]), 1)
		if len(r.captures) != wantCalls {
			t.Fatalf("%s: want %d hist-capture calls, got %d", name, wantCalls, len(r.captures))
		}
		inst := flagValue(r.captures[0].Args, "--instance")
		for _, c := range r.captures {
			if got := flagValue(c.Args, "--instance"); got != inst {
				t.Errorf("%s: two instance ids in one process: %q and %q", name, inst, got)
			}
			if flagValue(c.Args, "--cwd") != proj || c.Code == nil || *c.Code != 0 {
				t.Errorf("%s: hist-capture %v exited %s: want --cwd %q and exit 0", name, c.Args, c.exit(), proj)
			}
		}
		if inst == "" || instances[inst] {
			t.Fatalf("%s: instance id %q is empty or was used by an earlier process", name, inst)
		}
		instances[inst] = true
		// hist-compact ran last, at shutdown, with this process's file as current.
		if len(r.compact) != 1 || r.order[len(r.order)-1] != "hist-compact" {
			t.Fatalf("%s: want one hist-compact call, last; calls were %v", name, r.order)
		}
		c := r.compact[0]
		if flagValue(c.Args, "--current") != inst || flagValue(c.Args, "--project") != proj || c.Code == nil || *c.Code != 0 {
			t.Errorf("%s: hist-compact %v exited %s: want --project %q --current %q and exit 0", name, c.Args, c.exit(), proj, inst)
		}
		// The process's prompts are in one capture file of its own, as typed.
		file := filepath.Join(pdir, inst+"@"+machine+".jsonl")
		if want[i] == nil {
			if _, err := os.Stat(file); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("%s: the template invocation was captured into %s (%v)", name, file, err)
			}
			continue
		}
		recs := readRecords(t, file)
		if got := texts(recs); !slices.Equal(got, want[i]) {
			t.Errorf("%s: %s holds %q, want %q", name, file, got, want[i])
		}
		// Each record names pi and pi's session; run 2 continued run 1's.
		for _, rec := range recs {
			if rec.Src != "pi" || rec.Session == "" || rec.Session != recs[0].Session {
				t.Errorf("%s: record %q carries src %q session %q, want pi and one session id", name, rec.Text, rec.Src, rec.Session)
			}
		}
		if i == 0 {
			session = recs[0].Session
		} else if len(recs) > 0 && recs[0].Session != session {
			t.Errorf("%s: the continued session's prompt carries session %q, want run 1's %q", name, recs[0].Session, session)
		}
	}
	// The session id is pi's: its session file is named after it.
	if m, _ := filepath.Glob(filepath.Join(agent, "sessions", "*", "*"+session+".jsonl")); session == "" || len(m) != 1 {
		t.Errorf("pi's session files %v: want one named after the captured session %q", m, session)
	}

	// pi expanded the template (the model got the expansion).
	var sawTemplate bool
	for _, r := range mock.Requests() {
		if r.LastUser == "Please greet Ada Lovelace warmly, in one sentence." {
			sawTemplate = true
		}
	}
	if !sawTemplate {
		t.Errorf("the mock model never received the expanded template; requests: %+v", mock.Requests())
	}

	// hist-seed imported run 0's prompt from pi's session transcript.
	seed := readRecords(t, filepath.Join(pdir, "seed@"+machine+".jsonl"))
	if !slices.Contains(texts(seed), before) {
		t.Errorf("seed.jsonl holds %q, want it to hold %q", texts(seed), before)
	}

	// Run 1's shutdown compacted the 60 files (10 stay, the rest are merged
	// into one compact file) and left run 1's own file alone.
	entries, err := os.ReadDir(pdir)
	if err != nil {
		t.Fatal(err)
	}
	var others, compacts int
	for _, e := range entries {
		switch {
		case strings.HasPrefix(e.Name(), "other-") && store.Classify(e.Name()) == store.Capture:
			others++
		case store.Classify(e.Name()) == store.Compact:
			compacts++
		}
	}
	if others != 10 || compacts != 1 {
		t.Errorf("after compaction: %d of the 60 other files and %d compact files remain, want 10 and 1 (%v)", others, compacts, entries)
	}

	// Nothing was lost, nothing shows twice.
	out := hist("hist-list", "--json")
	var listed []string
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var e struct{ Text string }
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("hist-list --json line %q: %v", sc.Text(), err)
		}
		listed = append(listed, e.Text)
	}
	wantListed := append(slices.Clone(older), before, p1, p2, p3)
	slices.Sort(listed)
	slices.Sort(wantListed)
	if !slices.Equal(listed, wantListed) {
		t.Errorf("hist-list shows\n%q\nwant\n%q", listed, wantListed)
	}

	// The resume command hist-pick prints for p3 (from what hist-list
	// --json says of it, as hist-pick reads it), run by sh with one more
	// prompt, continues the captured session: that prompt's record
	// carries the same session id.
	var got struct{ Text, Src, Session, Cwd string }
	for l := range strings.SplitSeq(strings.TrimSpace(string(hist("hist-list", "--json"))), "\n") {
		if json.Unmarshal([]byte(l), &got) == nil && got.Text == p3 {
			break
		}
	}
	cmdline, err := picker.ResumeCommand(got.Src, got.Session, got.Cwd, shellquote.Any)
	if wantCmd := "cd " + shQuote(canon) + " && pi --session " + session; err != nil || cmdline != wantCmd {
		t.Fatalf("resume command for %q: %q (%v), want %q", p3, cmdline, err, wantCmd)
	}
	p4 := "fourth prompt, in the resumed session"
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	resume := exec.CommandContext(ctx, "sh", "-c", cmdline+" -p --provider mock --model mock-model "+shQuote(p4))
	resume.Env = env
	if out, err := resume.CombinedOutput(); err != nil || !strings.Contains(string(out), mockmodel.Reply) {
		t.Fatalf("%s: %v\n%s", cmdline, err, out)
	}
	last := runs(readLog(t, logPath))
	r4 := last[len(last)-1]
	if len(r4.captures) != 1 {
		t.Fatalf("the resumed pi: want one hist-capture call, got %v", r4.order)
	}
	recs := readRecords(t, filepath.Join(pdir, flagValue(r4.captures[0].Args, "--instance")+"@"+machine+".jsonl"))
	if len(recs) != 1 || recs[0].Text != p4 || recs[0].Src != "pi" || recs[0].Session != session {
		t.Errorf("the resumed session's prompt: %+v, want %q in session %q", recs, p4, session)
	}
	t.Logf("whole test: %s", time.Since(start).Round(time.Millisecond))
}

// shQuote quotes s for sh.
func shQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// TestPiExtensionPickKey drives pi's terminal UI in tmux: the extension's
// key hands the terminal to hist-pick, and the chosen prompt lands in pi's
// editor; Esc in the selector leaves the editor as it was.
func TestPiExtensionPickKey(t *testing.T) {
	if testing.Short() {
		t.Skip("end to end with the real pi: skipped in -short mode")
	}
	t.Parallel()
	tmux, err := exec.LookPath("tmux")
	if err != nil {
		t.Skip("tmux is not installed: this test drives pi's terminal UI in tmux")
	}
	piPath, piBin := installPi(t)
	bin := buildHist(t)
	if _, err := os.Stat(filepath.Join(bin, "hist-pick")); err != nil {
		t.Fatalf("hist-pick was not built: the key opens it")
	}
	srv := httptest.NewServer(mockmodel.New())
	defer srv.Close()
	h := newPiHome(t, srv.URL, bin, piPath)
	hist := func(args ...string) {
		t.Helper()
		cmd := exec.Command(filepath.Join(bin, "hist-capture"), args...)
		cmd.Env = h.env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("hist-capture %v: %v\n%s", args, err, out)
		}
	}
	hist("--enable")
	const chosen = "fix the flaky test in store_test.go"
	for i, p := range []string{"an older prompt", chosen, "the newest prompt"} {
		// The chosen prompt has a pi session, which the selector could resume.
		hist("--cwd", h.proj, "--ts", strconv.FormatInt(time.Now().UnixMilli()-int64(10-i)*1000, 10), "--src", "pi", "--session", "sess-1", p)
	}

	var script strings.Builder
	script.WriteString("cd " + shQuote(h.proj) + " && exec env -i")
	for _, kv := range h.env {
		if !strings.HasPrefix(kv, "TERM=") {
			script.WriteString(" " + shQuote(kv))
		}
	}
	script.WriteString(" TERM=xterm-256color " + shQuote(piBin) + " --provider mock --model mock-model\n")
	run := filepath.Join(h.tmp, "run-pi.sh")
	if err := os.WriteFile(run, []byte(script.String()), 0o700); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(h.tmp, "tmux.sock")
	tm := func(args ...string) string {
		out, err := exec.Command(tmux, append([]string{"-S", sock, "-f", "/dev/null"}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("tmux %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	tm("new-session", "-d", "-s", "pi", "-x", "120", "-y", "40", "sh "+shQuote(run))
	// At the end: the server killed, and pi (the pane's process: the
	// script execs it) gone before the temp folder is removed.
	pid, _ := strconv.Atoi(strings.TrimSpace(tm("display-message", "-p", "-t", "pi", "#{pane_pid}")))
	defer func() {
		exec.Command(tmux, "-S", sock, "kill-server").Run()
		for deadline := time.Now().Add(10 * time.Second); pid > 0 && time.Now().Before(deadline); {
			if syscall.Kill(pid, 0) == syscall.ESRCH {
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
	}()

	screen := func() string { return tm("capture-pane", "-p", "-t", "pi") }
	hasLine := func(s, line string) bool {
		for _, l := range strings.Split(s, "\n") {
			if strings.TrimSpace(l) == line {
				return true
			}
		}
		return false
	}
	wait := func(what string, ok func(string) bool) {
		t.Helper()
		deadline := time.Now().Add(60 * time.Second)
		for {
			s := screen()
			if ok(s) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("waiting for %s; the screen:\n%s", what, s)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	wait("pi's editor", func(s string) bool { return strings.Contains(s, "mock-model") })

	// Typed text becomes the selector's query; Enter puts the choice in the editor.
	tm("send-keys", "-t", "pi", "-l", "flaky")
	wait("the typed text", func(s string) bool { return hasLine(s, "flaky") })
	tm("send-keys", "-t", "pi", "M-r")
	wait("the selector with the editor's text as query", func(s string) bool {
		return strings.Contains(s, "Prompt history") && strings.Contains(s, "1/1")
	})
	// Inside pi the selector offers no resume key: the header does not name
	// one, the preview shows the command but no key, and ctrl-o does nothing
	// (the resume command never lands in pi's editor).
	wait("the preview of the chosen prompt", func(s string) bool { return strings.Contains(s, "Resume   cd ") })
	if s := screen(); strings.Contains(s, "ctrl-o") || strings.Contains(s, "prints it") || !strings.Contains(s, "enter pick") {
		t.Errorf("the selector inside pi offers a resume key:\n%s", s)
	}
	tm("send-keys", "-t", "pi", "C-o")
	time.Sleep(500 * time.Millisecond)
	wait("the selector still open after ctrl-o", func(s string) bool { return strings.Contains(s, "Prompt history") })
	tm("send-keys", "-t", "pi", "Enter")
	wait("the chosen prompt in pi's editor", func(s string) bool {
		return hasLine(s, chosen) && !strings.Contains(s, "Prompt history")
	})

	// Esc: nothing chosen, the editor keeps its text.
	tm("send-keys", "-t", "pi", "M-r")
	wait("the selector again", func(s string) bool { return strings.Contains(s, "Prompt history") })
	tm("send-keys", "-t", "pi", "Escape")
	wait("the selector closed", func(s string) bool { return !strings.Contains(s, "Prompt history") })
	time.Sleep(500 * time.Millisecond)
	if s := screen(); !hasLine(s, chosen) {
		t.Fatalf("after Esc in the selector the editor lost its text; the screen:\n%s", s)
	}

	var codes []string
	for _, e := range readLog(t, h.log) {
		if e.Ev == "hist-pick" {
			codes = append(codes, e.exit())
		}
	}
	if !slices.Equal(codes, []string{"0", "130"}) {
		t.Errorf("hist-pick exit codes in the extension's log: %v, want [0 130]", codes)
	}
}

// storeRecords reads every store file of the project hash with
// record.Scan: file name -> its records.
func storeRecords(t *testing.T, st store.Store, hash string) map[string][]record.Record {
	t.Helper()
	files, err := st.ProjectFiles(hash)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]record.Record{}
	for _, f := range files {
		fh, err := os.Open(f.Path)
		if err != nil {
			t.Fatal(err)
		}
		name := filepath.Base(f.Path)
		_, err = record.Scan(fh, func(l *record.Line) error {
			out[name] = append(out[name], l.Record())
			return nil
		})
		fh.Close()
		if err != nil {
			t.Fatalf("reading %s: %v", f.Path, err)
		}
	}
	return out
}

// piSessions returns the ids of pi's session files under agent, from
// their header lines.
func piSessions(t *testing.T, agent string) map[string]bool {
	t.Helper()
	paths, _ := filepath.Glob(filepath.Join(agent, "sessions", "*", "*.jsonl"))
	ids := map[string]bool{}
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		line, _ := bufio.NewReader(f).ReadBytes('\n')
		f.Close()
		var h struct{ Type, ID string }
		if err := json.Unmarshal(line, &h); err != nil || h.Type != "session" || h.ID == "" {
			t.Fatalf("%s: the first line %q is not a session header (%v)", p, line, err)
		}
		ids[h.ID] = true
	}
	return ids
}

// TestPiImportThenInstall: with no extension, each pi session's prompts
// come in only by hist-seed, and each run of it imports exactly what no
// earlier one did (the project's first import writes seed.jsonl, later
// ones append to import-pi.jsonl). Then `hist-capture --install pi` installs the
// extension where pi loads it from: a prompt typed then is captured live
// once, and hist-seed does not import it a second time.
func TestPiImportThenInstall(t *testing.T) {
	if testing.Short() {
		t.Skip("end to end with the real pi: skipped in -short mode")
	}
	t.Parallel()
	start := time.Now()
	piPath, piBin := installPi(t)
	bin := buildHist(t)
	srv := httptest.NewServer(mockmodel.New())
	defer srv.Close()
	h := newPiHome(t, srv.URL, bin, piPath)
	// No extension: the import is the only way in.
	extPath := filepath.Join(h.agent, "extensions", "hist.ts")
	if err := os.Remove(extPath); err != nil {
		t.Fatal(err)
	}
	pi := func(prompt string) string {
		t.Helper()
		before := piSessions(t, h.agent)
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, piBin, "-p", "--provider", "mock", "--model", "mock-model", prompt)
		cmd.Dir, cmd.Env = h.proj, h.env
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), mockmodel.Reply) {
			t.Fatalf("pi %q: %v\n%s", prompt, err, out)
		}
		var id string
		for s := range piSessions(t, h.agent) {
			if !before[s] {
				if id != "" {
					t.Fatalf("pi %q started two sessions: %q and %q", prompt, id, s)
				}
				id = s
			}
		}
		if id == "" {
			t.Fatalf("pi %q wrote no new session file", prompt)
		}
		return id
	}
	hist := func(name string, args ...string) string {
		t.Helper()
		cmd := exec.Command(filepath.Join(bin, name), args...)
		cmd.Dir, cmd.Env = h.proj, h.env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	canon, err := store.Canonical(h.proj)
	if err != nil {
		t.Fatal(err)
	}
	st := store.Store{Root: filepath.Join(h.agent, "history")}
	hash := store.Hash(canon)

	// check asserts that the project's store files hold each of want
	// (prompt -> its session) exactly once, with src pi and its session,
	// and nothing else; it returns the files holding each prompt.
	check := func(when string, want map[string]string) map[string]string {
		t.Helper()
		in := map[string]string{}
		n := map[string]int{}
		for file, recs := range storeRecords(t, st, hash) {
			for _, r := range recs {
				n[r.Text]++
				in[r.Text] = file
				if sess, ok := want[r.Text]; !ok {
					t.Errorf("%s: %s holds %q, which nobody typed", when, file, r.Text)
				} else if r.Src != "pi" || r.Session != sess {
					t.Errorf("%s: %s: %q carries src %q session %q, want pi and %q", when, file, r.Text, r.Src, r.Session, sess)
				}
			}
		}
		for text := range want {
			if n[text] != 1 {
				t.Errorf("%s: the store holds %q %d times, want once", when, text, n[text])
			}
		}
		return in
	}

	hist("hist-capture", "--enable")
	typed := map[string]string{}
	sessions := []string{
		"first session: why is the cache cold",
		"second session: add a --verbose flag",
		"third session: explain the lock order",
	}
	// The third session is the second's case once more (each of its 10 s
	// waits for the prompt to settle): it runs under HIST_LONG=1.
	sessions = sessions[:testbin.Scale(2, 3)]
	for i, p := range sessions {
		typed[p] = pi(p)
		// hist-seed leaves a prompt typed in the last seconds to a later
		// run (its live capture may be on its way).
		time.Sleep(seed.Settle)
		out := hist("hist-seed", "--project", h.proj)
		in := check(fmt.Sprintf("after hist-seed %d", i+1), typed)
		wantFile := "seed@" + machine + ".jsonl"
		if i > 0 {
			wantFile = "import-pi@" + machine + ".jsonl"
		}
		if in[p] != wantFile {
			t.Errorf("hist-seed %d imported %q into %q, want %s; it said:\n%s", i+1, p, in[p], wantFile, out)
		}
	}

	// The extension, installed by hist-capture --install where pi loads
	// extensions from (HOME's .pi/agent).
	out := hist("hist-capture", "--install", "pi")
	if want := "pi: installed the extension " + extPath; !strings.Contains(out, want) {
		t.Errorf("hist-capture --install pi said %q, want %q", out, want)
	}
	if got, err := os.ReadFile(extPath); err != nil {
		t.Fatalf("the installed extension: %v", err)
	} else if ext, _ := os.ReadFile(filepath.Join(testbin.Root(), "scripts", "pi", "hist.ts")); !bytes.Equal(got, withBinDir(t, ext, bin)) {
		t.Errorf("%s is not scripts/pi/hist.ts with the binaries' folder %s written in", extPath, bin)
	}
	live := "fourth session: captured live by the installed extension"
	typed[live] = pi(live)
	r := runs(readLog(t, h.log))
	if len(r) != 1 || len(r[0].captures) != 1 || len(r[0].seed) != 1 {
		t.Fatalf("the installed extension: want one pi process with one capture and one seed in its log, got %d", len(r))
	}
	for _, e := range []logEntry{r[0].seed[0], r[0].captures[0]} {
		if e.Code == nil || *e.Code != 0 {
			t.Errorf("the extension's %s %v exited %s, want 0 (%s)", e.Ev, e.Args, e.exit(), e.Msg)
		}
	}
	inst := flagValue(r[0].captures[0].Args, "--instance")
	if in := check("after the live capture", typed); in[live] != inst+"@"+machine+".jsonl" {
		t.Errorf("%q is in %q, want the extension's capture file %s.jsonl", live, in[live], inst)
	}
	if t.Failed() {
		sd, c := r[0].seed[0], r[0].captures[0]
		t.Logf("the extension's hist-seed ran from %d for %d ms, its hist-capture from %d for %d ms", sd.Start, sd.MS, c.Start, c.MS)
	}
	out = hist("hist-seed", "--project", h.proj)
	t.Logf("hist-seed after the live capture: %s", strings.TrimSpace(out))
	if !regexp.MustCompile(`pi: .*: nothing new \(.*(captured live|imported before)`).MatchString(out) {
		t.Errorf("hist-seed after the live capture said:\n%s\nwant nothing new for pi, the prompt captured live or imported before", out)
	}
	check("after hist-seed once the extension captured", typed)
	t.Logf("whole test: %s", time.Since(start).Round(time.Millisecond))
}

// machine is the tests' machine id: part of the name of every store file
// they write.
const machine = "pi-e2e"

// withBinDir is the extension ext as hist-capture --install writes it:
// the folder of the binaries, links resolved, in its installedBinDir line.
func withBinDir(t *testing.T, ext []byte, bin string) []byte {
	t.Helper()
	dir, err := filepath.EvalSymlinks(bin)
	if err != nil {
		t.Fatal(err)
	}
	q, _ := json.Marshal(dir)
	return bytes.Replace(ext, []byte(`const installedBinDir = "";`), []byte(`const installedBinDir = `+string(q)+`;`), 1)
}
