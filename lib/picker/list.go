package picker

import (
	"sync"
	"sync/atomic"
	"time"

	"hist/lib/history"
	"hist/lib/identity"
	"hist/lib/lock"
	"hist/lib/store"
	"hist/lib/tombstone"
)

// ent is one visible prompt of a list: 32 bytes beside its text, its
// store file and its src and session indexes into the list's tables
// (a scope has a few hundred files and sessions, and a million prompts).
type ent struct {
	text string
	ts   int64
	file int32
	prov int32
}

// provenance is the src and session of prompts.
type provenance struct{ src, session string }

// list is one scope's prompts, newest first, as they stream in from the
// store. It grows while loading; entries never move, so an index stays
// valid; a deleted prompt is marked gone.
type list struct {
	all    bool
	files  []store.File
	fileIx map[string]int32

	mu     sync.Mutex
	cond   *sync.Cond
	ents   []ent
	provs  []provenance // ent.prov's table; provs[0] is none
	provIx map[provenance]int32
	gone   map[int32]bool
	done   bool
	res    *history.StreamResult
	err    error // the scope's files could not be listed

	stop atomic.Bool
}

// load starts streaming a scope of st into a new list (listing the
// scope's files too happens in the background).
func load(st store.Store, sc store.Scope, hidden *tombstone.Set) *list {
	l := &list{all: sc.All, gone: map[int32]bool{}, provs: []provenance{{}}, provIx: map[provenance]int32{{}: 0}}
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
		ids := store.IDs(files)
		// Published to readers by the mutex with the first entries.
		l.files = files
		l.fileIx = make(map[string]int32, len(files))
		for i, f := range files {
			l.fileIx[f.Path] = int32(i)
		}
		if afterList != nil {
			afterList()
		}
		res := l.stream(hidden)
		if failed, reread := l.settle(st, sc, files, ids, history.Vanished(res.Failed)); reread {
			// What the stream could not read was read again: only the
			// last read's failures stand.
			res.Failed = failed
		}
		l.mu.Lock()
		l.done, l.res = true, res
		l.mu.Unlock()
		l.cond.Broadcast()
	}()
	return l
}

// afterList, when set (by tests), runs between the listing of the files
// and their reading.
var afterList func()

func (l *list) stream(hidden *tombstone.Set) *history.StreamResult {
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
		if e.Settled {
			return true
		}
		if e.Richer {
			// An older, richer copy of the N-th prompt sent: its
			// provenance (what the preview and the resume key use) is
			// the prompt's. The text, which the feeder reads unlocked,
			// stays.
			l.mu.Lock()
			var p *ent
			if have := len(l.ents); e.N < have {
				p = &l.ents[e.N]
			} else {
				p = &batch[e.N-have]
			}
			p.prov, p.file = l.provIndex(e.Src, e.Session), l.fileIx[e.File]
			l.mu.Unlock()
			return true
		}
		l.mu.Lock()
		pi := l.provIndex(e.Src, e.Session)
		l.mu.Unlock()
		batch = append(batch, ent{text: e.Text, ts: e.TS, prov: pi, file: l.fileIx[e.File]})
		if len(batch) >= limit {
			flush()
		}
		return true
	})
	flush()
	return res
}

// settleWait bounds how long a list waits for rewrites that ran while it
// was read.
const settleWait = 3 * time.Second

// settle reads the scope again, as hist-list does, when a rewrite (a
// delete, a compaction) ran while it was streamed and may have moved
// prompts out of the files before they were read: once the rewrite has
// ended, a full read finds them, and the prompts the list lacks are added
// at its end (waiting at most settleWait in all). hidden.json is read
// again for it, so a prompt deleted meanwhile is not added; when it cannot
// be trusted, nothing is. It returns the failures of its last read, and
// whether it read at all.
func (l *list) settle(st store.Store, sc store.Scope, files []store.File, ids store.FileIDs, gone bool) (failed []history.FileError, reread bool) {
	deadline := time.Now().Add(settleWait)
	var have map[string]struct{}
	var norm []byte
	for try := 0; try < 20 && !l.stop.Load(); try++ {
		if !lock.Held(st.Lock()) && !st.Moved(sc, files, ids, gone) || time.Now().After(deadline) {
			return
		}
		lock.WaitFree(st.Lock(), deadline)
		hidden, err := tombstone.Load(st.Hidden())
		if err != nil {
			return
		}
		if files, err = st.Files(sc); err != nil {
			return
		}
		ids = store.IDs(files)
		res := history.Read(files, hidden)
		gone = history.Vanished(res.Failed)
		failed, reread = res.Failed, true
		if have == nil {
			l.mu.Lock()
			have = make(map[string]struct{}, len(l.ents))
			for _, e := range l.ents {
				norm = identity.AppendNormalized(norm[:0], e.text)
				have[string(norm)] = struct{}{}
			}
			l.mu.Unlock()
		}
		var add []ent
		for i := range res.Len() {
			e := res.At(i)
			norm = identity.AppendNormalized(norm[:0], e.Text)
			if _, ok := have[string(norm)]; ok {
				continue
			}
			have[string(norm)] = struct{}{}
			l.mu.Lock()
			pi := l.provIndex(e.Src, e.Session)
			l.mu.Unlock()
			add = append(add, ent{text: e.Text, ts: e.TS, prov: pi, file: l.fileIndex(e.File, e.Project)})
		}
		if len(add) > 0 {
			l.mu.Lock()
			l.ents = append(l.ents, add...)
			l.mu.Unlock()
			l.cond.Broadcast()
		}
	}
	return failed, reread
}

// fileIndex returns the index of the store file at path in l.files,
// adding it when it is new (a file a rewrite made).
func (l *list) fileIndex(path, project string) int32 {
	if i, ok := l.fileIx[path]; ok {
		return i
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	i := int32(len(l.files))
	l.files = append(l.files, store.File{Path: path, Project: project})
	l.fileIx[path] = i
	return i
}

// provIndex returns the index of src and session in l.provs, adding them
// when new. l.mu is held.
func (l *list) provIndex(src, session string) int32 {
	p := provenance{src, session}
	if i, ok := l.provIx[p]; ok {
		return i
	}
	i := int32(len(l.provs))
	l.provs = append(l.provs, p)
	l.provIx[p] = i
	return i
}

// provOf returns the src and session of e.
func (l *list) provOf(e ent) provenance {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.provs[e.prov]
}

// file returns the store file entry e was read from.
func (l *list) file(e ent) store.File {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.files[e.file]
}

// close stops the loading.
func (l *list) close() {
	l.stop.Store(true)
}

// endPass tells the feeders waiting in snapshot that q's pass is over.
// The flag is set under the list's mutex, which snapshot holds from its
// check of the flag to its Wait, so no feeder misses the broadcast.
func (l *list) endPass(q *quitter) {
	l.mu.Lock()
	q.flag.Store(true)
	l.mu.Unlock()
	l.cond.Broadcast()
	close(q.ch)
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
