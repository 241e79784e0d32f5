package stress

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"hist/internal/testbin"
	"hist/lib/record"
	"hist/lib/seed"
	"hist/lib/store"
	"hist/testscripts/internal/crashtest"
)

var crashKills = flag.Int("crash.kills", testbin.Scale(6, 100), "TestCrashLoops: SIGKILLs of each rewriter (6, or 100 with HIST_LONG=1; at most 20 under -short)")

// crashLoop is one rewriter's crash loop: the fixture, with two capturers
// running all along, and the model of what must be visible.
type crashLoop struct {
	*crashtest.Fixture
	wmu      sync.Mutex
	want     map[string]bool // must be listed, once
	maybe    map[string]bool // may be listed (once) or not
	captured int
	warnings int // hist-list warnings (malformed lines)
}

func newCrashLoop(t *testing.T) *crashLoop {
	return &crashLoop{
		Fixture: crashtest.New(t, BinDir, 7),
		want:    map[string]bool{},
		maybe:   map[string]bool{},
	}
}

// fill writes a new store file of n prompts into the project.
func (c *crashLoop) fill(name string, n int) {
	c.Mu.Lock()
	defer c.Mu.Unlock()
	var b []byte
	for j := range n {
		text := fmt.Sprintf("crash %s prompt %04d %s", name, j, strings.Repeat("pad ", c.Rng.IntN(40)))
		b = record.Append(b, record.Record{Text: text, TS: 1_650_000_000_000 + int64(c.Rng.IntN(1_000_000))})
		c.want[text] = true
	}
	if err := os.WriteFile(filepath.Join(c.Dir, name+".jsonl"), b, 0o600); err != nil {
		c.T.Fatal(err)
	}
}

// capturers starts two capture loops (each into two instance files); the
// returned func stops them.
func (c *crashLoop) capturers() (stop func()) {
	return c.Capturers(func(g, k int) []string {
		return []string{"--instance", fmt.Sprintf("live-%d-%d", g, k%2), fmt.Sprintf("crash live %d/%d", g, k)}
	}, func(text string) {
		c.wmu.Lock()
		c.want[text] = true
		c.captured++
		c.wmu.Unlock()
	}, 20*time.Millisecond)
}

// check compares hist-list --all with the model: every wanted prompt
// listed exactly once, nothing else listed but the maybe ones (once).
func (c *crashLoop) check(when string) {
	c.T.Helper()
	c.Mu.Lock()
	defer c.Mu.Unlock()
	if c.T.Failed() {
		c.T.FailNow()
	}
	prompts, stderr := c.List(when, "--all")
	if len(stderr) > 0 {
		c.warnings++
	}
	seen := map[string]bool{}
	for _, b := range prompts {
		p := string(b)
		if seen[p] {
			c.T.Fatalf("%s: %q is listed twice", when, p)
		}
		seen[p] = true
		if !c.want[p] && !c.maybe[p] {
			c.T.Fatalf("%s: %q is listed but must not be (deleted, or never written)", when, p)
		}
	}
	missing := 0
	for p := range c.want {
		if !seen[p] {
			if missing < 5 {
				c.T.Errorf("%s: %q is not listed", when, p)
			}
			missing++
		}
	}
	if missing > 0 {
		c.T.Fatalf("%s: %d of %d prompts are not listed", when, missing, len(c.want))
	}
}

// killRun starts cmd and SIGKILLs it after a random delay, uniform over
// the length of a clean run.
func (c *crashLoop) killRun(cmd *exec.Cmd) (time.Duration, bool) {
	delay := c.Delay()
	killed, _, _ := c.KillAt(cmd, time.After(delay))
	return delay, killed
}

// clean runs cmd to its end, learning how long a run takes; it returns
// the exit code and the output.
func (c *crashLoop) clean(cmd *exec.Cmd) (int, string) {
	t0 := time.Now()
	out, err := cmd.CombinedOutput()
	c.Learn(time.Since(t0))
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode(), string(out)
	}
	if err != nil {
		c.T.Fatal(err)
	}
	return 0, string(out)
}

