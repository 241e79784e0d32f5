package history

import (
	"container/heap"
	"hash/maphash"
	"math"
	"path/filepath"
	"slices"

	"hist/lib/identity"
	"hist/lib/store"
	"hist/lib/tombstone"
)

// Options tune a stream.
type Options struct {
	// Hold sends each prompt only once no richer copy can come, with its
	// richest copy's provenance, still newest first: at once when the copy
	// met first has a project and a session; else once the stream is
	// more than richerWindow older than that copy, or more than
	// maxPending prompts wait, or the files are read.
	Hold bool
	// Filter selects the copies read.
	Filter Filter
	// Uses, when set, is called for each use of the n-th prompt sent
	// (from 0, across the reads of a Stream): each copy selected that is
	// more than useGap older than the last one counted, the copy sent
	// first included. e is that copy's time and provenance (its Text is
	// empty).
	Uses func(n int, e Entry)
}

// richerWindow is how much older than a prompt's newest copy a richer copy
// can be and still give the prompt its provenance (ms), and maxPending
// how many prompts at most wait for one. Both are part of the order and
// provenance hist-list --json and the selector show.
const (
	richerWindow = 60 * 60 * 1000
	maxPending   = 1 << 16
)

// seenSet holds the identities of the prompts a stream met, as 128-bit
// hashes of their normalized text.
type seenSet map[key]struct{}

type key [2]uint64

var seed1, seed2 = maphash.MakeSeed(), maphash.MakeSeed()

func keyOf(norm []byte) key { return key{maphash.Bytes(seed1, norm), maphash.Bytes(seed2, norm)} }

// pend is a prompt sent whose provenance may still change: its place
// among the prompts sent, the richness of its richest copy met, and its
// newest copy's time.
type pend struct {
	n    int
	rank int8
	ts   int64
}

// use is a prompt's place in the stream and the time of its last use
// counted.
type use struct {
	n  int
	ts int64
}

// streamer merges the tails of a stream's files on their records' times.
type streamer struct {
	files   []store.File
	hidden  *tombstone.Set
	seen    seenSet
	res     *StreamResult
	norm    []byte
	opt     Options
	held    holder
	pending map[key]pend // with Hold: the prompts a richer copy may still change
	fifo    []key        // pending's keys, in the order sent (some settled already)
	last    map[key]use  // with Uses: each prompt's last use counted
}

// streamFiles sends the visible prompts of files to fn, newest first,
// each once: none that hidden hides (hidden may be nil), none that seen
// holds, whose identities it adds. sent counts the prompts of earlier
// streams, so that Options.Uses names prompts across streams.
//
// Each file is read up to the size it had when it was opened: lines
// appended later are not read, and a last line with no newline yet (a
// writer still finishing it) is skipped and counted as malformed.
func streamFiles(files []store.File, hidden *tombstone.Set, seen seenSet, sent int, opt Options, fn func(Entry) bool) *StreamResult {
	if m := opt.Filter.Machine; m != "" {
		files = slices.DeleteFunc(slices.Clone(files), func(f store.File) bool { return store.MachineOf(filepath.Base(f.Path)) != m })
	}
	s := &streamer{files: files, seen: seen, res: &StreamResult{sent: sent}, opt: opt, last: map[key]use{}, held: holder{base: sent, fn: fn}}
	if hidden != nil && !hidden.Empty() {
		s.hidden = hidden
	}
	if opt.Hold {
		s.pending = map[key]pend{}
	}
	var all, tails tailHeap
	for i, f := range files {
		t, err := openTail(f, i, len(files))
		if err != nil {
			s.res.Failed = append(s.res.Failed, FileError{Path: f.Path, Err: err})
			continue
		}
		if all = append(all, t); s.advance(t) {
			tails = append(tails, t)
		}
	}
	heap.Init(&tails)
	for len(tails) > 0 {
		t := tails[0]
		if opt.Filter.Since != 0 && t.view.TS < opt.Filter.Since {
			break // every copy left is older
		}
		if !s.settle(t.view.TS) || opt.Filter.keep(&t.view) && !s.emit(t) {
			s.res.Stopped = true
			break
		}
		if s.advance(t) {
			heap.Fix(&tails, 0)
		} else {
			heap.Pop(&tails)
		}
	}
	if !s.res.Stopped && !s.settle(math.MinInt64) {
		s.res.Stopped = true
	}
	for _, t := range all {
		s.res.Stats.Add(t.st)
	}
	return s.res
}

