// Package history reads the visible history of a scope: every store file's
// records, each prompt once, none that a tombstone hides, newest first.
//
// A prompt with several copies (a hook capture, a transcript import, a
// copy migrated from an agent's recall file) shows at its newest copy's
// time and text, with the provenance (src, session, file and project) of
// its richest copy: one with a project and a session beats one with a
// project only, which beats one with neither; among equally rich copies
// the newest wins. So a prompt keeps its project and resume command when a
// bare copy of it (history-global.jsonl) is a little newer.
//
// It streams: files are read one at a time through one buffer, and only
// the winning copy of each prompt is kept, its text packed in an arena, so
// a scope of a million prompts costs about the size of its unique texts.
package history

import (
	"cmp"
	"errors"
	"fmt"
	"hash/maphash"
	"io/fs"
	"os"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"unsafe"

	"hist/lib/identity"
	"hist/lib/record"
	"hist/lib/store"
	"hist/lib/tombstone"
)

// Entry is one visible prompt: the newest copy's text and time, the
// richest copy's provenance.
type Entry struct {
	Text    string
	TS      int64
	Src     string
	Session string
	File    string // the store file the richest copy is in
	Project string // its project hash ("" for global files)
	// Stream only: N is the prompt's place among the prompts sent (0 for
	// the first). Richer marks a later call for the N-th prompt: an older
	// copy of it is richer, and its Src, Session, File and Project replace
	// the ones sent (its Text and TS are empty: the sent ones stay).
	N      int
	Richer bool
	// Stream only: Off and Len locate the line of the copy sent in File
	// (for a Richer call, the File of the first call), as the file was
	// when it was read: the selector reads the text again from there
	// rather than keep it.
	Off int64
	Len int
	// Stream only: Sum is a 64-bit hash of the prompt's identity, the one
	// its stream's seen-set keeps (Seen.Sum gives it for any text).
	Sum uint64
	// Stream with Provenance only: Final marks a prompt sent whose
	// provenance no later call changes; Settled marks a later call saying
	// that of the N-th prompt will not change any more (see StreamWith).
	Final   bool
	Settled bool
}

// FileError is a store file that could not be read.
type FileError struct {
	Path string
	Err  error
}

func (e FileError) Error() string { return fmt.Sprintf("%s: %v", e.Path, e.Err) }

// Vanished reports whether one of the failed files vanished (or was
// replaced) while it was read: a rewrite moved its prompts, and a read of
// the store once the rewrite is over finds them.
func Vanished(failed []FileError) bool {
	for _, f := range failed {
		if errors.Is(f.Err, fs.ErrNotExist) {
			return true
		}
	}
	return false
}

// Result is a scope's visible history.
type Result struct {
	Stats  record.Stats
	Failed []FileError // files that could not be read (the rest were)
	Hidden int         // prompts hidden by a tombstone

	files   []store.File
	provs   []prov
	entries []entry
}

type prov struct{ src, session string }

// entry is one prompt: its newest copy's text, ts and seq, and its richest
// copy's provenance.
type entry struct {
	text   string
	ts     int64
	seq    uint64 // file index << 32 | record number in the file: read order
	pts    int64  // the richest copy's ts
	pseq   uint64 // the richest copy's seq
	prov   int32  // the richest copy's src and session
	rank   int8   // the richest copy's richness
	hidden bool   // a tombstone hides the prompt (all its copies alike)
}

func (e *entry) file() int32 { return int32(e.pseq >> 32) }

// maxRank is the richest a copy gets (see rank).
const maxRank = 3

// rank is how much a copy tells of where its prompt came from: 3 with a
// project and an agent session, 2 with a project, 1 with a session only,
// 0 with neither.
func rank(src, session []byte, project string) int8 {
	var r int8
	if project != "" {
		r = 2
	}
	if len(src) > 0 && len(session) > 0 {
		r++
	}
	return r
}

// richer reports whether a copy of richness r at (ts, seq) gives e its
// provenance: it is richer, or as rich and newer.
func (e *entry) richer(r int8, ts int64, seq uint64) bool {
	return r > e.rank || r == e.rank && newer(ts, seq, e.pts, e.pseq)
}

// Len is the number of visible prompts.
func (r *Result) Len() int { return len(r.entries) }

// At returns the i-th visible prompt, newest first.
func (r *Result) At(i int) Entry {
	e := &r.entries[i]
	f := r.files[e.file()]
	p := r.provs[e.prov]
	return Entry{Text: e.text, TS: e.ts, Src: p.src, Session: p.session, File: f.Path, Project: f.Project}
}

