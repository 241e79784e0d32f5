package picker

import (
	"os"
	"sync"
	"sync/atomic"
	"time"

	"hist/lib/history"
	"hist/lib/lock"
	"hist/lib/record"
	"hist/lib/store"
	"hist/lib/tombstone"
)

// ent is one visible prompt of a list, 40 bytes whatever its length: fzf
// holds the one copy of the text it shows, and the text is read again
// from the store file when it is needed (the preview, the pick, a delete,
// a later pass). sum, a hash of the prompt's identity, checks that what is
// read there is still the prompt.
type ent struct {
	ts    int64
	off   int64  // where the line of the text's copy starts in files[tfile]; -1: unknown; lost
	sum   uint64 // the hash of the prompt's identity (history.Entry.Sum)
	n     int32  // that line's length
	tfile int32  // the store file of the text's copy
	file  int32  // the store file of the richest copy (project, captured live)
	prov  int32  // src and session: an index into the list's provs
}

// provenance is the src and session of prompts.
type provenance struct{ src, session string }

// maxBacklog is how many texts at most the list keeps for prompts that no
// pass has shown yet: while no pass takes them (a delete is armed), the
// loading waits.
const maxBacklog = 1 << 15

// list is one scope's prompts, newest first, as they stream in from the
// store. It grows while loading; entries never move, so an index stays
// valid; a deleted prompt is marked gone.
type list struct {
	all    bool
	st     store.Store
	sc     store.Scope
	hidden *tombstone.Set
	seen   *history.Seen       // the first stream's seen-set
	sumOf  func(string) uint64 // ent.sum of a text (seen's Sum)

	mu     sync.Mutex
	cond   *sync.Cond
	files  []store.File
	fileIx map[string]int32
	ents   []ent
	// texts[i] is the text of ents[tbase+i]: the prompts loaded that
	// the normal pass has not shown yet (see maxBacklog).
	texts  []string
	tbase  int
	provs  []provenance // ent.prov's table; provs[0] is none
	provIx map[provenance]int32
	gone   map[int32]bool
	done   bool
	res    *history.StreamResult
	err    error // the scope's files could not be listed

	relocating sync.Mutex // one relocate at a time
	relocated  int        // how many relocates ran (under mu)

	stop atomic.Bool
}

