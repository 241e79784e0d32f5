package history

import (
	"bytes"
	"cmp"
	"container/heap"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"io/fs"
	"math"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"unsafe"

	"hist/lib/identity"
	"hist/lib/record"
	"hist/lib/store"
	"hist/lib/tombstone"
)

// StreamResult is what Stream saw.
type StreamResult struct {
	Stats  record.Stats
	Failed []FileError // files that could not be read (or not to the end)
	Hidden int         // prompts hidden by a tombstone (each counted once)
	Sent   int         // prompts handed to the callback
	// Unordered counts lines that were newer than the line after them in
	// their file. A capture file's lines are trusted to be in time order
	// (one process appended them): such a line in one is sent where its
	// file put it. Other files are sorted as they are read (see Stream).
	Unordered int
	Stopped   bool // the callback asked to stop
}

// StreamOptions tunes a stream.
type StreamOptions struct {
	// Seen holds the prompts an earlier stream sent (or found hidden):
	// they are not sent again, and the prompts this one sends are added.
	// nil: a set of the stream's own.
	Seen *Seen
	// View sends Entry.Text as a view valid only during the call: no copy
	// of the text is kept.
	View bool
	// Provenance asks for the Richer and Settled calls (see Stream).
	Provenance bool
}

// RicherWindow is how much older than a prompt's newest copy a richer
// copy can be and still give the prompt its provenance (ms), and
// maxPending how many prompts at most wait for one: a stream holds only
// the prompts sent within the window, and when more wait, the oldest is
// settled early. Both are part of the order of what hist-list --json and
// the selector show, so they agree.
const (
	RicherWindow = 60 * 60 * 1000
	maxPending   = 1 << 16
)

// Stream sends the visible prompts of files to fn as it reads them,
// newest first, each prompt once, none that hidden hides (hidden may be
// nil), and the Richer calls of StreamOptions.Provenance (not the
// Settled ones). Entry strings stay valid after fn returns.
func Stream(files []store.File, hidden *tombstone.Set, fn func(Entry) bool) *StreamResult {
	return StreamWith(files, hidden, StreamOptions{Provenance: true}, func(e Entry) bool {
		return e.Settled || fn(e)
	})
}

// inOrder reports whether f's lines are in time order by the way it is
// written: a capture file (or what a rewrite left of one) is appended by
// one process as its prompts come; seed, import and compact files and
// history-global.jsonl are written in transcript or merge order.
func inOrder(f store.File) bool {
	k := f.Kind
	if k == store.Carry || k == store.Claim {
		k = store.Classify(store.Origin(filepath.Base(f.Path)))
	}
	switch k {
	case store.Seed, store.Import, store.Compact, store.GlobalFile:
		return false
	}
	return true
}