type key [2]uint64

// reader holds the state of one Read worker: the files of one contiguous
// group, read one at a time.
type reader struct {
	files   []store.File
	index   *table
	keys    []key // keys[i] is entries[i]'s
	hidden  *tombstone.Set
	seed1   maphash.Seed
	seed2   maphash.Seed
	norm    []byte
	arena   []byte
	entries []entry
	provs   []prov
	provIx  map[prov]int32
	stats   record.Stats
	failed  []fileError
	file    int32  // the file being read
	line    uint64 // records read from it so far
}

const chunk = 1 << 20

// store copies b into the arena and returns it as a string that lives as
// long as the arena.
func (rd *reader) store(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	if len(b) > chunk/4 {
		return string(b)
	}
	if cap(rd.arena)-len(rd.arena) < len(b) {
		rd.arena = make([]byte, 0, chunk)
	}
	start := len(rd.arena)
	rd.arena = append(rd.arena, b...)
	s := rd.arena[start:len(rd.arena):len(rd.arena)]
	return unsafe.String(&s[0], len(s))
}

func (rd *reader) provOf(src, session []byte) int32 {
	if len(src) == 0 && len(session) == 0 {
		return 0
	}
	if i, ok := rd.provIx[prov{string(src), string(session)}]; ok { // no alloc for lookups
		return i
	}
	return rd.addProv(prov{string(src), string(session)})
}

func (rd *reader) addProv(p prov) int32 {
	if i, ok := rd.provIx[p]; ok {
		return i
	}
	i := int32(len(rd.provs))
	rd.provs = append(rd.provs, p)
	rd.provIx[p] = i
	return i
}

// parallelMin is the size of a scope below which Read uses one worker;
// workers says how many it may use. Tests change both.
var (
	parallelMin int64 = 8 << 20
	workers           = func() int { return runtime.GOMAXPROCS(0) }
)

// bytesPerRecord estimates the store bytes per prompt kept, to size the
// tables up front.
const bytesPerRecord = 256

// Read reads the visible history of files. hidden may be nil (nothing is
// hidden). Files that cannot be read are listed in Result.Failed; the
// others are read whole.
//
// A large scope is read by a few workers (one per CPU, at most 4), each
// taking the next file not yet taken, largest first, and their results
// are merged. The result is the same as reading the files in order: for
// each prompt the newest copy (the greatest ts, and of equal ts the one
// read last: the later file, the later line) gives its text and time, and
// the richest copy (of equally rich ones the newest) its provenance; every
// copy's seq tells whoever read it its place.
func Read(files []store.File, hidden *tombstone.Set) *Result {
	res := &Result{files: files}
	seed1, seed2 := maphash.MakeSeed(), maphash.MakeSeed()
	order, total := plan(files)
	n := 1
	if total >= parallelMin {
		n = min(workers(), 4, len(files))
	}
	readers := make([]*reader, n)
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := range readers {
		hint := int(min(total/int64(n)/bytesPerRecord, 1<<24))
		rd := &reader{
			files:   files,
			index:   newTable(hint),
			entries: make([]entry, 0, hint),
			keys:    make([]key, 0, hint),
			seed1:   seed1,
			seed2:   seed2,
			provIx:  make(map[prov]int32),
		}
		if hidden != nil && !hidden.Empty() {
			rd.hidden = hidden
		}
		rd.addProv(prov{})
		readers[w] = rd
		run := func() {
			for {
				j := int(next.Add(1) - 1)
				if j >= len(order) {
					return
				}
				i := order[j]
				if err := rd.readFile(int32(i), files[i].Path); err != nil {
					rd.failed = append(rd.failed, fileError{i, FileError{Path: files[i].Path, Err: err}})
				}
			}
		}
		if w == len(readers)-1 {
			run()
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			run()
		}()
	}
	wg.Wait()
	var failed []fileError
	for _, rd := range readers {
		res.Stats.Add(rd.stats)
		failed = append(failed, rd.failed...)
	}
	slices.SortFunc(failed, func(a, b fileError) int { return a.file - b.file })
	for _, f := range failed {
		res.Failed = append(res.Failed, f.FileError)
	}
	base := readers[0]
	for _, rd := range readers[1:] {
		if len(rd.entries) > len(base.entries) {
			base = rd
		}
	}
	others := 0
	for _, rd := range readers {
		if rd != base {
			others++
			base.merge(rd, others < len(readers)-1)
		}
	}
	base.index, base.keys = nil, nil // garbage from here on
	res.provs = base.provs
	res.entries = base.entries
	finish(res)
	return res
}

