package syncthing

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"hist/internal/testbin"
	"hist/lib/record"
	"hist/lib/store"
)

// scene is the state of TestTwoPeers: the two machines, and what each
// prompt must be once the peers have met.
type scene struct {
	t    *testing.T
	a, b *peer

	mu        sync.Mutex
	typed     map[string]bool // captured or imported: listed unless deleted
	deleted   map[string]bool // deleted (hist-delete exited 0)
	unsure    map[string]bool // a delete that failed: listed or not
	counts    map[string]int
	conflicts map[string]bool // conflict copies seen at any time
}

func (s *scene) count(what string, n int) {
	s.mu.Lock()
	s.counts[what] += n
	s.mu.Unlock()
}

// run runs a hist binary as the machine would: its HOME, its machine id,
// its store, in the project folder.
func (p *peer) run(name string, args ...string) (string, string, error) {
	cmd := exec.Command(filepath.Join(BinDir, name), append([]string{"--store", p.store}, args...)...)
	cmd.Env, cmd.Dir = p.env, p.proj
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	return out.String(), errb.String(), err
}

// words make prompts that look like prompts but match no secret pattern
// (redaction is on and would change them).
var words = strings.Fields("fix the flaky test in store go please refactor parser add a flag for verbose output " +
	"why does compaction keep two files explain the lock order rename handler make it faster résumé naïve 日本語")

func promptText(machine, what string, w, k int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s w%d n%04d", machine, what, w, k)
	for i := range 3 + (w*7+k)%9 {
		b.WriteByte(' ')
		b.WriteString(words[(k*13+w*5+i*3)%len(words)])
	}
	return b.String()
}

// capture captures n prompts of p's own (what names them) from workers
// capture processes at once, each worker in its own capture file; worker
// 0 also types extra. It returns the prompts captured.
func (s *scene) capture(p *peer, what string, workers, n int, extra []string) []string {
	var mu sync.Mutex
	var done []string
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var texts []string
			for k := w; k < n; k += workers {
				texts = append(texts, promptText(p.machine, what, w, k))
			}
			if w == 0 {
				texts = append(texts, extra...)
			}
			for _, text := range texts {
				_, stderr, err := p.run("hist-capture", "--cwd", p.proj, "--instance", fmt.Sprintf("agent-%d", w), text)
				if err != nil || stderr != "" {
					s.t.Errorf("%s: hist-capture %q: %v: %s", p.machine, text, err, stderr)
					continue
				}
				mu.Lock()
				done = append(done, text)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	s.mu.Lock()
	for _, text := range done {
		s.typed[text] = true
	}
	s.counts["captures"] += len(done)
	s.mu.Unlock()
	return done
}

// remove deletes text from p's project.
func (s *scene) remove(p *peer, text string) {
	if text == "" {
		return
	}
	_, stderr, err := p.run("hist-delete", "--project="+p.proj, text)
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		s.t.Errorf("%s: hist-delete %q: %v: %s", p.machine, text, err, strings.TrimSpace(stderr))
		s.unsure[text] = true
		return
	}
	s.deleted[text] = true
	s.counts["deletes"]++
}

// written finds hist-seed's count of the prompts it imported.
var written = regexp.MustCompile(`(\d+) prompts? written to `)

var compactLine = regexp.MustCompile(`^hist-compact: .*: (merged \d+ of \d+ files? into \S+: .*|nothing to do: .*)$`)

// compactNow compacts p's project at thresholds low enough to merge.
func (s *scene) compactNow(p *peer) {
	_, stderr, err := p.run("hist-compact", "--project="+p.proj, "--max-files", "1", "--max-entries", "1", "--keep", "1")
	if err != nil {
		s.t.Errorf("%s: hist-compact: %v: %s", p.machine, err, stderr)
	}
	for _, l := range strings.Split(strings.TrimSuffix(stderr, "\n"), "\n") {
		if l != "" && !compactLine.MatchString(l) {
			s.t.Errorf("%s: hist-compact said %q", p.machine, l)
		}
	}
	if strings.Contains(stderr, ": merged ") {
		s.count("compactions", 1)
	}
}

