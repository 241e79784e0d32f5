package concurrency

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"hist/internal/testbin"
	"hist/lib/atomicfile"
	"hist/lib/record"
	"hist/lib/store"
	"hist/lib/tombstone"
	"hist/testscripts/internal/crashtest"
)

var compactKills = flag.Int("compact-kills", testbin.Scale(12, 200), "how many times TestCompactCrash SIGKILLs hist-compact (12, or 200 with HIST_LONG=1)")

// TestCompactCrash runs hist-compact on a project of 80 files and 60,000
// entries while two real hist-capture processes keep appending, and
// SIGKILLs it at a random moment, -compact-kills times (re-seeding the
// project up to 80 files each time). After every kill, and after a final
// clean run: every prompt visible before is visible, none twice, every
// prompt captured meanwhile is visible, and every one of them is in the
// raw files at least once. The final clean run leaves no claim and no
// stale temp file behind.
func TestCompactCrash(t *testing.T) {
	if BinDir == "" {
		t.Skip("no binaries")
	}
	for _, c := range []string{"hist-capture", "hist-list", "hist-compact"} {
		if _, err := os.Stat(filepath.Join(BinDir, c)); err != nil {
			t.Skipf("%s was not built", c)
		}
	}
	start := time.Now()
	c := &crash{Fixture: crashtest.New(t, BinDir, 1), want: map[string]int{}}

	// 80 files, 60,000 entries; some of them hidden by a tombstone.
	c.seed(80, 750)
	hidden := &tombstone.Set{Path: c.Store.Hidden()}
	// Hide 25 of them: they must never be listed.
	for i := 0; i < 25*300; i += 300 {
		hidden.Add(c.order[i])
	}
	c.rebuild(func(text string) bool { return !hidden.Hidden(text) })
	if err := hidden.Save(); err != nil {
		t.Fatal(err)
	}
	c.check("before any run")

	// Two capturers: one with old timestamps (its files are always among
	// the merged ones, so it appends to files being claimed), one with the
	// current time.
	stop := c.capturers()
	stopped := false
	defer func() {
		if !stopped {
			stop()
		}
	}()

	// A clean run first, to time a compaction of this project.
	t0 := time.Now()
	if out, err := c.compact().CombinedOutput(); err != nil {
		t.Fatalf("first run: %v\n%s", err, out)
	}
	full := time.Since(t0)
	c.check("after the first clean run")
	t.Logf("a compaction of %d entries took %v", len(c.want), full)

	// Each kill lands at a random moment of a run: the delay is uniform
	// over the expected length of a run, learnt from the runs that ended
	// before their kill (the machine's load changes it).
	c.Est = full
	var withClaims, withTemps, afterCommit, claims, temps int
	for i := range *compactKills {
		c.seed(80, 1)
		before := c.compacts()
		delay := c.Delay()
		trigger := time.After(delay)
		polled := make(chan struct{})
		if i%4 == 3 {
			// Every fourth kill waits for the new compact file to appear
			// (the commit), then up to 3 ms: the window where the compact
			// file and the claims are both on disk.
			trigger = c.afterCommit(polled, before, time.Duration(c.Rng.Int64N(int64(3*time.Millisecond))))
			delay = -1
		}
		killed, out, err := c.KillAt(c.compact(), trigger)
		close(polled)
		if !killed && err != nil {
			t.Fatalf("run %d ended before its kill: %v\n%s", i, err, out)
		}
		if killed {
			c.streak++
		} else {
			c.streak = 0
		}
		at := fmt.Sprintf("at %v", delay)
		if delay < 0 {
			at = "after the commit"
		}
		cl, tmp, committed := c.checkAll(fmt.Sprintf("after kill %d (%s)", i, at))
		if committed {
			afterCommit++
		}
		claims += cl
		temps += tmp
		if cl > 0 {
			withClaims++
		}
		if tmp > 0 {
			withTemps++
		}
	}

	// The final clean run, writers still running.
	if out, err := c.compact().CombinedOutput(); err != nil {
		t.Fatalf("final run: %v\n%s", err, out)
	}
	stop()
	stopped = true
	cl, tmp := c.check("after the final clean run")
	if cl != 0 {
		t.Errorf("%d claim(s) left after the final clean run", cl)
	}
	if tmp != 0 {
		t.Errorf("%d stale temp file(s) left after the final clean run", tmp)
	}
	t.Logf("%d runs: %d killed mid-run, %d ended before their kill; %d kills left claims (%d in all), %d left a temp file (%d in all), %d left a committed compact file beside claims, each handled by the next run; %d prompts captured meanwhile; %d prompts visible at the end; %v in all",
		*compactKills, c.Killed, c.Ended, withClaims, claims, withTemps, temps, afterCommit, c.captured, len(c.want), time.Since(start).Round(time.Second))
}