// table indexes a reader's entries by key: open addressing, linear
// probing, at most half full. A slot holds the key's top 32 bits and the
// entry's index plus one (0 is an empty slot); the key itself is in the
// reader's keys, beside its entry. It is smaller than a map[key]int32 and
// needs no second hash of the key, which matters at a million lookups.
type table struct {
	slots []uint64
	mask  uint64
	n     int
}

func newTable(hint int) *table {
	size := 64
	for size < 2*hint {
		size *= 2
	}
	return &table{slots: make([]uint64, size), mask: uint64(size - 1)}
}

// find returns the index of k's entry, or the slot where k goes.
func (t *table) find(k key, keys []key) (int32, uint64, bool) {
	tag := k[0] >> 32
	for pos := k[0] & t.mask; ; pos = (pos + 1) & t.mask {
		s := t.slots[pos]
		if s == 0 {
			return 0, pos, false
		}
		if s>>32 == tag {
			if i := int32(uint32(s) - 1); keys[i] == k {
				return i, pos, true
			}
		}
	}
}

// insert records that the last of keys, just added, lives at pos (from a
// find that failed since).
func (t *table) insert(pos uint64, keys []key) {
	i := len(keys) - 1
	t.slots[pos] = keys[i][0]>>32<<32 | uint64(i+1)
	t.n++
	if 2*t.n > len(t.slots) {
		t.grow(keys)
	}
}

// add indexes the last of keys, which is not in the table.
func (t *table) add(keys []key) {
	_, pos, _ := t.find(keys[len(keys)-1], keys[:len(keys)-1])
	t.insert(pos, keys)
}

func (t *table) grow(keys []key) {
	size := 2 * len(t.slots)
	t.slots, t.mask = make([]uint64, size), uint64(size-1)
	for i, k := range keys {
		pos := k[0] & t.mask
		for t.slots[pos] != 0 {
			pos = (pos + 1) & t.mask
		}
		t.slots[pos] = k[0]>>32<<32 | uint64(i+1)
	}
}

// fileError is a FileError with the index of its file.
type fileError struct {
	file int
	FileError
}

// plan returns the order in which to read files (largest first, so that
// the workers finish together) and their total size.
func plan(files []store.File) ([]int, int64) {
	sizes := make([]int64, len(files))
	order := make([]int, len(files))
	var total int64
	for i, f := range files {
		order[i] = i
		if fi, err := os.Lstat(f.Path); err == nil {
			sizes[i] = fi.Size()
			total += fi.Size()
		}
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(sizes[b], sizes[a]) })
	return order, total
}

// newer reports whether the copy at (ts, seq) is newer than the one at
// (ts2, seq2): a greater ts, or the same ts read later.
func newer(ts int64, seq uint64, ts2 int64, seq2 uint64) bool {
	return ts > ts2 || (ts == ts2 && seq > seq2)
}

// merge moves o's prompts into rd, keeping the newest copy's text and
// time and the richest copy's provenance of each. The
// lookups run on two goroutines (each of o's keys is in rd at most once,
// so they touch distinct entries); more says another merge follows, which
// needs o's new keys in rd's index.
func (rd *reader) merge(o *reader, more bool) {
	provs := make([]int32, len(o.provs))
	for i, p := range o.provs {
		provs[i] = rd.addProv(p)
	}
	half := len(o.entries) / 2
	var fresh [2][]int32 // o's entries whose prompt rd does not have
	lookup := func(part, from, to int) {
		for oi := from; oi < to; oi++ {
			oe := &o.entries[oi]
			if i, _, ok := rd.index.find(o.keys[oi], rd.keys); ok {
				e := &rd.entries[i]
				if newer(oe.ts, oe.seq, e.ts, e.seq) {
					e.text, e.ts, e.seq = oe.text, oe.ts, oe.seq
				}
				if e.richer(oe.rank, oe.pts, oe.pseq) {
					e.pts, e.pseq, e.rank, e.prov = oe.pts, oe.pseq, oe.rank, provs[oe.prov]
				}
				continue
			}
			fresh[part] = append(fresh[part], int32(oi))
		}
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		lookup(0, 0, half)
	}()
	lookup(1, half, len(o.entries))
	wg.Wait()
	n := len(rd.entries) + len(fresh[0]) + len(fresh[1])
	rd.entries = slices.Grow(rd.entries, n-len(rd.entries))
	if more {
		rd.keys = slices.Grow(rd.keys, n-len(rd.keys))
	}
	for _, part := range fresh {
		for _, oi := range part {
			e := o.entries[oi]
			e.prov = provs[e.prov]
			if more {
				rd.keys = append(rd.keys, o.keys[oi])
				rd.index.add(rd.keys)
			}
			rd.entries = append(rd.entries, e)
		}
	}
	o.index, o.keys, o.entries = nil, nil, nil
}

