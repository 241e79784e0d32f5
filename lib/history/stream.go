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
	pending map[key]int // with Hold: the prompts a richer copy may still change, by place
	last    map[key]use // with Uses: each prompt's last use counted
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
		s.pending = map[key]int{}
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
		s.pending[k] = n
	}
	e := s.entry(t)
	if s.opt.Uses != nil {
		s.last[k] = use{n, v.TS}
		s.opt.Uses(n, e)
	}
	e.Text = string(v.Text)
	return s.held.send(hold{Entry: e, k: k, rank: rk, final: final})
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
	n, ok := s.pending[k]
	if !ok {
		return true
	}
	if p := &s.held.held[n-s.held.base]; rk > p.rank {
		e := s.entry(t)
		p.Src, p.Session, p.File, p.Project, p.rank = e.Src, e.Session, e.File, e.Project, rk
		if rk == maxRank { // none can be richer
			return s.held.settle(p, s.pending)
		}
	}
	return true
}

// settle settles the held prompts that no copy at front or older can
// make richer (all of them at math.MinInt64), and the oldest while too
// many wait. The first held is never settled (flush sent those), and the
// others are newer than it.
func (s *streamer) settle(front int64) bool {
	h := &s.held
	for len(h.held) > 0 {
		if p := &h.held[0]; h.waiting > maxPending || front == math.MinInt64 || p.TS-richerWindow > front {
			if !h.settle(p, s.pending) {
				return false
			}
		} else {
			return true
		}
	}
	return true
}

// holder holds prompts back until their provenance is settled
// (Options.Hold), and sends them in the order they came.
type holder struct {
	held    []hold
	waiting int // the held prompts not settled
	base    int // the number of prompts sent before held[0]
	fn      func(Entry) bool
}

// hold is a prompt sent to a holder: its key, its richest copy's richness
// so far, and whether it is settled.
type hold struct {
	Entry
	k     key
	rank  int8
	final bool
}

func (h *holder) send(x hold) bool {
	if x.final && len(h.held) == 0 {
		h.base++
		return h.fn(x.Entry)
	}
	if !x.final {
		h.waiting++
	}
	h.held = append(h.held, x)
	return h.flush()
}

// settle settles p, one of h's prompts, which pending no longer holds.
func (h *holder) settle(p *hold, pending map[key]int) bool {
	delete(pending, p.k)
	p.final = true
	h.waiting--
	return h.flush()
}

func (h *holder) flush() bool {
	for len(h.held) > 0 && h.held[0].final {
		e := h.held[0].Entry
		h.held, h.base = h.held[1:], h.base+1
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