// StreamWith is Stream with options. It does not read everything first:
// every file is read backwards from its end, a block at a time, and the
// files are merged on the lines' timestamps, so the first prompts arrive
// after a few kilobytes of each file, however large the scope. It keeps
// one block per file and a 16-byte hash per prompt met (Seen), and never a
// prompt's text once fn has it (with View, not even while fn has it).
//
// The order is exact, but for a capture file larger than a block whose
// lines are out of time order: a capture file is appended by one
// process as its prompts come, so a large one is read from its end as it
// is (see inOrder). Any other file (an import, a seed file, a compact
// file, which are written in transcript or merge order, or a capture
// file of one block) is read once from its start to check its order,
// and one that is out of order is then read in time order through an
// index of its lines (24 bytes a line, sorted once; the text is read
// again from the file).
// fn returning false stops the stream.
//
// A prompt is sent at its first copy met, the newest. With Provenance,
// when an older copy met later is richer (see the package comment: a
// project, a session) and at most RicherWindow older than the newest one,
// fn is called again for it with Entry.Richer set and Entry.N naming the
// prompt: its provenance replaces the one sent. Once no richer copy can
// come (the stream has passed the window, the copy sent was as rich as a
// copy gets, more than maxPending prompts wait, or the files are done),
// the prompt is settled: an Entry sent with Final set is settled at once,
// else fn is called with Entry.Settled set and Entry.N naming it. Read,
// which reads everything before it sorts, gives each prompt its richest
// copy of all; the two differ only for copies more than the window apart.
//
// Each file is read up to the size it had when it was opened: lines
// appended later are not read, and a last line with no newline yet (a
// writer still finishing it) is skipped and counted as malformed, as Read
// does.
func StreamWith(files []store.File, hidden *tombstone.Set, opt StreamOptions, fn func(Entry) bool) *StreamResult {
	s := &streamer{
		res:   &StreamResult{},
		files: files,
		seen:  opt.Seen,
		provs: make(map[prov]prov),
		opt:   opt,
		fn:    fn,
		block: min(maxBlock, max(minBlock, blockBudget/max(1, len(files)))),
	}
	if s.seen == nil {
		s.seen = NewSeen()
	}
	if opt.Provenance {
		s.pending = make(map[key]pend)
	}
	if hidden != nil && !hidden.Empty() {
		s.hidden = hidden
	}
	h := s.heads()
	var size int64
	for _, r := range h {
		size += r.size
	}
	s.seen.reserve(int(min(size/bytesPerRecord, 1<<19))) // a guess: at most a 16 MB table
	heap.Init(&h)
	for len(h) > 0 {
		r := h[0]
		if !s.settle(r.view.TS) || !s.emit(r) {
			s.res.Stopped = true
			break
		}
		if s.advance(r) {
			heap.Fix(&h, 0)
		} else {
			heap.Pop(&h)
		}
	}
	if !s.res.Stopped && !s.settle(math.MinInt64) {
		s.res.Stopped = true
	}
	for _, r := range h {
		r.close()
	}
	return s.res
}

// pend is a prompt sent whose provenance may still change: its place
// among the prompts sent and the richness of what was sent.
type pend struct {
	n    int
	rank int8
}

// Seen is the set of prompts a stream met: a 128-bit hash of each
// identity, in an open-addressing table at most 7/8 full (16 to 37
// bytes a prompt, whatever its length).
type Seen struct {
	slots        []key // {0, 0}: empty
	n            int
	hint         int // the size to grow to first (reserve)
	seed1, seed2 maphash.Seed
}

// NewSeen returns an empty set.
func NewSeen() *Seen {
	return &Seen{slots: make([]key, 1<<10), seed1: maphash.MakeSeed(), seed2: maphash.MakeSeed()}
}

// Len is the number of prompts in the set.
func (s *Seen) Len() int { return s.n }

func (s *Seen) key(norm []byte) key {
	k := key{maphash.Bytes(s.seed1, norm), maphash.Bytes(s.seed2, norm)}
	if k == (key{}) {
		k[1] = 1
	}
	return k
}

// Sum returns the Entry.Sum of a prompt of text in streams over s. The
// function holds s's seeds only, not its table.
func (s *Seen) Sum() func(text string) uint64 {
	seed := s.seed1
	return func(text string) uint64 { return maphash.Bytes(seed, identity.AppendNormalized(nil, text)) }
}

// add adds k and reports whether it was new.
func (s *Seen) add(k key) bool {
	mask := uint64(len(s.slots) - 1)
	for pos := k[0] & mask; ; pos = (pos + 1) & mask {
		switch s.slots[pos] {
		case k:
			return false
		case key{}:
			s.slots[pos] = k
			s.n++
			if 8*s.n > 7*len(s.slots) {
				s.grow()
			}
			return true
		}
	}
}

// reserve makes room for n more prompts, at the table's first growth: a
// table grown step by step leaves its smaller copies behind as garbage,
// and one made large at once costs a page fault for each of the first
// prompts (hist-list | head reads a few hundred).
func (s *Seen) reserve(n int) {
	size := len(s.slots)
	for 8*(s.n+n) > 7*size {
		size *= 2
	}
	s.hint = size
}