func (rd *reader) readFile(fi int32, path string) error {
	f, err := store.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	rd.file, rd.line = fi, 0
	st, err := record.Scan(f, func(l *record.Line) error {
		rd.add(l)
		return nil
	})
	rd.stats.Add(st)
	return err
}

func (rd *reader) add(l *record.Line) {
	rd.line++
	seq := uint64(rd.file)<<32 | rd.line
	rd.norm = identity.AppendNormalized(rd.norm[:0], unsafe.String(unsafe.SliceData(l.Text), len(l.Text)))
	k := key{maphash.Bytes(rd.seed1, rd.norm), maphash.Bytes(rd.seed2, rd.norm)}
	r := rank(l.Src, l.Session, rd.files[rd.file].Project)
	i, pos, ok := rd.index.find(k, rd.keys)
	if ok { // files come in any order
		e := &rd.entries[i]
		if newer(l.TS, seq, e.ts, e.seq) {
			e.text, e.ts, e.seq = rd.store(l.Text), l.TS, seq
		}
		if e.richer(r, l.TS, seq) {
			e.pts, e.pseq, e.rank, e.prov = l.TS, seq, r, rd.provOf(l.Src, l.Session)
		}
		return
	}
	rd.keys = append(rd.keys, k)
	rd.index.insert(pos, rd.keys)
	rd.entries = append(rd.entries, entry{
		text: rd.store(l.Text), ts: l.TS, seq: seq, pts: l.TS, pseq: seq, rank: r,
		prov:   rd.provOf(l.Src, l.Session),
		hidden: rd.hidden != nil && rd.hidden.HiddenNormalized(rd.norm),
	})
}

// finish drops the hidden prompts and sorts the rest newest first.
func finish(res *Result) {
	es := res.entries[:0]
	for _, e := range res.entries {
		if e.hidden {
			res.Hidden++
			continue
		}
		es = append(es, e)
	}
	res.entries = sortEntries(es)
}

// cmpEntries orders entries newest first: greater ts first, and of equal
// ts the copy read later.
func cmpEntries(a, b entry) int {
	switch {
	case a.ts > b.ts:
		return -1
	case a.ts < b.ts:
		return 1
	case a.seq > b.seq:
		return -1
	case a.seq < b.seq:
		return 1
	}
	return 0
}

// sortEntries sorts es newest first: a large slice by a radix sort on ts
// (stable, so equal ts keep their order, then sorted by seq).
func sortEntries(es []entry) []entry {
	if len(es) < 1<<16 {
		slices.SortFunc(es, cmpEntries)
		return es
	}
	maxTS, minTS := es[0].ts, es[0].ts
	for i := range es {
		maxTS, minTS = max(maxTS, es[i].ts), min(minTS, es[i].ts)
	}
	span := uint64(maxTS) - uint64(minTS)
	const bits = 11
	const buckets = 1 << bits
	src, dst := es, make([]entry, len(es))
	for shift := 0; shift < 64 && span>>shift != 0; shift += bits {
		var count [buckets]int
		for i := range src {
			count[(uint64(maxTS)-uint64(src[i].ts))>>shift&(buckets-1)]++
		}
		sum := 0
		for b, c := range count {
			count[b], sum = sum, sum+c
		}
		for i := range src {
			b := (uint64(maxTS) - uint64(src[i].ts)) >> shift & (buckets - 1)
			dst[count[b]] = src[i]
			count[b]++
		}
		src, dst = dst, src
	}
	for i := 0; i < len(src); {
		j := i + 1
		for j < len(src) && src[j].ts == src[i].ts {
			j++
		}
		if j-i > 1 {
			slices.SortFunc(src[i:j], cmpEntries)
		}
		i = j
	}
	return src
}
