package picker

import (
	"sync"
	"sync/atomic"

	"hist/lib/history"
	"hist/lib/store"
	"hist/lib/tombstone"
)

// ent is one visible prompt of a list.
type ent struct {
	text    string
	ts      int64
	src     string
	session string
	file    int32
}

// list is one scope's prompts, newest first, as they stream in from the
// store. It grows while loading; entries never move, so an index stays
// valid; a deleted prompt is marked gone.
type list struct {
	all    bool
	files  []store.File
	fileIx map[string]int32

	mu   sync.Mutex
	cond *sync.Cond
	ents []ent
	gone map[int32]bool
	done bool
	res  *history.StreamResult
	err  error // the scope's files could not be listed

	stop atomic.Bool
}

// load starts streaming a scope of st into a new list (listing the
// scope's files too happens in the background).
func load(st store.Store, sc store.Scope, hidden *tombstone.Set) *list {
	l := &list{all: sc.All, gone: map[int32]bool{}}
	l.cond = sync.NewCond(&l.mu)
	go func() {
		files, err := st.Files(sc)
		if err != nil {
			l.mu.Lock()
			l.err, l.done = err, true
			l.mu.Unlock()
			l.cond.Broadcast()
			return
		}
		// Published to readers by the mutex with the first entries.
		l.files = files
		l.fileIx = make(map[string]int32, len(files))
		for i, f := range files {
			l.fileIx[f.Path] = int32(i)
		}
		l.stream(hidden)
	}()
	return l
}

func (l *list) stream(hidden *tombstone.Set) {
	batch := make([]ent, 0, 16)
	limit := 16
	flush := func() {
		l.mu.Lock()
		l.ents = append(l.ents, batch...)
		l.mu.Unlock()
		l.cond.Broadcast()
		batch = batch[:0]
		if limit < 4096 {
			limit *= 4
		}
	}
	res := history.Stream(l.files, hidden, func(e history.Entry) bool {
		if l.stop.Load() {
			return false
		}
		batch = append(batch, ent{text: e.Text, ts: e.TS, src: e.Src, session: e.Session, file: l.fileIx[e.File]})
		if len(batch) >= limit {
			flush()
		}
		return true
	})
	l.mu.Lock()
	l.ents = append(l.ents, batch...)
	l.done, l.res = true, res
	l.mu.Unlock()
	l.cond.Broadcast()
}

// close stops the loading.
func (l *list) close() {
	l.stop.Store(true)
}

// wake wakes the feeders waiting for more entries.
func (l *list) wake() {
	l.mu.Lock()
	l.mu.Unlock()
	l.cond.Broadcast()
}

// snapshot waits until the list holds more than have entries or is done,
// and returns its entries and whether it is done. quit ends the wait.
func (l *list) snapshot(have int, quit *quitter) ([]ent, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for len(l.ents) <= have && !l.done && !quit.Load() {
		l.cond.Wait()
	}
	return l.ents, l.done
}

// at returns entry i.
func (l *list) at(i int32) (ent, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if i < 0 || int(i) >= len(l.ents) || l.gone[i] {
		return ent{}, false
	}
	return l.ents[i], true
}

func (l *list) isGone(i int32) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.gone[i]
}

// remove marks entry i gone (each prompt is in a list once).
func (l *list) remove(i int32) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.gone[i] = true
}

// status is the loading's outcome so far.
func (l *list) status() (n int, done bool, res *history.StreamResult, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.ents) - len(l.gone), l.done, l.res, l.err
}
