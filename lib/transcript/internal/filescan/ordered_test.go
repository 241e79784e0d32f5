package filescan

import (
	"errors"
	"math/rand/v2"
	"runtime"
	"sync/atomic"
	"testing"
	"time"
)

func TestMapKeepsOrder(t *testing.T) {
	items := make([]int, 500)
	for i := range items {
		items[i] = i
	}
	for _, workers := range []int{1, 2, 4, 8} {
		var got []int
		var states atomic.Int32
		err := Map(items, workers, func() *int { states.Add(1); return new(int) }, func(n *int, i int) int {
			*n++ // state is the worker's own: no race
			time.Sleep(time.Duration(rand.IntN(50)) * time.Microsecond)
			return i * 2
		}, func(v int) error {
			got = append(got, v)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		for i, v := range got {
			if v != 2*i {
				t.Fatalf("%d workers: result %d is %d", workers, i, v)
			}
		}
		if len(got) != len(items) || int(states.Load()) != workers {
			t.Fatalf("%d workers: %d results, %d states", workers, len(got), states.Load())
		}
	}
}

func TestMapStopsAtError(t *testing.T) {
	stop := errors.New("stop")
	before := runtime.NumGoroutine()
	n := 0
	err := Map(make([]int, 10000), 4, func() struct{} { return struct{}{} }, func(struct{}, int) int { return 0 },
		func(int) error {
			n++
			if n == 7 {
				return stop
			}
			return nil
		})
	if err != stop || n != 7 {
		t.Fatalf("err %v after %d results", err, n)
	}
	// Every goroutine has ended.
	for i := 0; runtime.NumGoroutine() > before && i < 100; i++ {
		time.Sleep(time.Millisecond)
	}
	if g := runtime.NumGoroutine(); g > before {
		t.Fatalf("%d goroutines left running", g-before)
	}
}