// TestCrashLoops SIGKILLs each rewriter at random moments, -crash.kills
// times each, while two capturers keep appending, and after every kill
// and after the clean run that follows it checks what hist-list shows:
// no visible prompt lost, no deleted prompt visible, none twice.
func TestCrashLoops(t *testing.T) {
	if BinDir == "" {
		t.Skip("the binaries were not built")
	}
	kills := *crashKills
	if testing.Short() {
		kills = min(kills, 20)
	}
	t.Run("delete", func(t *testing.T) { crashDelete(t, kills) })
	t.Run("compact", func(t *testing.T) { crashCompact(t, kills) })
	t.Run("seed", func(t *testing.T) { crashSeed(t, kills) })
	t.Run("import", func(t *testing.T) { crashImport(t, kills) })
	t.Run("enable", func(t *testing.T) { crashEnable(t, kills) })
}

// crashDelete: a killed hist-delete may leave its prompt listed or not
// (the tombstone is written last); the clean re-run, the same command,
// completes it: then the prompt is deleted and never listed again.
func crashDelete(t *testing.T, kills int) {
	start := time.Now()
	c := newCrashLoop(t)
	for i := range 8 {
		c.fill(fmt.Sprintf("old-%d", i), 300)
	}
	stop := c.capturers()
	defer stop()
	c.check("before any run")
	var candidates []string
	for p := range c.want {
		candidates = append(candidates, p)
	}
	var leftTemps int
	for i := range kills {
		k := c.Rng.IntN(len(candidates))
		text := candidates[k]
		candidates = append(candidates[:k], candidates[k+1:]...)
		c.Mu.Lock()
		delete(c.want, text)
		c.maybe[text] = true
		c.Mu.Unlock()
		scope := "--project=" + c.Proj
		if i%2 == 1 {
			scope = "--all"
		}
		delay, killed := c.killRun(c.Cmd("hist-delete", scope, text))
		when := fmt.Sprintf("kill %d of hist-delete %s (at %v, killed %v)", i, scope, delay, killed)
		c.check("after " + when)
		if n := crashtest.StaleTemps(c.Dir); n > 0 {
			leftTemps++
		}
		// The killed run may have removed every copy before it wrote the
		// tombstone: the clean run asks for the tombstone all the same
		// (--hide), as a user re-running a delete that was stopped would.
		if code, out := c.clean(c.Cmd("hist-delete", "--hide", scope, text)); code != 0 {
			t.Fatalf("the clean run after %s: exit %d: %s", when, code, out)
		}
		c.Mu.Lock()
		delete(c.maybe, text)
		c.Mu.Unlock()
		c.check("after the clean run after " + when)
		// No copy left in the project's files (temp files included).
		ents, _ := os.ReadDir(c.Dir)
		for _, e := range ents {
			data, err := os.ReadFile(filepath.Join(c.Dir, e.Name()))
			if err == nil && bytes.Contains(data, record.AppendString(nil, text)) {
				t.Errorf("after the clean run after %s: %s still holds a copy of the deleted prompt", when, e.Name())
			}
		}
		if n := crashtest.StaleTemps(c.Dir); n > 0 {
			t.Errorf("after the clean run after %s: %d stale temp file(s) left", when, n)
		}
	}
	t.Logf("hist-delete: %d runs: %d killed, %d ended before their kill; %d kills left a stale temp file, each swept by the clean run; %d prompts captured meanwhile; %d hist-list warnings; %v",
		kills, c.Killed, c.Ended, leftTemps, c.captured, c.warnings, time.Since(start).Round(time.Millisecond))
}

