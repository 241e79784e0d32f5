package stress

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"hist/internal/testbin"
	"hist/lib/atomicfile"
	"hist/lib/identity"
	"hist/lib/record"
	"hist/lib/seed"
	"hist/lib/store"
)

var soakDuration = flag.Duration("soak.duration", time.Duration(testbin.Scale(6, 60))*time.Second, "TestSoak: how long every writer runs at once (6s, or 60s with HIST_LONG=1; at most 10s under -short)")

// soakMalformed is a malformed line planted in a store file before the
// soak: the only line of any store file allowed not to parse.
const soakMalformed = `{"text":"planted malformed line","ts":`

// soak is the shared state of TestSoak.
type soak struct {
	t    *testing.T
	st   store.Store
	env  []string
	proj string
	p2   string

	mu        sync.Mutex
	captured  map[string]int   // completed captures (and seeded prompts): text -> times
	order     []string         // candidates for a delete, in capture order
	delStart  map[string]bool  // deletes started (the prompt may be gone any moment)
	delDone   map[string]bool  // deletes whose hist-delete returned
	delAll    map[string]bool  // the delete's scope was --all
	capturing map[string]bool  // captures running
	extra     map[string]bool  // prompts visible though nobody captured them in the loop (seeded)
	imported  map[string]bool  // the importer's prompts that an import finished since they were written
	counts    map[string]int64 // captures, deletes, compactions, reads, seeds, imports
}

func (s *soak) run(stdin []byte, name string, args ...string) (string, string, error) {
	cmd := exec.Command(filepath.Join(BinDir, name), append([]string{"--store", s.st.Root}, args...)...)
	cmd.Env, cmd.Dir = s.env, s.proj
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	return out.String(), errb.String(), err
}

func (s *soak) count(what string) {
	s.mu.Lock()
	s.counts[what]++
	s.mu.Unlock()
}

// soakWords makes prompts that look like prompts but match no secret
// pattern (redaction is on by default and would change them).
var soakWords = strings.Fields("fix the flaky test in store go please refactor parser add a flag for verbose output " +
	"why does compaction keep two files explain the lock order rename handler make it faster résumé naïve 日本語")

// soakQuiet says whether hist-list's stderr holds nothing but the warning
// about the planted malformed line (which a compaction may have dropped).
func soakQuiet(stderr string) bool {
	// A reader may find it twice: in a claim and in the compact file
	// written from it, before the claim is removed.
	return stderr == "" || regexp.MustCompile(`^hist-list: warning: skipped \d malformed store lines?\n$`).MatchString(stderr)
}

// soakBadLines lists the lines of the store's files that are not records
// (for a failure's message).
func soakBadLines(root string) []string {
	var bad []string
	filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".jsonl") {
			return nil
		}
		data, _ := os.ReadFile(path)
		for _, line := range bytes.SplitAfter(data, []byte("\n")) {
			if len(line) == 0 {
				continue
			}
			if _, err := record.Parse(bytes.TrimSuffix(line, []byte("\n"))); err != nil || line[len(line)-1] != '\n' {
				bad = append(bad, filepath.Base(path)+": "+string(line))
			}
		}
		return nil
	})
	return bad
}

func soakText(w, k int, rng *rand.Rand) string {
	var b strings.Builder
	fmt.Fprintf(&b, "soak w%d n%05d", w, k)
	for range 3 + rng.IntN(12) {
		b.WriteByte(' ')
		b.WriteString(soakWords[rng.IntN(len(soakWords))])
	}
	if rng.IntN(10) == 0 {
		b.WriteString("\nsecond line\twith a tab and a \\ backslash")
	}
	return b.String()
}

