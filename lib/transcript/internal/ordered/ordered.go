// Package ordered runs work on several goroutines and hands the results
// back in the order of the work, so that a parallel reader yields exactly
// what a sequential one would.
package ordered

import "sync"

// Map calls fn on each item on up to workers goroutines, each with a state
// of its own made by newState (read buffers, decoders), a few items ahead
// of apply, which gets the results in item order on the calling goroutine.
// It stops at the first error apply returns and returns it, once the
// goroutines have ended.
func Map[S, In, Out any](items []In, workers int, newState func() S, fn func(S, In) Out, apply func(Out) error) error {
	type job struct {
		in  In
		res chan Out // buffered: a worker never waits to hand it over
	}
	jobs := make(chan job)
	order := make(chan job, 2*workers)
	quit := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(workers + 1)
	go func() { // hands out the items, and queues them in order
		defer wg.Done()
		defer close(order)
		defer close(jobs)
		for _, in := range items {
			j := job{in, make(chan Out, 1)}
			select {
			case order <- j:
			case <-quit:
				return
			}
			select {
			case jobs <- j:
			case <-quit:
				return
			}
		}
	}()
	for range workers {
		go func() {
			defer wg.Done()
			st := newState()
			for j := range jobs {
				j.res <- fn(st, j.in)
			}
		}()
	}
	defer func() {
		close(quit)
		wg.Wait()
	}()
	for j := range order {
		if err := apply(<-j.res); err != nil {
			return err
		}
	}
	return nil
}