// crashCompact: claims and temp files left by a killed hist-compact are
// handled by the clean re-run (which merges again at the same lowered
// thresholds): no claim and no stale temp file after it.
func crashCompact(t *testing.T, kills int) {
	start := time.Now()
	c := newCrashLoop(t)
	stop := c.capturers()
	defer stop()
	args := []string{"--project=" + c.Proj, "--max-files", "5", "--keep", "2", "--current", "nobody"}
	var withClaims, withTemps, gen int
	for i := range kills {
		// Top up to 8 old files, so each run has something to merge.
		for range 3 {
			gen++
			c.fill(fmt.Sprintf("old-%05d", gen), 20+c.Rng.IntN(60))
		}
		delay, killed := c.killRun(c.Cmd("hist-compact", args...))
		when := fmt.Sprintf("kill %d of hist-compact (at %v, killed %v)", i, delay, killed)
		c.check("after " + when)
		claims := 0
		ents, _ := os.ReadDir(c.Dir)
		for _, e := range ents {
			if store.Classify(e.Name()) == store.Claim {
				claims++
			}
		}
		if claims > 0 {
			withClaims++
		}
		if crashtest.StaleTemps(c.Dir) > 0 {
			withTemps++
		}
		if code, out := c.clean(c.Cmd("hist-compact", args...)); code != 0 {
			t.Fatalf("the clean run after %s: exit %d: %s", when, code, out)
		}
		c.check("after the clean run after " + when)
		ents, _ = os.ReadDir(c.Dir)
		for _, e := range ents {
			if store.Classify(e.Name()) == store.Claim {
				t.Errorf("after the clean run after %s: claim %s left", when, e.Name())
			}
		}
		if n := crashtest.StaleTemps(c.Dir); n > 0 {
			t.Errorf("after the clean run after %s: %d stale temp file(s) left", when, n)
		}
	}
	t.Logf("hist-compact: %d runs: %d killed, %d ended before their kill; %d kills left claims, %d left a stale temp file, all handled by the clean run; %d prompts captured meanwhile; %d hist-list warnings; %v",
		kills, c.Killed, c.Ended, withClaims, withTemps, c.captured, c.warnings, time.Since(start).Round(time.Millisecond))
}

