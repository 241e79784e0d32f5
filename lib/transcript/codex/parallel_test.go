package codex

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"syscall"
	"testing"

	"hist/lib/transcript"
	"hist/lib/transcript/internal/filescan"
)

// parallelRoot writes a tree of many rollouts that exercises every rule
// whose outcome depends on the order files are applied in: the real
// fixtures (each copied several times under fresh ids, so every copy is a
// session of its own), legacy forks with and without their parents, an
// archived copy (counted once), a subagent rollout, a zstd rollout and
// malformed lines.
func parallelRoot(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	var fixtures []string
	for _, dir := range []string{"testdata/codex", "testdata/codex-tui"} {
		filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() && isRollout(d.Name()) {
				fixtures = append(fixtures, p)
			}
			return nil
		})
	}
	if len(fixtures) == 0 {
		t.Fatal("no fixtures")
	}
	for i := range 12 {
		for _, f := range fixtures {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			// A fresh session id: the uuid's first 8 hex digits.
			id := sessionFromName(f)
			fresh := fmt.Sprintf("%08x", i) + id[8:]
			data = []byte(strings.ReplaceAll(string(data), id, fresh))
			name := strings.ReplaceAll(filepath.Base(f), id, fresh)
			write(t, filepath.Join(root, "sessions/2026/11", fmt.Sprintf("%02d", 1+i%3), name), data)
		}
	}
	parent := "0199aaaa-0000-7000-8000-00000000000a"
	child := "0199aaaa-0000-7000-8000-00000000000b"
	orphan := "0199aaaa-0000-7000-8000-00000000000d"
	pb := (&rb{}).meta(parent, "/p", nil).
		userMsg("2026-01-02T03:00:00.000Z", "A", nil).
		userMsg("2026-01-02T03:01:00.000Z", "B", nil)
	cb := (&rb{}).meta(child, "/p", map[string]any{"forked_from_id": parent}).
		userMsg("2026-01-02T04:00:00.000Z", "A", nil).
		userMsg("2026-01-02T04:00:00.001Z", "B", nil).
		userMsg("2026-01-02T04:05:00.000Z", "D", nil)
	ob := (&rb{}).meta(orphan, "/q", map[string]any{"forked_from_id": "0199aaaa-0000-7000-8000-0000000000ff"}).
		userMsg("2026-01-02T04:00:00.000Z", "X", nil).
		raw(`{"timestamp":"2026-01-02T04:00:01.000Z","type":"event_msg","payload":{"type":"user_message","message":`).
		userMsg("2026-01-02T04:06:00.000Z", "Y", nil)
	sub := (&rb{}).meta("0199aaaa-0000-7000-8000-00000000000e", "/p", map[string]any{"source": map[string]any{"subagent": "review"}}).
		userMsg("2026-01-02T04:00:00.000Z", "not typed", nil)
	// The fork sorts before its parent: its copies wait for the parent.
	write(t, filepath.Join(root, "sessions/2026/01/01/rollout-2026-01-01T00-00-00-"+child+".jsonl"), cb.bytes())
	write(t, rolloutPath(root, parent), pb.bytes())
	write(t, filepath.Join(root, "archived_sessions/rollout-2026-01-02T03-04-05-"+parent+".jsonl"), pb.bytes())
	write(t, rolloutPath(root, orphan), ob.bytes())
	write(t, rolloutPath(root, "0199aaaa-0000-7000-8000-00000000000e"), sub.bytes())
	return root
}

// scanWith scans root with GOMAXPROCS set to procs (1: the serial path).
func scanWith(t *testing.T, procs int, root string, emit func(transcript.Prompt) error) (transcript.Stats, error) {
	t.Helper()
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
	return Scan(root, emit)
}

func TestParallelScanEqualsSerial(t *testing.T) {
	root := parallelRoot(t)
	collect := func(procs int) ([]transcript.Prompt, transcript.Stats) {
		var got []transcript.Prompt
		st, err := scanWith(t, procs, root, func(p transcript.Prompt) error {
			got = append(got, p)
			return nil
		})
		if err != nil {
			t.Fatalf("procs %d: %v", procs, err)
		}
		return got, st
	}
	serial, sst := collect(1)
	if len(serial) < 40 || sst.Subagent == 0 || sst.Malformed == 0 {
		t.Fatalf("the tree does not exercise enough: %d prompts, %+v", len(serial), sst)
	}
	for _, procs := range []int{2, 4} {
		for range 5 {
			got, st := collect(procs)
			if !reflect.DeepEqual(got, serial) || st != sst {
				t.Fatalf("procs %d: %d prompts %+v, serial %d prompts %+v", procs, len(got), st, len(serial), sst)
			}
		}
	}

	// An error from emit stops both at the same prompt.
	stop := errors.New("stop")
	for _, procs := range []int{1, 2, 4} {
		n := 0
		_, err := scanWith(t, procs, root, func(transcript.Prompt) error {
			n++
			if n == 17 {
				return stop
			}
			return nil
		})
		if err != stop || n != 17 {
			t.Fatalf("procs %d: err %v after %d prompts", procs, err, n)
		}
	}

	// A FIFO named like a rollout is passed over (opening it for reading
	// the usual way would wait for a writer forever).
	fifo := filepath.Join(root, "sessions/2026/11/02/rollout-2026-11-02T00-00-00-0199aaaa-0000-7000-8000-0000000000aa.jsonl")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, procs := range []int{1, 2} {
		got, st := collect(procs)
		if !reflect.DeepEqual(got, serial) || st.Skipped != sst.Skipped+1 {
			t.Fatalf("procs %d with a FIFO: %d prompts %+v", procs, len(got), st)
		}
	}

	// A rollout that cannot be read in the middle: the same ReadError.
	bad := filepath.Join(root, "sessions/2026/11/02/rollout-2026-11-02T00-00-00-0199aaaa-0000-7000-8000-0000000000bb.jsonl")
	// A symlink named like a rollout that points at a folder: EISDIR.
	if err := os.Symlink(t.TempDir(), bad); err != nil {
		t.Fatal(err)
	}
	for _, procs := range []int{1, 2, 4} {
		_, err := scanWith(t, procs, root, func(transcript.Prompt) error { return nil })
		var re *transcript.ReadError
		if !errors.As(err, &re) || re.Path != bad {
			t.Fatalf("procs %d: err = %v", procs, err)
		}
	}
}

// A rollout that vanished between the listing and its reading (Codex moves
// a session to archived_sessions/ when it archives it, maybe after that
// folder was listed) makes the scan a ReadError, so that the seed is
// retried rather than written without its prompts.
func TestVanishedRolloutIsRetried(t *testing.T) {
	gone := filepath.Join(t.TempDir(), "sessions/2026/01/02/rollout-2026-01-02T03-04-05-"+sess+".jsonl")
	res := (&reader{op: new(filescan.Opener)}).parse(gone)
	var re *transcript.ReadError
	if !errors.As(res.err, &re) || re.Path != gone {
		t.Fatalf("err = %v, want a ReadError for %s", res.err, gone)
	}
}