// TestSoak runs every writer at once on one store: 6 capturers (4
// instance files, two capturers sharing one, and one through --hook with
// a Claude Code payload), a delete loop (random captured prompts, project
// and --all scopes in turn), a compaction loop at lowered thresholds, a
// seed of a second project, an importer (prompts appended to a pi session
// of the project, and hist-seed run now and then), and two readers that check, after every
// read, that no deleted prompt is shown and no prompt captured before the
// read began is missing. At the end every captured prompt that was not
// deleted is listed exactly once, no deleted prompt is listed or on disk,
// each imported prompt not deleted is on disk exactly once, every store
// line is a complete record (or the planted malformed line),
// no temp file is left, every file is 0600 and every folder 0700.
func TestSoak(t *testing.T) {
	if BinDir == "" {
		t.Skip("the binaries were not built")
	}
	dur := *soakDuration
	if testing.Short() && dur > 10*time.Second {
		dur = 10 * time.Second
	}
	start := time.Now()
	base := t.TempDir()
	home := filepath.Join(base, "home")
	s := &soak{
		t:         t,
		st:        store.Store{Root: filepath.Join(base, "store")},
		proj:      filepath.Join(base, "proj"),
		p2:        filepath.Join(base, "proj2"),
		captured:  map[string]int{},
		delStart:  map[string]bool{},
		delDone:   map[string]bool{},
		delAll:    map[string]bool{},
		capturing: map[string]bool{},
		extra:     map[string]bool{},
		imported:  map[string]bool{},
		counts:    map[string]int64{},
	}
	s.env = []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "GENTLE_PI_HISTORY_CAPTURE=1", "HIST_MACHINE=soak"}
	sessions := filepath.Join(base, "sessions")
	for _, d := range []string{home, s.proj, s.p2, sessions} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	canon, _ := store.Canonical(s.proj)
	dir := s.st.ProjectDir(store.Hash(canon))
	if err := store.EnsureDir(dir); err != nil {
		t.Fatal(err)
	}
	// An old file with a malformed line among valid ones.
	var old []byte
	for k := range 20 {
		text := fmt.Sprintf("soak old prompt %02d about the build", k)
		old = record.Append(old, record.Record{Text: text, TS: int64(1_600_000_000_000 + k)})
		s.captured[text] = 1
		s.order = append(s.order, text)
		if k == 10 {
			old = append(old, soakMalformed+"\n"...)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "old-agent.jsonl"), old, 0o600); err != nil {
		t.Fatal(err)
	}

	// A small pi session for the second project.
	canon2, _ := store.Canonical(s.p2)
	var sess bytes.Buffer
	fmt.Fprintf(&sess, `{"type":"session","version":3,"id":"soak-s2","timestamp":"2026-01-01T00:00:00.000Z","cwd":%q}`+"\n", canon2)
	var seeded []string
	for k := range 30 {
		text := fmt.Sprintf("soak seeded prompt %02d in the second project", k)
		seeded = append(seeded, text)
		msg, _ := json.Marshal(map[string]any{"role": "user", "content": text, "timestamp": 1767225601000 + k*1000})
		fmt.Fprintf(&sess, `{"type":"message","id":"m%d","parentId":null,"timestamp":"2026-01-01T00:00:%02d.000Z","message":%s}`+"\n", k, k%60, msg)
	}
	if err := os.WriteFile(filepath.Join(sessions, "soak-s2.jsonl"), sess.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}

	stop := make(chan struct{})
	stopped := func() bool {
		select {
		case <-stop:
			return true
		default:
			return false
		}
	}
	var wg sync.WaitGroup
	var failed atomic.Bool
	fail := func(format string, args ...any) {
		failed.Store(true)
		t.Errorf(format, args...)
	}

	// Capturers.
	instances := []string{"soak-shared", "soak-shared", "soak-c", "soak-d", "soak-e", ""}
	for w, inst := range instances {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), uint64(time.Now().UnixNano())))
			for k := 0; !stopped() && !failed.Load(); k++ {
				text := soakText(w, k, rng)
				s.mu.Lock()
				s.capturing[text] = true
				s.mu.Unlock()
				var stderr string
				var err error
				if inst == "" {
					payload, _ := json.Marshal(map[string]any{
						"session_id": "5a0c0e52-7d8e-4b7f-9d55-0c6a3f6f7a11", "transcript_path": filepath.Join(home, ".claude/x.jsonl"),
						"cwd": s.proj, "hook_event_name": "UserPromptSubmit", "prompt": text,
					})
					_, stderr, err = s.run(payload, "hist-capture", "--hook")
					if err == nil && stderr != "" {
						err = fmt.Errorf("stderr not empty")
					}
				} else {
					_, stderr, err = s.run(nil, "hist-capture", "--cwd", s.proj, "--instance", inst, text)
				}
				if err != nil {
					fail("capturer %d: hist-capture: %v: %s", w, err, stderr)
					return
				}
				s.mu.Lock()
				delete(s.capturing, text)
				s.captured[text]++
				s.order = append(s.order, text)
				s.counts["captures"]++
				s.mu.Unlock()
				time.Sleep(time.Duration(40+rng.IntN(120)) * time.Millisecond)
			}
		}()
	}

	// The delete loop.
	wg.Add(1)
	go func() {
		defer wg.Done()
		rng := rand.New(rand.NewPCG(100, uint64(time.Now().UnixNano())))
		for k := 0; !stopped() && !failed.Load(); k++ {
			s.mu.Lock()
			var text string
			for range 20 {
				if len(s.order) == 0 {
					break
				}
				c := s.order[rng.IntN(len(s.order))]
				if !s.delStart[c] {
					text = c
					break
				}
			}
			if text != "" {
				s.delStart[text] = true
			}
			s.mu.Unlock()
			if text == "" {
				time.Sleep(50 * time.Millisecond)
				continue
			}
			scope := "--project=" + s.proj
			if k%2 == 1 {
				scope = "--all"
			}
			// --hide: a prompt of the other project is tombstoned all the
			// same, so it is hidden everywhere as the checks below expect.
			_, stderr, err := s.run(nil, "hist-delete", "--hide", scope, text)
			if err != nil {
				fail("hist-delete %s %q: %v: %s", scope, text, err, stderr)
				return
			}
			s.mu.Lock()
			s.delDone[text] = true
			s.delAll[text] = k%2 == 1
			s.counts["deletes"]++
			s.mu.Unlock()
			time.Sleep(time.Duration(100+rng.IntN(200)) * time.Millisecond)
		}
	}()

	// The compaction loop.
	wg.Add(1)
	go func() {
		defer wg.Done()
		for k := 0; !stopped() && !failed.Load(); k++ {
			args := []string{"--project=" + s.proj, "--max-files", "5", "--keep", "2", "--max-entries", "200"}
			if k%4 == 3 {
				args = []string{"--all", "--max-files", "5", "--keep", "2"}
			}
			_, stderr, err := s.run(nil, "hist-compact", args...)
			if err != nil {
				fail("hist-compact %v: %v: %s", args, err, stderr)
				return
			}
			if strings.Contains(stderr, "merged") || strings.Contains(stderr, "compact-") {
				s.count("compactions")
			}
			s.count("compaction runs")
			time.Sleep(300 * time.Millisecond)
		}
	}()

	// The seed of the second project, a third of the way in.
	wg.Add(1)
	go func() {
		defer wg.Done()
		select {
		case <-stop:
			return
		case <-time.After(dur / 3):
		}
		_, stderr, err := s.run(nil, "hist-seed", "--project", s.p2, "--from", "pi", "--sessions", sessions)
		if err != nil {
			fail("hist-seed: %v: %s", err, stderr)
			return
		}
		if !strings.Contains(stderr, "30 prompts written to seed@soak.jsonl") {
			fail("hist-seed: %q, want 30 prompts written", stderr)
		}
		s.mu.Lock()
		for _, text := range seeded {
			s.captured[text]++
			s.extra[text] = true
			s.order = append(s.order, text)
		}
		s.counts["seeds"]++
		s.mu.Unlock()
	}()

	// The importer: prompts typed in a pi session of the project, which
	// only hist-seed brings in. A prompt joins the model once an import
	// that started after it was written has finished; until then a reader
	// may or may not list it. Once in the model the deleter may delete it,
	// and no later import may bring it back from the transcript.
	wg.Add(1)
	go func() {
		defer wg.Done()
		rng := rand.New(rand.NewPCG(200, uint64(time.Now().UnixNano())))
		f, err := os.OpenFile(filepath.Join(sessions, "soak-s1.jsonl"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			fail("importer: %v", err)
			return
		}
		defer f.Close()
		if _, err := fmt.Fprintf(f, `{"type":"session","version":3,"id":"soak-s1","timestamp":%q,"cwd":%q}`+"\n",
			time.Now().UTC().Format(time.RFC3339Nano), canon); err != nil {
			fail("importer: %v", err)
			return
		}
		var pending []string // written, not yet in the model
		parent := "null"
		imp := func() bool {
			written := len(pending)
			_, stderr, err := s.run(nil, "hist-seed", "--project", s.proj, "--from", "pi", "--sessions", sessions, "-q")
			if err != nil || stderr != "" {
				fail("importer: hist-seed: %v: %s", err, stderr)
				return false
			}
			s.mu.Lock()
			for _, text := range pending[:written] {
				s.captured[text]++
				s.imported[text] = true
				s.order = append(s.order, text)
			}
			s.counts["imports"]++
			s.counts["prompts imported"] += int64(written)
			s.mu.Unlock()
			pending = pending[written:]
			return true
		}
		n := 0 // prompts written
		for k := 0; !stopped() && !failed.Load(); k++ {
			for range 1 + rng.IntN(3) {
				text := soakText(7, n, rng)
				// Typed a while ago: hist-seed leaves a prompt typed in the
				// last seconds to a later run (seed.Settle).
				now := time.Now().Add(-2 * seed.Settle)
				msg, _ := json.Marshal(map[string]any{"role": "user", "content": text, "timestamp": now.UnixMilli()})
				id := "e" + strconv.Itoa(n)
				// One write a line: a reader sees a line whole or not at all.
				line := fmt.Sprintf(`{"type":"message","id":%q,"parentId":%s,"timestamp":%q,"message":%s}`+"\n",
					id, parent, now.UTC().Format("2006-01-02T15:04:05.000Z"), msg)
				if _, err := f.WriteString(line); err != nil {
					fail("importer: %v", err)
					return
				}
				parent = strconv.Quote(id)
				pending = append(pending, text)
				n++
			}
			if k%4 == 3 && !imp() {
				return
			}
			time.Sleep(time.Duration(50+rng.IntN(150)) * time.Millisecond)
		}
		// The last prompts written join the model too.
		if len(pending) > 0 && !failed.Load() {
			imp()
		}
	}()

	// Readers.
	for r := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stopped() && !failed.Load() {
				s.mu.Lock()
				mustShow := make([]string, 0, len(s.order))
				for _, text := range s.order {
					if !s.delStart[text] {
						mustShow = append(mustShow, text)
					}
				}
				mustHide := make([]string, 0, len(s.delDone))
				for text := range s.delDone {
					mustHide = append(mustHide, text)
				}
				s.mu.Unlock()
				out, stderr, err := s.run(nil, "hist-list", "--all", "-0")
				if err != nil || !soakQuiet(stderr) {
					fail("reader %d: hist-list: %v: %s; store lines that do not parse now: %q", r, err, stderr, soakBadLines(s.st.Root))
					return
				}
				listed := map[string]int{}
				for _, p := range strings.Split(strings.TrimSuffix(out, "\x00"), "\x00") {
					listed[p]++
				}
				for _, text := range mustHide {
					if listed[text] > 0 {
						fail("reader %d: deleted prompt %q is listed", r, text)
					}
				}
				s.mu.Lock()
				for _, text := range mustShow {
					// A delete that started during the read may hide it.
					if listed[text] != 1 && !s.delStart[text] {
						fail("reader %d: captured prompt %q is listed %d times, want 1", r, text, listed[text])
					}
				}
				s.counts["reads"]++
				s.mu.Unlock()
				time.Sleep(100 * time.Millisecond)
			}
		}()
	}

	time.Sleep(dur)
	close(stop)
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	soakTime := time.Since(start)

	// The end state.
	out, stderr, err := s.run(nil, "hist-list", "--all", "-0")
	if err != nil || !soakQuiet(stderr) {
		t.Fatalf("hist-list: %v: %s", err, stderr)
	}
	listed := map[string]int{}
	for _, p := range strings.Split(strings.TrimSuffix(out, "\x00"), "\x00") {
		listed[p]++
	}
	visible := 0
	for text, n := range s.captured {
		if n != 1 {
			t.Errorf("%q was captured %d times (the test's texts must be unique)", text, n)
		}
		if s.delDone[text] {
			if listed[text] != 0 {
				t.Errorf("deleted prompt %q is listed", text)
			}
			continue
		}
		visible++
		if listed[text] != 1 {
			t.Errorf("captured prompt %q is listed %d times, want 1", text, listed[text])
		}
	}
	if len(listed) != visible {
		t.Errorf("hist-list shows %d prompts, want %d", len(listed), visible)
	}

	// On disk: every store line is a record (or the planted one), no
	// deleted prompt, no temp file, private permissions.
	onDisk := map[string]int{}
	var files, lines, malformed int
	err = filepath.WalkDir(s.st.Root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if d.IsDir() {
			if perm := info.Mode().Perm(); perm != 0o700 {
				t.Errorf("folder %s has mode %o, want 700", path, perm)
			}
			return nil
		}
		files++
		if perm := info.Mode().Perm(); perm != 0o600 {
			t.Errorf("file %s has mode %o, want 600", path, perm)
		}
		name := d.Name()
		if atomicfile.IsTemp(name) {
			t.Errorf("temp file left behind: %s", path)
			return nil
		}
		if !strings.HasSuffix(name, ".jsonl") {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if len(data) > 0 && data[len(data)-1] != '\n' {
			t.Errorf("%s ends with a torn line: %q", path, data[max(0, len(data)-80):])
		}
		for i, line := range bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n")) {
			if len(data) == 0 {
				break
			}
			lines++
			if string(line) == soakMalformed {
				malformed++
				continue
			}
			rec, err := record.Parse(line)
			if err != nil {
				t.Errorf("%s line %d is not a valid record (torn or merged): %q", path, i+1, line)
				continue
			}
			onDisk[identity.Normalize(rec.Text)]++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for text := range s.delDone {
		if s.extra[text] && !s.delAll[text] {
			continue // in the second project, out of the delete's scope: hidden only
		}
		if c := onDisk[identity.Normalize(text)]; c != 0 {
			t.Errorf("deleted prompt %q has %d copies on disk", text, c)
		}
	}
	// The imports wrote each of their prompts once (the store holds only
	// the two projects, and the importer's texts are its own).
	for text := range s.imported {
		if c := onDisk[identity.Normalize(text)]; !s.delDone[text] && c != 1 {
			t.Errorf("imported prompt %q has %d copies on disk, want 1", text, c)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var importedDeleted int
	for text := range s.imported {
		if s.delDone[text] {
			importedDeleted++
		}
	}
	t.Logf("%v soak (%v in all): %d captures by 6 capturers, %d deletes, %d compaction runs (%d merged), %d seed, %d imports (%d prompts, %d of them deleted since), %d reads; %d prompts visible at the end; %d store files, %d lines (%d planted malformed)",
		dur, soakTime.Round(time.Millisecond), s.counts["captures"], s.counts["deletes"], s.counts["compaction runs"], s.counts["compactions"],
		s.counts["seeds"], s.counts["imports"], s.counts["prompts imported"], importedDeleted, s.counts["reads"], visible, files, lines, malformed)
}
