package filescan

import (
	"sync"
	"sync/atomic"
)

// Map runs work on several goroutines and hands the results back in the
// order of the work, so that a parallel reader yields exactly what a
// sequential one would.
//
// It calls fn on each item on up to workers goroutines, each with a state
// of its own made by newState (read buffers, decoders), a few items ahead
// of apply, which gets the results in item order on the calling goroutine.
// It stops at the first error apply returns and returns it, once the
// goroutines have ended.
//
// The workers take the items themselves, in order, each as soon as it is
// free and fewer than 4 per worker are taken but not applied yet: no
// goroutine hands them out (one that had to be scheduled for each item
// left the workers waiting, and CPUs idle, whenever the CPUs were busy).
func Map[S, In, Out any](items []In, workers int, newState func() S, fn func(S, In) Out, apply func(Out) error) error {
	// A token for each item taken and not yet applied: the head item (the
	// next to apply) is always taken first, so the workers always progress.
	// Item i's result goes to slot i mod ahead, free by then: item i-ahead
	// was applied before item i could be taken.
	ahead := 4 * workers
	tokens := make(chan struct{}, ahead)
	res := make([]chan Out, ahead)
	for i := range res {
		res[i] = make(chan Out, 1) // a worker never waits to hand a result over
	}
	quit := make(chan struct{})
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			st := newState()
			for {
				select {
				case tokens <- struct{}{}:
				case <-quit:
					return
				}
				i := int(next.Add(1) - 1)
				if i >= len(items) {
					return
				}
				res[i%ahead] <- fn(st, items[i])
			}
		}()
	}
	defer func() {
		close(quit)
		wg.Wait()
	}()
	for i := range items {
		out := <-res[i%ahead]
		<-tokens
		if err := apply(out); err != nil {
			return err
		}
	}
	return nil
}