func (s *Seen) grow() {
	size := 2 * len(s.slots)
	if s.hint > size {
		size = s.hint
	}
	s.hint = 0
	s.resize(size)
}

func (s *Seen) resize(size int) {
	old := s.slots
	s.slots = make([]key, size)
	mask := uint64(len(s.slots) - 1)
	for _, k := range old {
		if k == (key{}) {
			continue
		}
		pos := k[0] & mask
		for s.slots[pos] != (key{}) {
			pos = (pos + 1) & mask
		}
		s.slots[pos] = k
	}
}

type streamer struct {
	res     *StreamResult
	files   []store.File
	hidden  *tombstone.Set
	seen    *Seen
	pending map[key]pend // Provenance: prompts that may still get a richer copy
	fifo    []pendKey    // pending's keys, in the order sent
	norm    []byte
	arena   []byte
	provs   map[prov]prov
	opt     StreamOptions
	fn      func(Entry) bool
	block   int // the largest block read from a file at once
}

type pendKey struct {
	k  key
	n  int
	ts int64
}

// settle settles the pending prompts that no copy at front or older can
// make richer (all of them at math.MinInt64), and the oldest while too
// many wait.
func (s *streamer) settle(front int64) bool {
	for len(s.fifo) > 0 {
		p := s.fifo[0]
		if len(s.fifo) <= maxPending && front != math.MinInt64 && p.ts-RicherWindow <= front {
			break
		}
		s.fifo = s.fifo[1:]
		if len(s.fifo) == 0 {
			s.fifo = s.fifo[:0:0] // let the backing array go
		}
		if o, ok := s.pending[p.k]; !ok || o.n != p.n {
			continue // settled already
		}
		delete(s.pending, p.k)
		if !s.fn(Entry{N: p.n, Settled: true}) {
			return false
		}
	}
	return true
}

// heads opens every file and reads its last record, a few files at a
// time (most of the time to the first prompt goes here).
func (s *streamer) heads() revHeap {
	type head struct {
		r   *rev
		ok  bool
		err error
		st  record.Stats
		un  int
	}
	out := make([]head, len(s.files))
	var wg sync.WaitGroup
	next := make(chan int)
	for range min(len(s.files), 8) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				f := s.files[i]
				r, err := openRev(f.Path, int32(i), s.block, inOrder(f))
				if err != nil {
					out[i].err = err
					continue
				}
				// A streamer of its own for the counts.
				sub := &streamer{res: &StreamResult{}, files: s.files}
				sub.res.Stats, sub.res.Unordered = r.scanned, r.unordered
				out[i] = head{r: r, ok: sub.advance(r), st: sub.res.Stats, un: sub.res.Unordered}
				if len(sub.res.Failed) > 0 {
					out[i].err = sub.res.Failed[0].Err
				}
			}
		}()
	}
	for i := range s.files {
		next <- i
	}
	close(next)
	wg.Wait()
	var h revHeap
	for i, o := range out {
		s.res.Stats.Add(o.st)
		s.res.Unordered += o.un
		if o.err != nil {
			s.res.Failed = append(s.res.Failed, FileError{Path: s.files[i].Path, Err: o.err})
			continue
		}
		if o.ok {
			h = append(h, o.r)
		}
	}
	return h
}

// advance moves r to its previous record (in time order for a sorted
// file); false when r is done (it is then closed, and a read error
// recorded).
func (s *streamer) advance(r *rev) bool {
	r.dropScratch()
	if r.order != nil {
		return s.advanceSorted(r)
	}
	for {
		line, ok, err := r.prev()
		s.res.Stats.Malformed += r.skipped
		r.skipped = 0
		if err != nil {
			s.res.Failed = append(s.res.Failed, FileError{Path: s.files[r.idx].Path, Err: err})
			r.close()
			return false
		}
		if !ok {
			s.res.Stats.Malformed += r.torn
			s.res.Stats.Bytes += r.size
			r.close()
			return false
		}
		s.res.Stats.Lines++
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		if record.ParseView(line, &r.view) != nil {
			s.res.Stats.Malformed++
			continue
		}
		r.off, r.n = r.pos+int64(cap(r.buf)-cap(line)), len(line) // line is a slice of buf
		s.res.Stats.Records++
		if r.started && r.view.TS > r.lastTS {
			s.res.Unordered++
		}
		r.started, r.lastTS = true, r.view.TS
		return true
	}
}