type crash struct {
	*crashtest.Fixture
	gen int
	ts  int64

	wmu      sync.Mutex     // captures' writes to want
	want     map[string]int // every prompt that must be visible -> its index in order
	order    []string
	captured int

	epoch         int
	listed, inRaw []int // the epoch of the check that last found each prompt

	// streak counts the runs killed since the last one that ended: each
	// may have committed a compact file beside the claims it merged (one
	// more copy of their lines, which the next run that ends removes).
	streak int
}

// add records a prompt that must be visible from now on.
func (c *crash) add(text string) {
	c.want[text] = len(c.order)
	c.order = append(c.order, text)
}

// compacts lists the compact files in the folder.
func (c *crash) compacts() map[string]bool {
	ents, _ := os.ReadDir(c.Dir)
	out := map[string]bool{}
	for _, e := range ents {
		if store.Classify(e.Name()) == store.Compact && !strings.Contains(e.Name(), ".gc-") {
			out[e.Name()] = true
		}
	}
	return out
}

// afterCommit returns a channel that fires extra after a compact file that
// is not in before appears (or never, if polled is closed first: the run
// ended).
func (c *crash) afterCommit(polled chan struct{}, before map[string]bool, extra time.Duration) <-chan time.Time {
	fire := make(chan time.Time, 1)
	go func() {
		for {
			for name := range c.compacts() {
				if !before[name] {
					time.Sleep(extra)
					fire <- time.Now()
					return
				}
			}
			select {
			case <-time.After(100 * time.Microsecond):
			case <-polled:
				return
			}
		}
	}()
	return fire
}

// rebuild keeps the prompts that keep says stay visible.
func (c *crash) rebuild(keep func(string) bool) {
	order := c.order
	c.want, c.order = map[string]int{}, nil
	for _, text := range order {
		if keep(text) {
			c.add(text)
		}
	}
}

func (c *crash) compact() *exec.Cmd {
	return c.Cmd("hist-compact", "--project", c.Proj, "--current", "nobody")
}

const letters = "abcdefghijklmnopqrstuvwxyz ABCDEFGHIJKLMNOPQRSTUVWXYZ 0123456789 .,;:!?\"\\\t/{}[]é€"

// seed tops the project up to n files, each new file holding per entries
// of 20-400 bytes, newer than everything before.
func (c *crash) seed(n, per int) {
	ents, err := os.ReadDir(c.Dir)
	if err != nil {
		c.T.Fatal(err)
	}
	have := 0
	for _, e := range ents {
		if store.Classify(e.Name()) != store.NotStore {
			have++
		}
	}
	c.Mu.Lock()
	defer c.Mu.Unlock()
	for i := have; i < n; i++ {
		c.gen++
		var b []byte
		for j := range per {
			c.ts++
			pad := make([]byte, 10+c.Rng.IntN(380))
			for k := range pad {
				pad[k] = letters[c.Rng.IntN(len(letters))]
			}
			text := fmt.Sprintf("seed %d.%d %s", c.gen, j, strings.ToValidUTF8(string(pad), "?"))
			c.add(text)
			b = record.Append(b, record.Record{Text: text, TS: 1_000_000_000 + c.ts})
		}
		if err := os.WriteFile(filepath.Join(c.Dir, fmt.Sprintf("seeded-%06d.jsonl", c.gen)), b, 0o600); err != nil {
			c.T.Fatal(err)
		}
	}
}

