//go:build unix

package deletion

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"hist/lib/store"
)

// A writer's record that lands in the old file after step 3 read it is
// seen by step 4, and the writer, seeing the rename, adds it again: by
// either order, the new file holds it once.
func TestLateRecordStoredOnce(t *testing.T) {
	for _, writerFirst := range []bool{true, false} {
		t.Run(fmt.Sprint("writer first ", writerFirst), func(t *testing.T) {
			f := newFixture(t)
			p := f.write("a@m.jsonl", rec("x", 1)+rec("gone", 2))
			late := rec("late", 3)
			hookBeforeRename = func(string) {
				// A writer's record lands in the old file, after step 3.
				w, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
				if err != nil {
					t.Fatal(err)
				}
				w.WriteString(late)
				w.Close()
			}
			hookAfterRename = func(string) {
				if writerFirst {
					// What store.Append does once it sees the rename.
					if err := store.AppendMissing(p, []byte(late)); err != nil {
						t.Error(err)
					}
				}
			}
			defer func() { hookBeforeRename, hookAfterRename = nil, nil }()
			res := Delete(f.st, f.scope(), []string{"gone"}, Options{})
			if res.Outcome != Clean || len(res.Carry) != 0 {
				t.Fatalf("%+v", res)
			}
			if !writerFirst {
				if err := store.AppendMissing(p, []byte(late)); err != nil {
					t.Fatal(err)
				}
			}
			if got, want := read(t, p), rec("x", 1)+late; got != want {
				t.Errorf("file:\n%s\nwant:\n%s", got, want)
			}
		})
	}
}

// Captures (store.Append) racing deletes that rewrite their file: every
// record is stored exactly once, in the file or a carry file beside it.
// 150 rounds here; HIST_LONG=1 runs 10,000.
func TestCaptureDeleteRaceStoresOnce(t *testing.T) {
	rounds := 150
	if os.Getenv("HIST_LONG") != "" {
		rounds = 10_000
	}
	f := newFixture(t)
	p := f.write("a@m.jsonl", "")
	r := rand.New(rand.NewPCG(1, 2))
	for round := range rounds {
		// Enough lines that the rewrite takes a while, and one to delete.
		var b strings.Builder
		for i := range 50 {
			b.WriteString(rec(fmt.Sprintf("filler %d %d", round, i), int64(i+1)))
		}
		b.WriteString(rec(fmt.Sprint("gone ", round), 1000))
		os.WriteFile(p, []byte(b.String()), 0o600)
		var wg sync.WaitGroup
		records := make([]string, 4)
		for w := range records {
			records[w] = rec(fmt.Sprintf("captured %d %d", round, w), int64(2000+w))
			delay := time.Duration(r.IntN(3000)) * time.Microsecond
			wg.Add(1)
			go func() {
				defer wg.Done()
				time.Sleep(delay)
				if err := store.Append(p, []byte(records[w])); err != nil {
					t.Error(err)
				}
			}()
		}
		res := Delete(f.st, f.scope(), []string{fmt.Sprint("gone ", round)}, Options{})
		wg.Wait()
		if res.Outcome != Clean {
			t.Fatalf("round %d: %+v", round, res)
		}
		all := read(t, p)
		carries, _ := filepath.Glob(p + ".carry-*")
		for _, c := range carries {
			all += read(t, c)
			os.Remove(c)
		}
		for _, x := range records {
			if n := strings.Count(all, x); n != 1 {
				t.Fatalf("round %d: %q stored %d times", round, strings.TrimSpace(x), n)
			}
		}
	}
}