// advanceSorted moves r to the next record of its index (its counts were
// taken when it was indexed).
func (s *streamer) advanceSorted(r *rev) bool {
	for r.next > 0 {
		r.next--
		line, err := r.line(r.order[r.next])
		if err != nil {
			s.res.Failed = append(s.res.Failed, FileError{Path: s.files[r.idx].Path, Err: err})
			r.close()
			return false
		}
		if record.ParseView(line, &r.view) == nil {
			r.off, r.n = r.order[r.next].off, len(line)
			return true
		}
	}
	r.close()
	return false
}

// emit sends r's current record unless its prompt was sent or is hidden;
// a record of a sent prompt richer than what was sent is sent as Richer.
func (s *streamer) emit(r *rev) bool {
	v := &r.view
	s.norm = identity.AppendNormalized(s.norm[:0], unsafe.String(unsafe.SliceData(v.Text), len(v.Text)))
	k := s.seen.key(s.norm)
	f := s.files[r.idx]
	if !s.seen.add(k) {
		if s.pending == nil {
			return true
		}
		o, ok := s.pending[k]
		if !ok {
			return true
		}
		rk := rank(v.Src, v.Session, f.Project)
		if rk <= o.rank {
			return true
		}
		p := s.prov(v.Src, v.Session)
		if !s.fn(Entry{Src: p.src, Session: p.session, File: f.Path, Project: f.Project, N: o.n, Richer: true}) {
			return false
		}
		if rk == maxRank {
			delete(s.pending, k)
			return s.fn(Entry{N: o.n, Settled: true})
		}
		o.rank = rk
		s.pending[k] = o
		return true
	}
	if s.hidden != nil && s.hidden.HiddenNormalized(s.norm) {
		s.res.Hidden++
		return true
	}
	n := s.res.Sent
	s.res.Sent++
	p := s.prov(v.Src, v.Session)
	e := Entry{TS: v.TS, Src: p.src, Session: p.session, File: f.Path, Project: f.Project, N: n, Off: r.off, Len: r.n, Sum: k[0]}
	if s.opt.View {
		e.Text = unsafe.String(unsafe.SliceData(v.Text), len(v.Text))
	} else {
		e.Text = s.store(v.Text)
	}
	if s.pending != nil {
		if rk := rank(v.Src, v.Session, f.Project); rk < maxRank {
			s.pending[k] = pend{n: n, rank: rk}
			s.fifo = append(s.fifo, pendKey{k, n, v.TS})
		} else {
			e.Final = true
		}
	}
	return s.fn(e)
}

func (s *streamer) prov(src, session []byte) prov {
	if len(src) == 0 && len(session) == 0 {
		return prov{}
	}
	if p, ok := s.provs[prov{string(src), string(session)}]; ok {
		return p
	}
	p := prov{string(src), string(session)}
	s.provs[p] = p
	return p
}

// store copies b into the arena (see reader.store).
func (s *streamer) store(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	if len(b) > chunk/4 {
		return string(b)
	}
	if cap(s.arena)-len(s.arena) < len(b) {
		s.arena = make([]byte, 0, chunk)
	}
	start := len(s.arena)
	s.arena = append(s.arena, b...)
	out := s.arena[start:len(s.arena):len(s.arena)]
	return unsafe.String(&out[0], len(out))
}