// crashSeed: each round bootstraps a new project from a pi session and
// migrates Claude Code's history.jsonl again (its migrated record removed,
// one new prompt added). A kill may leave the migration's lock folder: the
// clean re-run then reports it (exit 5) and still bootstraps; the test
// removes the folder by hand, as a user would, and the next run migrates.
func crashSeed(t *testing.T, kills int) {
	start := time.Now()
	c := newCrashLoop(t)
	c.fill("old", 200)
	sessions := filepath.Join(c.Home, "sessions")
	claude := filepath.Join(c.Home, ".claude")
	for _, d := range []string{sessions, claude} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	legacyPath := filepath.Join(claude, "history.jsonl")
	var legacy bytes.Buffer
	addLegacy := func(text string, ts int) {
		fmt.Fprintf(&legacy, `{"display":%q,"pastedContents":{},"timestamp":%d,"project":"/p/a","sessionId":"sess-1"}`+"\n", text, ts)
		if err := os.WriteFile(legacyPath, legacy.Bytes(), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for j := range 3000 {
		addLegacy(fmt.Sprintf("legacy prompt %04d from the old history", j), 1_700_000_000_000+j)
	}
	lockDir := filepath.Join(c.Store.Root, "history-global.jsonl.migration-lock")
	migrated := seed.MigratedPath(c.Store)
	seedCmd := func(proj string) *exec.Cmd {
		return c.Cmd("hist-seed", "--project", proj, "--from", "pi,claude", "--sessions", sessions, "-q")
	}
	round := func(i int) (string, []string) {
		proj := filepath.Join(c.Home, fmt.Sprintf("p%03d", i))
		if err := os.MkdirAll(proj, 0o700); err != nil {
			t.Fatal(err)
		}
		canon, _ := store.Canonical(proj)
		var sess bytes.Buffer
		fmt.Fprintf(&sess, `{"type":"session","version":3,"id":"s%d","timestamp":"2026-01-01T00:00:00.000Z","cwd":%q}`+"\n", i, canon)
		var texts []string
		for j := range 3 {
			text := fmt.Sprintf("seeded prompt %d of round %d", j, i)
			texts = append(texts, text)
			fmt.Fprintf(&sess, `{"type":"message","id":"m%d","parentId":null,"timestamp":"2026-01-01T00:00:0%d.000Z","message":{"role":"user","content":%q,"timestamp":%d}}`+"\n", j, j, text, 1767225601000+j)
		}
		if err := os.WriteFile(filepath.Join(sessions, fmt.Sprintf("s%03d.jsonl", i)), sess.Bytes(), 0o600); err != nil {
			t.Fatal(err)
		}
		return proj, texts
	}

	// The first migration, clean.
	proj, texts := round(0)
	if code, out := c.clean(seedCmd(proj)); code != 0 {
		t.Fatalf("first hist-seed: exit %d: %s", code, out)
	}
	for j := range 3000 {
		c.want[fmt.Sprintf("legacy prompt %04d from the old history", j)] = true
	}
	for _, text := range texts {
		c.want[text] = true
	}
	stop := c.capturers()
	defer stop()
	c.check("after the first run")

	var locks, lateLocks, seedWritten, leftTemps int
	for i := 1; i <= kills; i++ {
		proj, texts := round(i)
		newLegacy := fmt.Sprintf("legacy prompt added before round %d", i)
		addLegacy(newLegacy, 1_800_000_000_000+i)
		if err := os.Remove(migrated); err != nil {
			t.Fatal(err)
		}
		c.Mu.Lock()
		for _, text := range append(texts, newLegacy) {
			c.maybe[text] = true
		}
		c.Mu.Unlock()
		delay, killed := c.killRun(seedCmd(proj))
		when := fmt.Sprintf("kill %d of hist-seed (at %v, killed %v)", i, delay, killed)
		c.check("after " + when)
		if crashtest.StaleTemps(c.Store.Root)+crashtest.StaleTemps(c.Store.ProjectDir(store.Hash(mustCanon(proj)))) > 0 {
			leftTemps++
		}
		if _, err := os.Stat(filepath.Join(c.Store.ProjectDir(store.Hash(mustCanon(proj))), "seed@"+c.Store.Machine+".jsonl")); err == nil {
			seedWritten++
		}
		_, err := os.Stat(lockDir)
		held := err == nil
		_, err = os.Stat(migrated)
		recorded := err == nil
		code, out := c.clean(seedCmd(proj))
		if held && recorded {
			// Killed after the migration was recorded, before the folder
			// was removed: nothing is left to migrate, so the folder does
			// not matter to this run; it stays until removed by hand.
			lateLocks++
			if code != 0 {
				t.Fatalf("the clean run after %s (lock folder left, migration recorded): exit %d: %s", when, code, out)
			}
			if _, err := os.Stat(lockDir); err != nil {
				t.Fatalf("after %s: the lock folder is gone", when)
			}
			if err := os.Remove(lockDir); err != nil {
				t.Fatal(err)
			}
		} else if held {
			locks++
			if code != 5 || !strings.Contains(out, lockDir) {
				t.Fatalf("the clean run after %s (lock folder left): exit %d, want 5 naming the folder: %s", when, code, out)
			}
			if _, err := os.Stat(lockDir); err != nil {
				t.Fatalf("after %s: the lock folder is gone after the run that reported it", when)
			}
			// The bootstrap still ran; the migration waits for the user.
			c.Mu.Lock()
			for _, text := range texts {
				delete(c.maybe, text)
				c.want[text] = true
			}
			c.Mu.Unlock()
			c.check("after the run reporting the lock folder after " + when)
			if err := os.Remove(lockDir); err != nil {
				t.Fatal(err)
			}
			code, out = c.clean(seedCmd(proj))
		}
		if code != 0 {
			t.Fatalf("the clean run after %s: exit %d: %s", when, code, out)
		}
		if _, err := os.Stat(lockDir); err == nil {
			t.Fatalf("after the clean run after %s: the lock folder stays", when)
		}
		if _, err := os.Stat(migrated); err != nil {
			t.Fatalf("after the clean run after %s: no migration record: %v", when, err)
		}
		c.Mu.Lock()
		for _, text := range append(texts, newLegacy) {
			delete(c.maybe, text)
			c.want[text] = true
		}
		c.Mu.Unlock()
		c.check("after the clean run after " + when)
		// The clean run swept the temp files a kill left (they may hold
		// copies of prompts).
		if n := crashtest.StaleTemps(c.Store.Root) + crashtest.StaleTemps(c.Store.ProjectDir(store.Hash(mustCanon(proj)))); n > 0 {
			ents, _ := os.ReadDir(c.Store.Root)
			var names []string
			for _, e := range ents {
				names = append(names, e.Name())
			}
			t.Errorf("after the clean run after %s: %d stale temp file(s) left (store folder: %v)", when, n, names)
		}
	}
	t.Logf("hist-seed: %d runs: %d killed, %d ended before their kill; %d kills left the migration lock folder (reported by the next run, removed by hand, then migrated), %d more after the migration was recorded (nothing left to migrate: the next run exits 0; removed by hand); %d kills left the seed file written; %d left a stale temp file, swept by the clean run; %d prompts captured meanwhile; %d hist-list warnings; %v",
		kills, c.Killed, c.Ended, locks, lateLocks, seedWritten, leftTemps, c.captured, c.warnings, time.Since(start).Round(time.Millisecond))
}

// crashImport: the project's pi sessions grow between runs (a session goes
// on, a new one starts) and hist-seed imports them, killed at a random
// moment; after the clean run that follows, every prompt of the
// transcripts is in the project's store files exactly once (counted in
// the files, not through hist-list, which would hide a second copy).
func crashImport(t *testing.T, kills int) {
	start := time.Now()
	c := newCrashLoop(t)
	c.fill("old", 200)
	sessions := filepath.Join(c.Home, "sessions")
	if err := os.MkdirAll(sessions, 0o700); err != nil {
		t.Fatal(err)
	}
	canon := mustCanon(c.Proj)
	var typed []string
	var sess *os.File
	n := 0
	grow := func(round int) {
		if sess == nil || c.Rng.IntN(3) == 0 {
			if sess != nil {
				sess.Close()
			}
			var err error
			sess, err = os.OpenFile(filepath.Join(sessions, fmt.Sprintf("s%03d.jsonl", round)), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(sess, `{"type":"session","version":3,"id":"s%d","timestamp":"2026-01-01T00:00:00.000Z","cwd":%q}`+"\n", round, canon)
		}
		for range 1 + c.Rng.IntN(40) {
			n++
			text := fmt.Sprintf("imported prompt %05d %s", n, strings.Repeat("word ", c.Rng.IntN(30)))
			typed = append(typed, text)
			fmt.Fprintf(sess, `{"type":"message","id":"m%d","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"user","content":%q,"timestamp":%d}}`+"\n", n, text, 1767225601000+int64(n)*1000)
		}
	}
	seedCmd := func() *exec.Cmd {
		return c.Cmd("hist-seed", "--all-projects", "--from", "pi", "--sessions", sessions, "-q")
	}
	stop := c.capturers()
	defer stop()
	// exactlyOnce checks that each prompt typed so far has one record in
	// the project's files, and that no other imported record is there.
	exactlyOnce := func(when string) {
		count := map[string]int{}
		ents, _ := os.ReadDir(c.Dir)
		for _, e := range ents {
			if store.Classify(e.Name()) == store.NotStore {
				continue
			}
			f, err := os.Open(filepath.Join(c.Dir, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			record.Scan(f, func(l *record.Line) error {
				if text := string(l.Text); strings.HasPrefix(text, "imported prompt ") {
					count[text]++
				}
				return nil
			})
			f.Close()
		}
		for _, text := range typed {
			if count[text] != 1 {
				t.Fatalf("%s: %q has %d records, want 1", when, text, count[text])
			}
		}
		if len(count) != len(typed) {
			t.Fatalf("%s: %d prompts imported, %d typed", when, len(count), len(typed))
		}
	}
	var leftTemps int
	for i := range kills {
		grow(i)
		delay, killed := c.killRun(seedCmd())
		when := fmt.Sprintf("kill %d of hist-seed (at %v, killed %v)", i, delay, killed)
		if crashtest.StaleTemps(c.Dir) > 0 {
			leftTemps++
		}
		if code, out := c.clean(seedCmd()); code != 0 {
			t.Fatalf("the clean run after %s: exit %d: %s", when, code, out)
		}
		exactlyOnce("after the clean run after " + when)
		if n := crashtest.StaleTemps(c.Dir); n > 0 {
			t.Errorf("after the clean run after %s: %d stale temp file(s) left", when, n)
		}
	}
	sess.Close()
	c.Mu.Lock()
	for _, text := range typed {
		c.want[text] = true
	}
	c.Mu.Unlock()
	c.check("at the end")
	t.Logf("hist-seed imports: %d runs: %d killed, %d ended before their kill; %d kills left a stale temp file, swept by the clean run; %d prompts typed, each imported once; %d prompts captured meanwhile; %v",
		kills, c.Killed, c.Ended, leftTemps, len(typed), c.captured, time.Since(start).Round(time.Millisecond))
}

func mustCanon(dir string) string {
	canon, _ := store.Canonical(dir)
	return canon
}

// crashEnable: hist-capture --enable and --disable in turn, killed; the
// preference file is always absent, the old content or the new one,
// never anything else; the clean re-run leaves the new content.
func crashEnable(t *testing.T, kills int) {
	start := time.Now()
	c := newCrashLoop(t)
	c.fill("old", 200)
	stop := c.capturers()
	defer stop()
	config := filepath.Join(c.Home, ".pi", "gentle-ai")
	pref := filepath.Join(config, "history-capture.json")
	// The preference commands run without the variable that forces capture on.
	prefCmd := func(on bool) *exec.Cmd {
		flag := "--disable"
		if on {
			flag = "--enable"
		}
		cmd := exec.Command(filepath.Join(BinDir, "hist-capture"), flag)
		cmd.Env, cmd.Dir = []string{"HOME=" + c.Home, "PATH=" + os.Getenv("PATH")}, c.Proj
		return cmd
	}
	contents := map[bool]string{}
	for _, on := range []bool{false, true} {
		if code, out := c.clean(prefCmd(on)); code != 0 {
			t.Fatalf("hist-capture on=%v: exit %d: %s", on, code, out)
		}
		data, err := os.ReadFile(pref)
		if err != nil {
			t.Fatal(err)
		}
		contents[on] = string(data)
	}
	if contents[true] == contents[false] {
		t.Fatalf("--enable and --disable save the same content: %q", contents[true])
	}
	if err := os.Remove(pref); err != nil {
		t.Fatal(err)
	}
	old, absent := "", true
	var sawOld, sawNew, sawAbsent, leftTemps int
	for i := range kills {
		on := i%2 == 0
		delay, killed := c.killRun(prefCmd(on))
		when := fmt.Sprintf("kill %d of hist-capture on=%v (at %v, killed %v)", i, on, delay, killed)
		data, err := os.ReadFile(pref)
		switch {
		case errors.Is(err, os.ErrNotExist) && absent:
			sawAbsent++
		case err != nil:
			t.Fatalf("after %s: %v", when, err)
		case string(data) == contents[on]:
			sawNew++
		case !absent && string(data) == old:
			sawOld++
		default:
			t.Fatalf("after %s: the preference file holds %q: neither the old nor the new content", when, data)
		}
		if n := crashtest.StaleTemps(config); n > 0 {
			leftTemps++
		}
		if code, out := c.clean(prefCmd(on)); code != 0 {
			t.Fatalf("the clean run after %s: exit %d: %s", when, code, out)
		}
		data, err = os.ReadFile(pref)
		if err != nil || string(data) != contents[on] {
			t.Fatalf("after the clean run after %s: %q, %v; want %q", when, data, err, contents[on])
		}
		if n := crashtest.StaleTemps(config); n > 0 {
			t.Errorf("after the clean run after %s: %d stale temp file(s) left in %s", when, n, config)
		}
		if fi, err := os.Stat(pref); err != nil || fi.Mode().Perm() != 0o600 {
			t.Fatalf("after the clean run after %s: the preference file's mode: %v %v", when, fi.Mode(), err)
		}
		old, absent = string(data), false
		if i%10 == 9 {
			c.check("after " + when)
		}
	}
	c.check("at the end")
	t.Logf("hist-capture --enable/--disable: %d runs: %d killed, %d ended before their kill; after the kill the file was absent %d times, old %d, new %d; %d kills left a stale temp file in %s, swept by the clean run; %d prompts captured meanwhile; %v",
		kills, c.Killed, c.Ended, sawAbsent, sawOld, sawNew, leftTemps, config, c.captured, time.Since(start).Round(time.Millisecond))
}