// both runs fa on alpha and fb on beta at the same moment.
func (s *scene) both(fa, fb func()) {
	var wg sync.WaitGroup
	start := make(chan struct{})
	for _, f := range []func(){fa, fb} {
		wg.Add(1)
		go func() { defer wg.Done(); <-start; f() }()
	}
	close(start)
	wg.Wait()
}

// converge waits until both peers are idle with nothing needed on either
// side and the two stores hold the same files, unchanged for 2 s (the
// peers scan at once, then watch with a 1 s delay).
func (s *scene) converge(stage string) {
	t := s.t
	start := time.Now()
	deadline := start.Add(90 * time.Second)
	var last string
	var since, scanned time.Time
	for {
		// A rescan now and then: a pull that failed waits a minute
		// before its retry unless a scan finds the change.
		if time.Since(scanned) > 5*time.Second {
			for _, p := range []*peer{s.a, s.b} {
				p.rest("POST", "/rest/db/scan?folder="+folderID, nil)
			}
			scanned = time.Now()
		}
		okA, whyA := s.a.idle(s.b)
		okB, whyB := s.b.idle(s.a)
		la, ca := snapshot(s.a.store)
		lb, cb := snapshot(s.b.store)
		s.mu.Lock()
		for _, c := range append(ca, cb...) {
			s.conflicts[c] = true
		}
		s.mu.Unlock()
		if okA && okB && la == lb {
			if la != last {
				last, since = la, time.Now()
			} else if time.Since(since) >= 2*time.Second {
				t.Logf("%s: converged in %.1f s", stage, time.Since(start).Seconds())
				return
			}
		} else {
			last = ""
		}
		if time.Now().After(deadline) {
			t.Errorf("%s: the peers did not converge within 90 s: %s; %s; the stores' files agree: %v", stage, whyA, whyB, la == lb)
			return
		}
		time.Sleep(300 * time.Millisecond)
	}
}

// list is hist-list --all -0 on p: each prompt and how often it is listed.
func (s *scene) list(p *peer) (string, map[string]int) {
	out, stderr, err := p.run("hist-list", "--all", "-0")
	if err != nil || stderr != "" {
		s.t.Errorf("%s: hist-list --all -0: %v; stderr: %q", p.machine, err, stderr)
	}
	n := map[string]int{}
	for _, text := range strings.Split(strings.TrimSuffix(out, "\x00"), "\x00") {
		if text != "" {
			n[text]++
		}
	}
	return out, n
}

// check lists the prompts on both machines: the same listing on both,
// every prompt typed and not deleted once, no deleted prompt.
func (s *scene) check(stage string) {
	t := s.t
	outA, a := s.list(s.a)
	outB, b := s.list(s.b)
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, m := range []struct {
		p *peer
		n map[string]int
	}{{s.a, a}, {s.b, b}} {
		var missing, twice, back, unknown []string
		for text := range s.typed {
			if !s.deleted[text] && !s.unsure[text] && m.n[text] == 0 {
				missing = append(missing, text)
			}
		}
		for text, k := range m.n {
			switch {
			case s.deleted[text]:
				back = append(back, text)
			case k > 1:
				twice = append(twice, text)
			case !s.typed[text] && !s.unsure[text]:
				unknown = append(unknown, text)
			}
		}
		for _, bad := range []struct {
			what  string
			texts []string
		}{{"prompts typed and not deleted are missing", missing}, {"prompts are listed more than once", twice},
			{"deleted prompts are listed", back}, {"prompts nobody typed are listed", unknown}} {
			if len(bad.texts) > 0 {
				t.Errorf("%s: %s: %d %s, e.g. %q", stage, m.p.machine, len(bad.texts), bad.what, some(bad.texts))
			}
		}
	}
	if outA != outB {
		t.Errorf("%s: hist-list --all -0 differs: alpha lists %d prompts, beta %d", stage, len(a), len(b))
	}
	t.Logf("%s: alpha lists %d, beta %d; %d typed, %d deleted so far", stage, len(a), len(b), len(s.typed), len(s.deleted))
}