// load starts streaming a scope of st into a new list (listing the
// scope's files too happens in the background).
func load(st store.Store, sc store.Scope, hidden *tombstone.Set) *list {
	seen := history.NewSeen()
	l := &list{all: sc.All, st: st, sc: sc, hidden: hidden, seen: seen, sumOf: seen.Sum(), gone: map[int32]bool{},
		provs: []provenance{{}}, provIx: map[provenance]int32{{}: 0}, fileIx: map[string]int32{}}
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
		l.mu.Lock()
		for _, f := range files {
			l.fileIndexLocked(f.Path, f.Project)
		}
		l.mu.Unlock()
		if afterList != nil {
			afterList()
		}
		res := l.stream(files, hidden)
		if failed, reread := l.settle(files, ids, history.Vanished(res.Failed)); reread {
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

// add appends prompts and their texts. It waits while the backlog is full
// (unless the list is closed).
func (l *list) add(ents []ent, texts []string) {
	l.mu.Lock()
	for len(l.texts) >= maxBacklog && !l.stop.Load() { // until text pops half
		l.cond.Wait()
	}
	l.ents = append(l.ents, ents...)
	l.texts = append(l.texts, texts...)
	l.mu.Unlock()
	l.cond.Broadcast()
}

func (l *list) stream(files []store.File, hidden *tombstone.Set) *history.StreamResult {
	batch := make([]ent, 0, 16)
	texts := make([]string, 0, 16)
	limit := 16
	flush := func() {
		l.add(batch, texts)
		batch, texts = batch[:0], texts[:0]
		clear(texts[:cap(texts)])
		if limit < 4096 {
			limit *= 4
		}
	}
	// The stream's own seen-set gives each prompt's sum: its identity is
	// not normalized and hashed a second time.
	seen := l.seen
	l.seen = nil // the set is garbage once the stream is over
	res := history.StreamWith(files, hidden, history.StreamOptions{Seen: seen, Provenance: true}, func(e history.Entry) bool {
		if l.stop.Load() {
			return false
		}
		if e.Settled {
			return true
		}
		if e.Richer {
			// An older, richer copy of the N-th prompt sent: its
			// provenance (what the preview and the resume key use) is
			// the prompt's. Where its text is read stays.
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
		pi, fi := l.provIndex(e.Src, e.Session), l.fileIx[e.File]
		l.mu.Unlock()
		batch = append(batch, ent{ts: e.TS, off: e.Off, n: int32(e.Len), sum: e.Sum, tfile: fi, file: fi, prov: pi})
		texts = append(texts, e.Text)
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
func (l *list) settle(files []store.File, ids store.FileIDs, gone bool) (failed []history.FileError, reread bool) {
	st, sc := l.st, l.sc
	deadline := time.Now().Add(settleWait)
	var have map[uint64]struct{}
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
			have = make(map[uint64]struct{}, len(l.ents))
			for _, e := range l.ents {
				have[e.sum] = struct{}{}
			}
			l.mu.Unlock()
		}
		var add []ent
		var texts []string
		for i := range res.Len() {
			e := res.At(i)
			sum := l.sumOf(e.Text)
			if _, ok := have[sum]; ok {
				continue
			}
			have[sum] = struct{}{}
			l.mu.Lock()
			pi, fi := l.provIndex(e.Src, e.Session), l.fileIndexLocked(e.File, e.Project)
			l.mu.Unlock()
			add = append(add, ent{ts: e.TS, off: -1, sum: sum, tfile: fi, file: fi, prov: pi})
			texts = append(texts, e.Text)
		}
		if len(add) > 0 {
			l.add(add, texts)
		}
	}
	return failed, reread
}

// fileIndexLocked returns the index of the store file at path in l.files,
// adding it when it is new (a file a rewrite made). l.mu is held.
func (l *list) fileIndexLocked(path, project string) int32 {
	if i, ok := l.fileIx[path]; ok {
		return i
	}
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

// file returns the store file entry e's provenance was read from.
func (l *list) file(e ent) store.File {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.files[e.file]
}

// text returns the text of entry i: from the backlog while no pass has
// shown it, else from its store file. pop (the normal pass's feeder) drops
// the backlog's texts up to i. ok is false when the prompt is in none of
// the scope's files any more.
func (l *list) text(i int32, pop bool) (string, bool) {
	l.mu.Lock()
	if j := int(i) - l.tbase; j >= 0 && j < len(l.texts) {
		t := l.texts[j]
		if pop {
			n := len(l.texts)
			clear(l.texts[:j+1])
			l.texts = l.texts[j+1:]
			l.tbase += j + 1
			if n >= maxBacklog/2 && len(l.texts) < maxBacklog/2 {
				l.cond.Broadcast() // the loading may go on (see add)
			}
		}
		l.mu.Unlock()
		return t, true
	}
	e, gen := l.ents[i], l.relocated
	path := l.files[e.tfile].Path
	l.mu.Unlock()
	if e.off == lost {
		return "", false
	}
	if t, ok := l.readText(path, e); ok {
		return t, true
	}
	l.relocate(gen)
	l.mu.Lock()
	e = l.ents[i]
	path = l.files[e.tfile].Path
	l.mu.Unlock()
	return l.readText(path, e)
}

// readText reads e's text from the line at e.off in path, if that line is
// still a copy of e's prompt.
func (l *list) readText(path string, e ent) (string, bool) {
	if e.off < 0 || e.n <= 0 {
		return "", false
	}
	f, err := os.Open(path)
	if err != nil {
		return "", false
	}
	defer f.Close()
	line := make([]byte, e.n)
	if _, err := f.ReadAt(line, e.off); err != nil {
		return "", false
	}
	var v record.View
	if record.ParseView(line, &v) != nil {
		return "", false
	}
	t := string(v.Text)
	if l.sumOf(t) != e.sum {
		return "", false
	}
	return t, true
}

// lost is the ent.off of a prompt that relocate found nowhere.
const lost = -2

// relocate finds again where the prompts' copies are, after a rewrite (a
// delete, a compaction, by this process or another) replaced the files
// they were read from: the scope is streamed again and each prompt of the
// list found there gets the place of its newest copy. A prompt found
// nowhere (deleted meanwhile) is lost: it reads as gone from then on.
// gen is the number of relocates the caller saw: one that ran since
// answers it.
func (l *list) relocate(gen int) {
	l.relocating.Lock()
	defer l.relocating.Unlock()
	l.mu.Lock()
	if l.relocated != gen {
		l.mu.Unlock()
		return
	}
	l.relocated++
	l.mu.Unlock()
	files, err := l.st.Files(l.sc)
	if err != nil {
		return
	}
	hidden, err := tombstone.Load(l.st.Hidden())
	if err != nil {
		hidden = l.hidden
	}
	l.mu.Lock()
	where := make(map[uint64]int32, len(l.ents))
	for i, e := range l.ents {
		where[e.sum] = int32(i)
	}
	l.mu.Unlock()
	history.Stream(files, hidden, func(e history.Entry) bool {
		if e.Richer || e.Settled {
			return true
		}
		sum := l.sumOf(e.Text)
		i, ok := where[sum]
		if !ok {
			return true
		}
		delete(where, sum)
		l.mu.Lock()
		p := &l.ents[i]
		p.tfile, p.off, p.n = l.fileIndexLocked(e.File, e.Project), e.Off, int32(e.Len)
		l.mu.Unlock()
		return true
	})
	l.mu.Lock()
	for _, i := range where {
		l.ents[i].off = lost
	}
	l.mu.Unlock()
}

// close stops the loading.
func (l *list) close() {
	// Set under the mutex, as endPass does: add holds it from its check
	// of the flag to its Wait.
	l.mu.Lock()
	l.stop.Store(true)
	l.mu.Unlock()
	l.cond.Broadcast()
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
// and returns how many it holds and whether it is done. quit ends the
// wait.
func (l *list) snapshot(have int, quit *quitter) (int, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for len(l.ents) <= have && !l.done && !quit.Load() {
		l.cond.Wait()
	}
	return len(l.ents), l.done
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