// rev reads a file's lines backwards, from its end. Its file is open only
// while a block is read: a stream over hundreds of files would otherwise
// hold hundreds of descriptors, and a process that crosses 64 or 256 open
// files while it has several threads waits for the kernel to grow its
// file table (an RCU grace period: 10-20 ms here, before the first prompt).
type rev struct {
	f        *rawFile // open while a block is read, else nil
	name     string
	dev, ino uint64 // the file opened first: a reopen must find it again
	idx      int32
	size     int64   // the file's size when opened: nothing past it is read
	pos      int64   // file offset of buf[0]
	buf      []byte  // file bytes [pos, pos+len(buf)); lines end at or before end
	end      int     // buf[:end] holds what is still to be returned
	nls      []int32 // the places of the newlines in buf[:end], in order
	block    int     // next read size
	limit    int     // the largest block
	done     bool
	torn     int // 1 when the file ends in a line with no newline
	view     record.View
	off      int64 // where view's line starts in the file
	n        int   // its length
	started  bool
	lastTS   int64
	skipping bool // dropping an over-long line
	skipped  int  // over-long lines dropped (counted as malformed)

	// A file out of time order: its lines, sorted by time (of equal ts,
	// in file order), sent from order[next-1] down; buf holds file bytes
	// [pos, pos+len(buf)).
	order     []lineRef
	next      int
	scanned   record.Stats // what indexing it counted
	unordered int          // its lines newer than the line after them
}

// dropScratch lets go of the buffer r's view decoded a long escaped text
// into: hundreds of files would otherwise each keep one as large as their
// longest prompt.
func (r *rev) dropScratch() {
	t := r.view.Text
	if cap(t) <= 4<<10 {
		return
	}
	b := r.buf[:cap(r.buf)]
	if len(b) > 0 {
		start := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
		if p := uintptr(unsafe.Pointer(unsafe.SliceData(t))); p >= start && p < start+uintptr(len(b)) {
			return // a view into the block
		}
	}
	r.view = record.View{}
}

// lineRef is where a record is in its file.
type lineRef struct {
	ts  int64
	off int64
	n   int
}

const (
	// firstBlock is the first read of each file: its last prompt or two
	// are all that a first screen needs (hist-list --all | head -20 on
	// 500 files of 1M prompts: 41 ms against 45 ms with 4 KiB, its CPU
	// 55 ms against 70 ms).
	firstBlock = 1 << 10
	minBlock   = 8 << 10
	maxBlock   = 256 << 10
	// blockBudget is what the blocks of all files may hold together
	// (twice that with what is left of a block, a line cut in two), as
	// long as each may hold minBlock.
	blockBudget = 4 << 20
	// maxLine is the longest line Stream keeps; a longer one is skipped
	// and counted as malformed.
	maxLine = 64 << 20
)

// openRev opens the file at path to be read from its end, in blocks of
// at most limit bytes. Unless trusted says its lines are in time order,
// or it is larger than a block, it is read once from its start to
// check, and indexed when they are not.
func openRev(path string, idx int32, limit int, trusted bool) (*rev, error) {
	// Raw system calls: a store file is read with open, fstat and pread
	// only (an os.File would also register with the poller), which is most
	// of the cost of reaching the first prompt across hundreds of files.
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		syscall.Close(fd)
		return nil, &fs.PathError{Op: "stat", Path: path, Err: err}
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFREG {
		syscall.Close(fd)
		return nil, &fs.PathError{Op: "read", Path: path, Err: errors.New("not a regular file")}
	}
	f := &rawFile{fd: fd, path: path}
	size := st.Size
	r := &rev{f: f, name: path, idx: idx, size: size, pos: size, block: min(firstBlock, limit), limit: limit, dev: uint64(st.Dev), ino: uint64(st.Ino)}
	defer r.closeFile() // fill reopens it when it needs more
	if r.size == 0 {
		r.done = true
		return r, nil
	}
	if !trusted || r.size <= int64(limit) {
		if err := r.index(); err != nil {
			return nil, err
		}
		if r.order != nil {
			return r, nil
		}
	}
	// Drop a torn last line: read until the last newline.
	if err := r.fill(); err != nil {
		return nil, err
	}
	for {
		if i := r.lastNewline(); i >= 0 {
			if i+1 < r.end {
				r.torn = 1
			}
			r.end = i // the last complete line ends here (its newline at buf[i])
			r.buf = r.buf[:i+1]
			return r, nil
		}
		if r.pos == 0 {
			r.torn = 1 // one line, no newline: all torn
			r.done = true
			return r, nil
		}
		if err := r.fill(); err != nil {
			return nil, err
		}
	}
}