func some(texts []string) []string {
	sort.Strings(texts)
	if len(texts) > 3 {
		texts = texts[:3]
	}
	return texts
}

// appendOld appends prompts to the project's capture file without a
// machine id, as a build from before machine ids still running on the
// machine would, and records them as typed.
func (s *scene) appendOld(p *peer, hash string, texts ...string) {
	var b []byte
	for _, text := range texts {
		b = record.Append(b, record.Record{Text: text, TS: time.Now().Add(-time.Hour).UnixMilli()})
	}
	dir := store.Store{Root: p.store}.ProjectDir(hash)
	err := os.MkdirAll(dir, 0o700)
	var f *os.File
	if err == nil {
		f, err = os.OpenFile(filepath.Join(dir, oldFile), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	}
	if err == nil {
		_, err = f.Write(b)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		s.t.Errorf("%s: %v", p.machine, err)
		return
	}
	s.mu.Lock()
	for _, text := range texts {
		s.typed[text] = true
	}
	s.mu.Unlock()
}

// oldFile is a capture file of a build from before machine ids: both
// machines append to it while their peers are paused, which makes
// Syncthing keep one side's file and name the other a conflict copy.
const oldFile = "old-agent.jsonl"

// writeSession writes a pi session transcript of the project into p's
// HOME: the prompts typed an hour ago (hist-seed leaves the prompts of
// the last 10 s to a later run).
func writeSession(t *testing.T, p *peer, canon string, prompts []string) {
	t.Helper()
	dir := filepath.Join(p.home, ".pi", "agent", "sessions", "--proj--")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	ts := time.Now().Add(-time.Hour)
	id := p.machine + "-session"
	var b bytes.Buffer
	fmt.Fprintf(&b, `{"type":"session","version":3,"id":%q,"timestamp":%q,"cwd":%q}`+"\n", id, ts.UTC().Format(time.RFC3339Nano), canon)
	for k, text := range prompts {
		at := ts.Add(time.Duration(k+1) * time.Second)
		msg, _ := json.Marshal(map[string]any{"role": "user", "content": text, "timestamp": at.UnixMilli()})
		fmt.Fprintf(&b, `{"type":"message","id":"m%d","parentId":null,"timestamp":%q,"message":%s}`+"\n", k, at.UTC().Format(time.RFC3339Nano), msg)
	}
	name := ts.UTC().Format("2006-01-02T15-04-05-000Z") + "_" + id + ".jsonl"
	if err := os.WriteFile(filepath.Join(dir, name), b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestTwoPeers shares one store between two machines through two real
// Syncthing peers, and drives every writer on both at once: captures
// (distinct prompts and a few typed on both), deletes of different
// prompts at the same moment, a compaction on each, an import of each
// machine's own transcripts of the project, then work on both while
// their peers are paused. Each time the peers have met, hist-list --all
// -0 is the same on both machines, lists every prompt typed and not
// deleted exactly once and no deleted prompt, and says nothing on stderr;
// at the end hist-compact --check finds both stores healthy.
func TestTwoPeers(t *testing.T) {
	if BinDir == "" {
		t.Skip("the binaries were not built")
	}
	if _, err := exec.LookPath("syncthing"); err != nil {
		t.Skip("syncthing is not on PATH (apt-get install syncthing): " + err.Error())
	}
	begin := time.Now()
	nCapture := testbin.Scale(50, 600) // per machine
	rounds := testbin.Scale(6, 60)     // deletes at the same moment
	if testing.Short() {
		nCapture = 100
	}

	base := t.TempDir()
	proj := filepath.Join(base, "proj")
	if err := os.MkdirAll(proj, 0o700); err != nil {
		t.Fatal(err)
	}
	canon, err := store.Canonical(proj)
	if err != nil {
		t.Fatal(err)
	}
	s := &scene{
		t: t, a: newPeer(t, base, "alpha", proj), b: newPeer(t, base, "beta", proj),
		typed: map[string]bool{}, deleted: map[string]bool{}, unsure: map[string]bool{},
		counts: map[string]int{}, conflicts: map[string]bool{},
	}
	a, b := s.a, s.b
	hash := store.Hash(canon)

	// A store from before machine ids: alpha owns the files without one
	// (legacy-owner, written as a user does) and holds an old capture
	// file, which reaches beta.
	if err := os.WriteFile(filepath.Join(a.store, "legacy-owner"), []byte(a.machine+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s.appendOld(a, hash, "typed before machine ids: explain the lock order", "typed before machine ids: rename the handler")

	// Prompts typed on both machines; the first two are deleted before
	// the import, whose transcripts hold them.
	var shared []string
	for k := range 10 {
		shared = append(shared, fmt.Sprintf("typed on both machines %d: run the migration again", k))
	}
	var importA, importB []string
	for k := range 15 {
		importA = append(importA, promptText("alpha", "imported", 9, k))
		importB = append(importB, promptText("beta", "imported", 9, k))
	}
	both := []string{"imported on both machines: bump the go version", "imported on both machines: tidy the modules"}
	writeSession(t, a, canon, append(append(append([]string{}, importA...), both...), shared[1]))
	writeSession(t, b, canon, append(append(append([]string{}, importB...), both...), shared[0]))

	// beta only accepts (see start): it listens before alpha dials.
	b.start(a)
	waitListening(t, b, 10*time.Second)
	a.start(b)
	waitConnected(t, a, b, 30*time.Second)
	t.Logf("syncthing peers connected in %.1f s", time.Since(begin).Seconds())

	// Captures on both at once.
	var ownA, ownB []string
	s.both(
		func() { ownA = s.capture(a, "typed", 3, nCapture, shared) },
		func() { ownB = s.capture(b, "typed", 3, nCapture, shared) })
	s.converge("captures")
	s.check("captures")

	// Deletes of different prompts at the same moment: each machine's
	// own, the other's, and the ones typed on both.
	take := func(pool *[]string, keep int) string {
		if len(*pool) <= keep {
			return ""
		}
		text := (*pool)[0]
		*pool = (*pool)[1:]
		return text
	}
	poolA := append([]string{}, ownA...)
	poolB := append([]string{}, ownB...)
	poolS := append([]string{}, shared...)
	for r := range rounds {
		var ta, tb string
		if r%5 == 0 {
			ta = take(&poolS, 2)
		}
		if r%5 == 2 {
			tb = take(&poolS, 2)
		}
		if ta == "" && r%2 == 0 {
			ta = take(&poolB, 50)
		}
		if ta == "" {
			ta = take(&poolA, 50)
		}
		if tb == "" && r%2 == 0 {
			tb = take(&poolA, 50)
		}
		if tb == "" {
			tb = take(&poolB, 50)
		}
		s.both(func() { s.remove(a, ta) }, func() { s.remove(b, tb) })
	}
	s.converge("deletes")
	s.check("deletes")

	// A compaction on both at once.
	s.both(func() { s.compactNow(a) }, func() { s.compactNow(b) })
	s.converge("compaction")
	s.check("compaction")

	// An import of each machine's transcripts of the project, at once.
	imports := map[*peer][]string{a: importA, b: importB}
	seed := func(p *peer) {
		_, stderr, err := p.run("hist-seed", "--project", p.proj, "--from", "pi")
		if err != nil {
			t.Errorf("%s: hist-seed: %v: %s", p.machine, err, stderr)
			return
		}
		s.mu.Lock()
		for _, text := range append(imports[p], both...) {
			s.typed[text] = true
		}
		s.mu.Unlock()
		for _, m := range written.FindAllStringSubmatch(stderr, -1) {
			n, _ := strconv.Atoi(m[1])
			s.count("imports", n)
		}
	}
	s.both(func() { seed(a) }, func() { seed(b) })
	s.converge("import")
	s.check("import")

	// The peers paused: alpha captures, deletes and compacts, beta
	// captures and deletes; neither sees the other's work until resumed.
	for _, x := range [][2]*peer{{a, b}, {b, a}} {
		if err := x[0].rest("POST", "/rest/system/pause?device="+x[1].id, nil); err != nil {
			t.Fatal(err)
		}
	}
	for deadline := time.Now().Add(20 * time.Second); a.connected(b) || b.connected(a); time.Sleep(200 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the peers are still connected 20 s after the pause")
		}
	}
	var offA []string
	legacyA, legacyB := "an older build on alpha typed this offline", "an older build on beta typed this offline"
	s.both(func() {
		offA = s.capture(a, "offline", 2, nCapture/4, nil)
		for _, text := range []string{take(&poolA, 0), take(&poolB, 0), take(&poolS, 1), take(&offA, 0), take(&poolA, 0)} {
			s.remove(a, text)
		}
		s.compactNow(a)
		s.appendOld(a, hash, legacyA)
	}, func() {
		s.capture(b, "offline", 2, nCapture/8, nil)
		for _, text := range []string{take(&poolB, 0), take(&poolA, 0)} {
			s.remove(b, text)
		}
		s.appendOld(b, hash, legacyB)
	})
	// Each peer indexes its own change to the old file before they meet
	// (a scan request returns once the scan is done): Syncthing then sees
	// two concurrent versions and keeps the loser as a conflict copy.
	// A change still unscanned when the other's version arrives can be
	// overwritten without one.
	for _, p := range []*peer{a, b} {
		if err := p.rest("POST", "/rest/db/scan?folder="+folderID, nil); err != nil {
			t.Fatal(err)
		}
	}
	_, seen := s.list(b)
	for _, text := range offA {
		if seen[text] > 0 {
			t.Fatalf("beta lists %q, captured on alpha while the peers were paused: the pause did not hold", text)
		}
	}
	for _, x := range [][2]*peer{{a, b}, {b, a}} {
		if err := x[0].rest("POST", "/rest/system/resume?device="+x[1].id, nil); err != nil {
			t.Fatal(err)
		}
	}
	waitConnected(t, a, b, 30*time.Second)
	s.converge("pause")
	s.check("pause")

	// Each machine deletes the other's offline prompt of the old file,
	// which one of them now holds in a conflict copy; then both compact.
	// The file's owner, alpha, sweeps and merges the old file and its
	// conflict copies.
	s.both(func() { s.remove(a, legacyB) }, func() { s.remove(b, legacyA) })
	s.converge("old file deletes")
	s.both(func() { s.compactNow(a) }, func() { s.compactNow(b) })
	s.converge("old file compaction")
	s.check("old file")

	// Both stores are healthy.
	for _, p := range []*peer{a, b} {
		out, stderr, err := p.run("hist-compact", "--check")
		if err != nil || stderr != "" || !strings.Contains(out, "healthy: no problem found") {
			t.Errorf("%s: hist-compact --check: %v; stderr %q\n%s", p.machine, err, stderr, out)
		}
	}

	left := map[string]int64{} // conflict copies still there: size
	for _, p := range []*peer{a, b} {
		_, names := snapshot(p.store)
		for _, name := range names {
			if fi, err := os.Stat(filepath.Join(p.store, name)); err == nil {
				left[name] = fi.Size()
			}
		}
	}
	t.Logf("%d captures, %d deletes, %d imported, %d compactions; conflict copies: %d seen, %d absorbed, %d left; %.1f s",
		s.counts["captures"], s.counts["deletes"], s.counts["imports"], s.counts["compactions"],
		len(s.conflicts), len(s.conflicts)-len(left), len(left), time.Since(begin).Seconds())
	for name, size := range left {
		t.Logf("conflict copy left: %s (%d bytes)", name, size)
	}
}
