package picker

import (
	"maps"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"hist/lib/history"
	"hist/lib/store"
	"hist/lib/tombstone"
)

// list is one scope's prompts, newest first, as they stream in from the
// store (history.Stream, which reads the scope again after a rewrite that
// ran meanwhile and adds what it had missed at the end). It grows while
// loading; entries never move, so an index stays valid; a deleted prompt
// is marked gone.
type list struct {
	all bool

	mu     sync.Mutex
	cond   *sync.Cond
	ents   []history.Entry
	tally  history.Tally   // each entry's uses and frecency
	agents map[string]bool // the agents of the copies read
	gone   map[int32]bool
	done   bool
	res    *history.StreamResult

	stop atomic.Bool
}

// load starts streaming the prompts of a scope of st that f selects into
// a new list, their frecency taken at now.
func load(st store.Store, sc store.Scope, hidden *tombstone.Set, f history.Filter, now time.Time) *list {
	l := &list{all: sc.All, gone: map[int32]bool{}, agents: map[string]bool{}, tally: history.Tally{Now: now.UnixMilli()}}
	l.cond = sync.NewCond(&l.mu)
	go func() {
		res := l.stream(st, sc, hidden, f)
		l.mu.Lock()
		l.done, l.res = true, res
		l.mu.Unlock()
		l.cond.Broadcast()
	}()
	return l
}

// stream adds the scope's prompts to the list as they come.
func (l *list) stream(st store.Store, sc store.Scope, hidden *tombstone.Set, f history.Filter) *history.StreamResult {
	uses := func(n int, e history.Entry) {
		l.mu.Lock()
		l.tally.Add(n, e.TS)
		l.agents[history.AgentOf(e.Src)] = true
		l.mu.Unlock()
	}
	// Each prompt comes with its richest copy's provenance (what the preview
	// and the resume key use), as hist-list --json prints it.
	return history.Stream(st, sc, hidden, history.Options{Hold: true, Uses: uses, Filter: f}, func(e history.Entry) bool {
		if l.stop.Load() {
			return false
		}
		l.mu.Lock()
		l.ents = append(l.ents, e)
		l.mu.Unlock()
		l.cond.Broadcast()
		return true
	})
}

// close stops the loading.
func (l *list) close() { l.stop.Store(true) }

// endPass tells the feeders waiting in snapshot that q's pass is over.
// q is closed under the list's mutex, which snapshot holds from its
// check of q to its Wait, so no feeder misses the broadcast.
func (l *list) endPass(q quitter) {
	l.mu.Lock()
	close(q)
	l.mu.Unlock()
	l.cond.Broadcast()
}

// snapshot waits until the list holds more than have entries or is done,
// and returns how many it holds and whether it is done. quit ends the
// wait.
func (l *list) snapshot(have int, quit quitter) (int, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for len(l.ents) <= have && !l.done && !quit.over() {
		l.cond.Wait()
	}
	return len(l.ents), l.done
}

// at returns entry i, unless it is gone.
func (l *list) at(i int32) (history.Entry, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if i < 0 || int(i) >= len(l.ents) || l.gone[i] {
		return history.Entry{}, false
	}
	return l.ents[i], true
}

// item is entry i's item (see item), with its uses counted so far;
// "(deleted)" once it is gone.
func (l *list) item(i int32, now time.Time) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	e, uses := history.Entry{Text: "(deleted)"}, 0
	if !l.gone[i] {
		e = l.ents[i]
	}
	if int(i) < len(l.tally.Uses) {
		uses = int(l.tally.Uses[i])
	}
	return item(e, uses, now)
}

// ranked waits until the list is done (or quit ends the wait) and returns
// its entries most used first.
func (l *list) ranked(quit quitter) []int32 {
	n, _ := l.snapshot(math.MaxInt, quit)
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.tally.Ranked(n)
}

// agentsRead adds the agents of the copies read so far to seen.
func (l *list) agentsRead(seen map[string]bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	maps.Copy(seen, l.agents)
}

// remove marks entry i gone (each prompt is in a list once).
func (l *list) remove(i int32) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.gone[i] = true
}

// status is the loading's outcome so far.
func (l *list) status() (done bool, res *history.StreamResult) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.done, l.res
}