// index reads r's file from its start and, when its lines are out of time
// order, keeps their places sorted by time in r.order.
func (r *rev) index() error {
	var order []lineRef
	sorted := true
	st, err := record.Scan(io.NewSectionReader(r.f, 0, r.size), func(l *record.Line) error {
		if n := len(order); n > 0 && order[n-1].ts > l.TS {
			sorted = false
			r.unordered++
		}
		order = append(order, lineRef{ts: l.TS, off: l.Offset, n: len(l.Raw)})
		return nil
	})
	if err != nil {
		return err
	}
	if sorted {
		r.unordered = 0
		return nil
	}
	slices.SortStableFunc(order, func(a, b lineRef) int { return cmp.Compare(a.ts, b.ts) })
	r.order, r.next, r.scanned = order, len(order), st
	r.buf, r.pos = nil, 0
	return nil
}

// line returns the bytes of the record at ref, valid until the next call.
// The block read ends at the record's end: in a file a little out of
// order, the records that follow in time order are mostly the ones just
// before it.
func (r *rev) line(ref lineRef) ([]byte, error) {
	if ref.off >= r.pos && ref.off+int64(ref.n) <= r.pos+int64(len(r.buf)) {
		return r.buf[ref.off-r.pos : ref.off-r.pos+int64(ref.n)], nil
	}
	end := ref.off + int64(ref.n)
	start := min(ref.off, max(0, end-int64(r.limit)))
	if err := r.reopen(r.size); err != nil {
		return nil, err
	}
	n := int(end - start)
	if cap(r.buf) < n {
		r.buf = make([]byte, n)
	}
	r.buf = r.buf[:n]
	_, err := r.f.ReadAt(r.buf, start)
	r.closeFile()
	if err != nil {
		r.buf = r.buf[:0]
		if err == io.EOF {
			err = &fs.PathError{Op: "read", Path: r.name, Err: errReplaced}
		}
		return nil, err
	}
	r.pos = start
	return r.buf[ref.off-start:], nil
}

// fill reads the block before buf, keeping buf[:end] after it. The buffer
// is reused: it grows only for a long line.
func (r *rev) fill() error {
	n := int64(max(r.block, r.end)) // a long line doubles the buffer: linear, not quadratic
	if n > r.pos {
		n = r.pos
	}
	if r.block < r.limit {
		r.block = min(4*r.block, r.limit)
	}
	if r.f == nil {
		if err := r.reopen(r.pos); err != nil {
			return err
		}
	}
	need := int(n) + r.end
	nb := r.buf
	if cap(nb) < need || cap(nb) > 4*r.limit && need <= 2*r.limit {
		nb = make([]byte, need) // grown for a long line, or back once it is read
	}
	nb = nb[:need]
	copy(nb[n:], r.buf[:r.end]) // before the read, which may overwrite it
	_, err := r.f.ReadAt(nb[:n], r.pos-n)
	r.closeFile()
	if err != nil && err != io.EOF {
		return err
	}
	r.pos -= n
	r.buf = nb
	r.end = len(nb)
	// What was kept after the block holds no newline (fill runs when
	// buf[:end] has none): only the block is searched, forwards, which
	// bytes.IndexByte does many bytes at a time (bytes.LastIndexByte goes
	// byte by byte: it was 12% of hist-list --all's time on 1M prompts).
	r.nls = r.nls[:0]
	for i := 0; i < int(n); {
		j := bytes.IndexByte(nb[i:n], '\n')
		if j < 0 {
			break
		}
		r.nls = append(r.nls, int32(i+j))
		i += j + 1
	}
	return nil
}