// capturers starts two capture loops: loop 0 with old timestamps (its
// files are always among the merged ones, so it appends to files being
// claimed), loop 1 with the current time; the returned func stops them.
func (c *crash) capturers() (stop func()) {
	return c.Capturers(func(g, k int) []string {
		ts := time.Now().UnixMilli()
		if g == 0 {
			ts = int64(1000 + k)
		}
		return []string{"--instance", fmt.Sprintf("writer-%d-%d", g, k%3), "--ts", strconv.FormatInt(ts, 10), fmt.Sprintf("live %d/%d", g, k)}
	}, func(text string) {
		c.wmu.Lock()
		c.add(text)
		c.captured++
		c.wmu.Unlock()
	}, 10*time.Millisecond)
}

// check stops the writers for a moment and compares what hist-list shows
// with what must be visible; it returns how many claims and stale temp
// files are in the folder.
func (c *crash) check(when string) (claims, temps int) {
	claims, temps, _ = c.checkAll(when)
	return claims, temps
}

// checkAll is check, also saying whether a compact file sits beside the
// claims (a kill after the commit, before every claim was removed).
func (c *crash) checkAll(when string) (claims, temps int, committed bool) {
	c.T.Helper()
	c.Mu.Lock()
	defer c.Mu.Unlock()
	if c.T.Failed() {
		c.T.FailNow()
	}
	prompts, _ := c.List(when, "--project", c.Proj)
	// Each check stamps what it finds with its own epoch: no allocation
	// a prompt.
	c.epoch++
	if len(c.listed) < len(c.order) {
		c.listed = append(c.listed, make([]int, len(c.order)-len(c.listed))...)
		c.inRaw = append(c.inRaw, make([]int, len(c.order)-len(c.inRaw))...)
	}
	listed := 0
	for _, text := range prompts {
		ix, ok := c.want[string(text)]
		if !ok {
			c.T.Fatalf("%s: %q is listed but was never visible (hidden, or never written)", when, text)
		}
		if c.listed[ix] == c.epoch {
			c.T.Fatalf("%s: %q is listed twice", when, text)
		}
		c.listed[ix] = c.epoch
		listed++
	}
	if listed != len(c.order) {
		n := 0
		for ix, text := range c.order {
			if c.listed[ix] != c.epoch && n < 5 {
				c.T.Errorf("%s: %q is not listed", when, text)
				n++
			}
		}
		c.T.Fatalf("%s: %d of %d prompts are not listed", when, len(c.order)-listed, len(c.order))
	}

	// The raw files: every prompt at least once.
	ents, err := os.ReadDir(c.Dir)
	if err != nil {
		c.T.Fatal(err)
	}
	raw, lines := 0, 0
	for _, e := range ents {
		name := e.Name()
		if atomicfile.IsTemp(name) {
			if atomicfile.Stale(name) {
				temps++
			}
			continue
		}
		if strings.Contains(name, ".gc-") {
			claims++
		} else if store.Classify(name) == store.Compact {
			committed = true
		}
		f, err := store.Open(filepath.Join(c.Dir, name))
		if err != nil {
			c.T.Fatalf("%s: %v", when, err)
		}
		_, err = record.Scan(f, func(l *record.Line) error {
			lines++
			if ix, ok := c.want[string(l.Text)]; ok && c.inRaw[ix] != c.epoch {
				c.inRaw[ix] = c.epoch
				raw++
			}
			return nil
		})
		f.Close()
		if err != nil {
			c.T.Fatalf("%s: reading %s: %v", when, name, err)
		}
	}
	if raw != len(c.order) {
		c.T.Fatalf("%s: %d of %d prompts are in the raw files", when, raw, len(c.order))
	}
	// A run that ends leaves each line once, plus what was captured
	// meanwhile; a run killed after its commit, one more copy at most.
	if bound := (2 + max(c.streak, 1)) * len(c.want); lines > bound {
		c.T.Fatalf("%s: %d raw lines for %d prompts after %d run(s) killed in a row: duplicates pile up", when, lines, len(c.want), c.streak)
	}
	return claims, temps, committed && claims > 0
}