// advance moves t to its next record; false when it has none left (a
// failure is recorded).
func (s *streamer) advance(t *tail) bool {
	ok, err := t.next()
	if err != nil {
		s.res.Failed = append(s.res.Failed, FileError{Path: t.path, Err: err})
	}
	return ok
}

// emit handles t's current record: it sends its prompt when the stream
// meets it first, unless it is hidden; a later (older) copy counts as a
// use, and may give a prompt sent its provenance.
func (s *streamer) emit(t *tail) bool {
	v := &t.view
	s.norm = identity.AppendNormalized(s.norm[:0], string(v.Text))
	k := keyOf(s.norm)
	rk := rank(v.Src, v.Session, s.files[t.file].Project)
	if _, met := s.seen[k]; met {
		if u, ok := s.last[k]; ok && v.TS <= u.ts-useGap {
			s.last[k] = use{u.n, v.TS}
			s.opt.Uses(u.n, s.entry(t))
		}
		return s.pending == nil || s.richerCopy(k, rk, t)
	}
	s.seen[k] = struct{}{}
	if s.hidden != nil && s.hidden.HiddenNormalized(s.norm) {
		s.res.Hidden++
		return true
	}
	n := s.res.sent
	s.res.sent++
	final := s.pending == nil || rk == maxRank
	if !final {
		s.pending[k] = pend{n: n, rank: rk, ts: v.TS}
		s.fifo = append(s.fifo, k)
	}
	e := s.entry(t)
	if s.opt.Uses != nil {
		s.last[k] = use{n, v.TS}
		s.opt.Uses(n, e)
	}
	e.Text = string(v.Text)
	return s.held.send(e, final)
}

// entry is the time and provenance of t's current record.
func (s *streamer) entry(t *tail) Entry {
	f := s.files[t.file]
	return Entry{TS: t.view.TS, Src: string(t.view.Src), Session: string(t.view.Session), File: f.Path, Project: f.Project}
}

// richerCopy gives the prompt of key k the provenance of t's current
// record, an older copy of richness rk, if it is richer than what was
// sent and the prompt is not settled yet.
func (s *streamer) richerCopy(k key, rk int8, t *tail) bool {
	o, ok := s.pending[k]
	if !ok || rk <= o.rank {
		return true
	}
	s.held.richer(o.n, s.entry(t))
	if rk == maxRank { // none can be richer
		delete(s.pending, k)
		return s.held.settled(o.n)
	}
	o.rank = rk
	s.pending[k] = o
	return true
}

// settle settles the pending prompts that no copy at front or older can
// make richer (all of them at math.MinInt64), and the oldest while too
// many wait.
func (s *streamer) settle(front int64) bool {
	for len(s.fifo) > 0 {
		k := s.fifo[0]
		p, ok := s.pending[k]
		if ok && len(s.pending) <= maxPending && front != math.MinInt64 && p.ts-richerWindow <= front {
			return true
		}
		s.fifo = s.fifo[1:]
		if ok {
			delete(s.pending, k)
			if !s.held.settled(p.n) {
				return false
			}
		}
	}
	return true
}

// holder holds prompts back until their provenance is settled
// (Options.Hold), and sends them in the order they came.
type holder struct {
	held  []Entry
	final []bool
	base  int // the number of prompts sent before held[0]
	fn    func(Entry) bool
}

func (h *holder) send(e Entry, final bool) bool {
	if final && len(h.held) == 0 {
		h.base++
		return h.fn(e)
	}
	h.held, h.final = append(h.held, e), append(h.final, final)
	return h.flush()
}

func (h *holder) richer(n int, e Entry) {
	p := &h.held[n-h.base]
	p.Src, p.Session, p.File, p.Project = e.Src, e.Session, e.File, e.Project
}

func (h *holder) settled(n int) bool {
	h.final[n-h.base] = true
	return h.flush()
}

func (h *holder) flush() bool {
	for len(h.held) > 0 && h.final[0] {
		e := h.held[0]
		h.held, h.final, h.base = h.held[1:], h.final[1:], h.base+1
		if !h.fn(e) {
			return false
		}
	}
	return true
}

// tailHeap orders tails by their current record: the newest first, and
// of equal times the later file's.
type tailHeap []*tail

func (h tailHeap) Len() int { return len(h) }
func (h tailHeap) Less(i, j int) bool {
	if h[i].view.TS != h[j].view.TS {
		return h[i].view.TS > h[j].view.TS
	}
	return h[i].file > h[j].file
}
func (h tailHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *tailHeap) Push(x any)   { *h = append(*h, x.(*tail)) }
func (h *tailHeap) Pop() any {
	old := *h
	t := old[len(old)-1]
	*h = old[:len(old)-1]
	return t
}