// lastNewline pops the place of the last newline in buf[:end], -1 when
// there is none.
func (r *rev) lastNewline() int {
	k := len(r.nls)
	if k == 0 {
		return -1
	}
	r.nls = r.nls[:k-1]
	return int(r.nls[:k][k-1])
}

// prev returns the line before the last one returned (without its
// newline), ok=false at the start of the file. The bytes stay valid until
// the next call.
func (r *rev) prev() (line []byte, ok bool, err error) {
	for !r.done {
		// buf[r.end] is the newline that ends the line to return (or
		// r.end == len(buf) after a fill, with that newline kept).
		if i := r.lastNewline(); i >= 0 {
			line = r.buf[i+1 : r.end]
			r.end = i
			if r.skipping { // the start of an over-long line
				r.skipping = false
				r.skipped++
				continue
			}
			return line, true, nil
		}
		if r.pos == 0 {
			line = r.buf[:r.end]
			r.done = true
			if r.skipping {
				r.skipping = false
				r.skipped++
				return nil, false, nil
			}
			return line, true, nil
		}
		if r.end > maxLine {
			// No record is this long (a zero-filled region left by a
			// crash, say): drop it and look for the line before it,
			// without holding it in memory.
			r.skipping = true
			r.end = 0
			r.nls = r.nls[:0]
		}
		if err := r.fill(); err != nil {
			r.done = true
			return nil, false, err
		}
	}
	return nil, false, nil
}

// rawFile is an open store file.
type rawFile struct {
	fd   int
	path string
}

func (f *rawFile) ReadAt(b []byte, off int64) (int, error) {
	n := 0
	for n < len(b) {
		m, err := syscall.Pread(f.fd, b[n:], off+int64(n))
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return n, &fs.PathError{Op: "read", Path: f.path, Err: err}
		}
		if m == 0 {
			return n, io.EOF
		}
		n += m
	}
	return n, nil
}

func (f *rawFile) Close() error { return syscall.Close(f.fd) }

// errReplaced is a file that was replaced (a rewrite renamed another file
// over it) or truncated while it was streamed: what is left of it is not
// read, and the caller reads the store again (it wraps fs.ErrNotExist, as a
// file that vanished does).
var errReplaced = fmt.Errorf("%w: replaced while it was read", fs.ErrNotExist)

// reopen opens r's file again for the next block, if it is still the same
// file with at least the first size bytes it had.
func (r *rev) reopen(size int64) error {
	path := r.name
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		return &fs.PathError{Op: "open", Path: path, Err: err}
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		syscall.Close(fd)
		return &fs.PathError{Op: "stat", Path: path, Err: err}
	}
	if uint64(st.Dev) != r.dev || uint64(st.Ino) != r.ino || st.Size < size {
		syscall.Close(fd)
		return &fs.PathError{Op: "read", Path: path, Err: errReplaced}
	}
	r.f = &rawFile{fd: fd, path: path}
	return nil
}

func (r *rev) closeFile() {
	if r.f != nil {
		r.f.Close()
		r.f = nil
	}
}

func (r *rev) close() {
	if r.f != nil {
		r.f.Close()
		r.f = nil
	}
}

type revHeap []*rev

func (h revHeap) Len() int { return len(h) }
func (h revHeap) Less(i, j int) bool {
	if h[i].view.TS != h[j].view.TS {
		return h[i].view.TS > h[j].view.TS
	}
	return h[i].idx > h[j].idx
}
func (h revHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *revHeap) Push(x any)   { *h = append(*h, x.(*rev)) }
func (h *revHeap) Pop() any {
	old := *h
	r := old[len(old)-1]
	*h = old[:len(old)-1]
	return r
}
