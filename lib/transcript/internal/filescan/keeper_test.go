package filescan

import (
	"fmt"
	"io/fs"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
)

// slowKeep keeps the files whose name ends in an odd digit, and is ready
// only once ready is set; Keep before that is a bug (it would wait).
type slowKeep struct {
	ready atomic.Bool
	calls atomic.Int64
	t     *testing.T
}

func (k *slowKeep) Ready() bool { return k.ready.Load() }

func (k *slowKeep) Keep(path string, _ fs.FileInfo) bool {
	if !k.ready.Load() {
		k.t.Errorf("Keep(%s) called before the keep was ready", path)
	}
	k.calls.Add(1)
	return (path[len(path)-1]-'0')%2 == 1
}

// Files listed while the Keep is not ready wait, are passed once it is,
// and every file is passed exactly once, from any number of walkers.
func TestKeeperHoldsFilesUntilReady(t *testing.T) {
	for _, readyAt := range []int{0, 1, 500, 1000, 2000} {
		k := &slowKeep{t: t}
		var kept []string
		kp := &Keeper{Keep: k, Kept: func(path string, _ fs.FileInfo) { kept = append(kept, path) }}
		var n atomic.Int64
		var wg sync.WaitGroup
		for w := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range 250 {
					if n.Add(1) == int64(readyAt) {
						k.ready.Store(true)
					}
					kp.Add(fmt.Sprintf("w%d/f%03d", w, i), nil)
				}
			}()
		}
		wg.Wait()
		k.ready.Store(true) // Flush may wait for the keep: here it need not
		kp.Flush()
		if got := k.calls.Load(); got != 1000 {
			t.Errorf("ready after %d: Keep called %d times, want 1000", readyAt, got)
		}
		sort.Strings(kept)
		if len(kept) != 500 || kept[0] != "w0/f001" || kept[499] != "w3/f249" {
			t.Errorf("ready after %d: kept %d files (%v ... %v), want the 500 odd ones", readyAt, len(kept), kept[:min(len(kept), 1)], kept[max(len(kept)-1, 0):])
		}
	}
}

// A nil Keep keeps every file at once.
func TestKeeperNilKeepsAll(t *testing.T) {
	var kept []string
	kp := &Keeper{Kept: func(path string, _ fs.FileInfo) { kept = append(kept, path) }}
	kp.Add("a", nil)
	kp.Add("b", nil)
	kp.Flush()
	if len(kept) != 2 {
		t.Fatalf("kept %v", kept)
	}
}
