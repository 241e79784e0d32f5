package seed

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"sync/atomic"
	"syscall"

	"hist/lib/atomicfile"
	"hist/lib/identity"
	"hist/lib/ledger"
	"hist/lib/record"
	"hist/lib/redact"
	"hist/lib/store"
	"hist/lib/tombstone"
	"hist/lib/transcript"
)

// eventKey identifies a prompt event within one seed file: its time and
// a 128-bit hash of its identity (normalized text), two 64-bit maphash
// sums with independent random seeds, so that two distinct prompts share a
// key with a negligible chance (and no input can aim at one).
type eventKey [24]byte

var keySeeds = [2]maphash.Seed{maphash.MakeSeed(), maphash.MakeSeed()}

func makeKey(ts int64, norm []byte) eventKey {
	var k eventKey
	binary.LittleEndian.PutUint64(k[:8], uint64(ts))
	binary.LittleEndian.PutUint64(k[8:16], maphash.Bytes(keySeeds[0], norm))
	binary.LittleEndian.PutUint64(k[16:], maphash.Bytes(keySeeds[1], norm))
	return k
}

// spillAt is how many bytes of records (of the chunks holding them) may
// wait in memory: past it, every bucket's records are appended to the
// bucket's temp file (the seed file to be), so memory stays bounded
// whatever the transcripts hold (and as much again in chunks kept for
// reuse). Writing a spill on a goroutine of its own while the scan went
// on gave 9% on pi's 1 GB import (3.68 s against 4.03 s): not enough for
// the code, so a spill is written in line.
var spillAt int64 = 16 << 20

// chunkSize is the size of the pieces a bucket's records are held in.
// They are taken from a free list and given back once written, so no
// buffer grows by copying.
const chunkSize = 32 << 10

// maxPrepare bounds the goroutines that prepare prompts.
const maxPrepare = 4

// maxOpen bounds the temp files kept open between spills (a quarter of
// the process's file limit, at most 1024); the others are reopened
// (O_APPEND) at the next one.
var maxOpen = func() int {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return 64
	}
	return int(max(min(lim.Cur/4, 1024), 16))
}()

// bucket holds one project's records for one source: the ones spilled to
// its temp file, then data.
type bucket struct {
	hash string
	also []string // the project's other folders (store.ProjectOf)
	cwd  string
	// path is the file the records go to: the source's seed file, or,
	// when the project has one already, a new import file.
	path   string
	data   [][]byte // the records not written to the temp file yet, in chunks (all full but the last)
	mem    int64    // bytes in data
	n      int
	hidden int
	dupes  int
	known  int // prompts an earlier run imported (the ledger, or a seed's cutoff)
	recent int // prompts typed less than settle ago, left to a later run
	// The ledger keys: of the records, in their order (wkeys), and of the
	// other prompts that count as imported once this run is (okeys: the
	// hidden ones, repeats, and the ones a seed file's cutoff covers).
	wkeys, okeys []ledger.Key
	// The records' times span [minTS, maxTS].
	minTS, maxTS int64
	// cutoff: the prompts up to this time are the ones the project's seed
	// file of the source stands for (noCutoff: none).
	cutoff int64
	// The prompts kept so far, for the dedup (see seen): by time, the
	// offset of the record of the one prompt kept at that time, or -1
	// once two or more were, whose keys are then in keys.
	byTS map[int64]int64
	keys map[eventKey]struct{}
	pos  int64 // bytes of records appended so far (temp file and data)
	// eager: every prompt's key is in keys (no records to read back:
	// a dry run; or the keys come free with the tombstone check).
	eager bool

	tmp     string   // temp file in the project folder ("" until the first write)
	f       *os.File // open temp file, or nil
	madeDir []string // folders created for the temp file (deepest first)
	done    bool     // the temp file became the seed file (or was removed)
}

// collector gathers one source's prompts by project.
type collector struct {
	r       *Runner
	src     string
	hidden  *tombstone.Set
	buckets map[string]*bucket   // by hash
	canon   map[string]canonical // raw cwd -> its project
	noCwd   int
	recent  int   // prompts left to a later run (see settle)
	approx  int   // prompts kept whose time is not their own
	err     error // a failed spill: a store failure
	// eagerKeys: prompts are normalized as they are prepared (for the
	// tombstone check, or for a dry run, which keeps no records).
	eagerKeys atomic.Bool
	applied   int // prompts that reached the dedup
	late      int // of them, the ones whose key was made there

	workers int         // goroutines preparing batches (1: prepared inline)
	cur     *batch      // the batch being filled
	jobs    chan *batch // to the workers
	queue   []*batch    // handed to the workers, in order, not applied yet
	free    []*batch    // applied, to reuse
}

type canonical struct {
	cwd, hash string
	also      []string // the project's other folders (store.ProjectOf)
	ok        bool
}

func newCollector(r *Runner, src string, hidden *tombstone.Set) *collector {
	c := &collector{r: r, src: src, hidden: hidden, buckets: map[string]*bucket{}, canon: map[string]canonical{},
		workers: min(runtime.GOMAXPROCS(0), maxPrepare)}
	c.eagerKeys.Store(r.Opts.DryRun || !hidden.Empty())
	return c
}

func (c *collector) project(raw string) canonical {
	if p, ok := c.canon[raw]; ok {
		return p
	}
	var p canonical
	if raw != "" && filepath.IsAbs(raw) {
		if cw, err := store.Canonical(raw); err == nil {
			hash, also := store.ProjectOf(cw)
			p = canonical{cwd: cw, hash: hash, also: also, ok: true}
		}
	}
	c.canon[raw] = p
	return p
}

// add queues p. Prompts are prepared (redacted, normalized, hashed and
// encoded: most of a seed's work per prompt) in batches by other
// goroutines when there is more than one CPU, and applied to the buckets
// in the order they came, on the caller's goroutine; flush applies the
// rest. An error is a failed spill (a store failure).
func (c *collector) add(p transcript.Prompt) error {
	b := c.cur
	if b == nil {
		b = c.newBatch()
		c.cur = b
	}
	b.in = append(b.in, p)
	b.size += len(p.Text)
	if len(b.in) < batchPrompts && b.size < batchBytes {
		return nil
	}
	c.cur = nil
	if c.workers < 2 {
		c.prepare(b)
		return c.apply(b)
	}
	if c.jobs == nil {
		jobs := make(chan *batch)
		c.jobs = jobs
		for range c.workers {
			go func() {
				for b := range jobs {
					c.prepare(b)
					close(b.done)
				}
			}()
		}
	}
	c.jobs <- b
	c.queue = append(c.queue, b)
	// Apply what is ready, and wait for the oldest batch when enough are
	// in flight (which bounds the memory they hold).
	for len(c.queue) > 0 {
		select {
		case <-c.queue[0].done:
		default:
			if len(c.queue) <= c.workers {
				return nil
			}
			<-c.queue[0].done
		}
		front := c.queue[0]
		c.queue = c.queue[1:]
		err := c.apply(front)
		c.free = append(c.free, front)
		if err != nil {
			return err
		}
	}
	return nil
}

// flush applies every prompt added and stops the workers; the collector
// takes no more prompts afterwards.
func (c *collector) flush() error {
	var err error
	if b := c.cur; b != nil {
		c.cur = nil
		c.prepare(b)
		c.queue = append(c.queue, b)
		close(b.done)
	}
	for _, b := range c.queue {
		<-b.done
		if err == nil {
			err = c.apply(b)
		}
	}
	c.queue = nil
	if c.jobs != nil {
		close(c.jobs)
		c.jobs = nil
	}
	return err
}

// A batch holds up to batchPrompts prompts, or batchBytes of their text.
const (
	batchPrompts = 256
	batchBytes   = 256 << 10
)

// batch is a run of prompts and, once prepared, what apply needs of each.
type batch struct {
	in   []transcript.Prompt
	size int
	out  []prepared
	recs []byte // the encoded records, one after the other
	norm []byte // scratch
	done chan struct{}
}

type prepared struct {
	skip   bool // not capturable once redacted
	hidden bool
	lkey   ledger.Key
	hasKey bool // key is set (the tombstone check normalized the text)
	key    eventKey
	end    int // the record's end in recs (its start is the previous one's end)
}

// newBatch returns an empty batch, reusing one already applied.
func (c *collector) newBatch() *batch {
	if n := len(c.free); n > 0 {
		b := c.free[n-1]
		c.free = c.free[:n-1]
		clear(b.in) // drop the texts
		*b = batch{in: b.in[:0], out: b.out[:0], recs: b.recs[:0], norm: b.norm[:0], done: make(chan struct{})}
		return b
	}
	return &batch{in: make([]transcript.Prompt, 0, batchPrompts), done: make(chan struct{})}
}

// prepare redacts, normalizes, hashes and encodes b's prompts. It reads
// only what does not change during a scan, so batches are prepared at
// the same time.
func (c *collector) prepare(b *batch) {
	b.out = slices.Grow(b.out[:0], len(b.in))[:len(b.in)]
	clear(b.out)
	// Room for every record: the text, escapes aside, and the fields.
	b.recs = slices.Grow(b.recs[:0], b.size+b.size/16+160*len(b.in))
	norm := b.norm[:0]
	defer func() { b.norm = norm }()
	for i := range b.in {
		p := &b.in[i]
		raw := p.Text
		b.out[i].lkey = ledger.KeyOf(c.src, p.Key, p.Session, p.TS, raw)
		if !c.r.Opts.NoRedact {
			p.Text = redact.Text(p.Text)
		}
		out := &b.out[i]
		out.end = len(b.recs)
		if !identity.Capturable(p.Text) {
			out.skip = true
			continue
		}
		// Without tombstones (nor a dry run, which keeps no records to
		// read back) the dedup key is made only for a prompt that shares
		// its time with another: see seen.
		if c.eagerKeys.Load() {
			norm = identity.AppendNormalized(norm[:0], p.Text)
			// A prompt deleted as it was typed (its tombstone names the
			// text with the secret) stays hidden once redacted.
			if c.hidden.HiddenNormalized(norm) || (raw != p.Text && c.hidden.Hidden(raw)) {
				out.hidden = true
				continue
			}
			out.key, out.hasKey = makeKey(p.TS, norm), true
		}
		if !c.r.Opts.DryRun {
			b.recs = record.Append(b.recs, record.Record{Text: p.Text, TS: p.TS, Src: p.Src, Session: p.Session})
			out.end = len(b.recs)
		}
	}
}

// apply files b's prepared prompts in their buckets, in order.
func (c *collector) apply(b *batch) error {
	o := &c.r.Opts
	start := 0
	for i := range b.in {
		p, pp := &b.in[i], &b.out[i]
		rec := b.recs[start:pp.end]
		start = pp.end
		if pp.skip {
			continue
		}
		pr := c.project(p.Cwd)
		if !pr.ok {
			c.noCwd++
			continue
		}
		if o.Project != "" && pr.cwd != o.Project {
			continue
		}
		bk := c.buckets[pr.hash]
		if bk == nil {
			var err error
			if bk, err = c.newBucket(pr); err != nil {
				return err
			}
			c.buckets[pr.hash] = bk
		}
		known, err := c.r.imported(pp.lkey)
		if err != nil {
			return err
		}
		if known {
			bk.known++
			continue
		}
		if bk.cutoff != noCutoff && p.TS <= bk.cutoff {
			bk.known++
			bk.okeys = append(bk.okeys, pp.lkey)
			continue
		}
		if p.TS > c.r.settled {
			// Typed a moment ago: its live capture may be on its way.
			bk.recent++
			c.recent++
			continue
		}
		if pp.hidden {
			bk.hidden++
			bk.okeys = append(bk.okeys, pp.lkey)
			continue
		}
		c.applied++
		dup, err := c.seen(bk, p, pp)
		if err != nil {
			return err
		}
		if dup {
			bk.dupes++
			bk.okeys = append(bk.okeys, pp.lkey)
			continue
		}
		bk.n++
		if p.Approx {
			c.approx++
		}
		if o.DryRun {
			continue // counted, never written
		}
		if bk.n == 1 || p.TS < bk.minTS {
			bk.minTS = p.TS
		}
		if bk.n == 1 || p.TS > bk.maxTS {
			bk.maxTS = p.TS
		}
		bk.wkeys = append(bk.wkeys, pp.lkey)
		c.r.hold(bk, rec)
		if c.r.held > spillAt {
			if err := c.r.spill(); err != nil {
				return err
			}
		}
	}
	return nil
}

// seen reports whether b already has a prompt at p's time with p's
// identity (a repeat of the same prompt event), and records p as kept
// when it has not. Most prompts have a time of their own, so the key of
// a prompt (which normalizes and hashes its text) is made only when a
// second prompt comes at the same time: then for both, the first one's
// text read back from its record (keys made on every CPU beforehand,
// when the tombstone check needs them anyway, go straight to keys).
func (c *collector) seen(b *bucket, p *transcript.Prompt, pp *prepared) (bool, error) {
	if !b.eager {
		off, ok := b.byTS[p.TS]
		switch {
		case !ok && !pp.hasKey:
			b.byTS[p.TS] = b.pos // where p's record goes
			return false, nil
		case ok && off >= 0:
			first, err := c.r.recordAt(b, off)
			if err != nil {
				return false, err
			}
			b.keys[makeKey(p.TS, identity.AppendNormalized(nil, first.Text))] = struct{}{}
		}
		b.byTS[p.TS] = -1
	}
	if !pp.hasKey {
		pp.key, pp.hasKey = makeKey(p.TS, identity.AppendNormalized(nil, p.Text)), true
		// When prompts often share their time, make the keys on every
		// CPU from now on.
		if c.late++; c.late > 64 && c.late*16 > c.applied {
			c.eagerKeys.Store(true)
		}
	}
	if _, dup := b.keys[pp.key]; dup {
		return true, nil
	}
	b.keys[pp.key] = struct{}{}
	return false, nil
}

// recordAt reads back the record that starts at off in b's records: in
// memory, or in its temp file (a spill writes whole records).
func (r *Runner) recordAt(b *bucket, off int64) (record.Record, error) {
	inMem := b.pos - b.mem
	var line []byte
	if off >= inMem {
		line = b.heldLine(off - inMem)
	} else {
		f, err := os.Open(b.tmp)
		if err != nil {
			return record.Record{}, fmt.Errorf("reading %s back: %w", b.tmp, err)
		}
		defer f.Close()
		line, err = bufio.NewReader(io.NewSectionReader(f, off, inMem-off)).ReadBytes('\n')
		if err != nil {
			return record.Record{}, fmt.Errorf("reading %s back: %w", b.tmp, err)
		}
	}
	if len(line) == 0 {
		return record.Record{}, fmt.Errorf("reading %s back: no record at byte %d", b.path, off)
	}
	rec, err := record.Parse(line[:len(line)-1])
	if err != nil {
		return record.Record{}, fmt.Errorf("reading %s back: %w", b.tmp, err)
	}
	return rec, nil
}

// heldLine returns a copy of the record at off in b's records in memory,
// with its newline (a record may span chunks).
func (b *bucket) heldLine(off int64) []byte {
	var line []byte
	for _, c := range b.data {
		if off >= int64(len(c)) {
			off -= int64(len(c))
			continue
		}
		c = c[off:]
		off = 0
		if i := bytes.IndexByte(c, '\n'); i >= 0 {
			return append(line, c[:i+1]...)
		}
		line = append(line, c...)
	}
	return line
}

// hold appends a record to b's records in memory.
func (r *Runner) hold(b *bucket, rec []byte) {
	b.pos += int64(len(rec))
	b.mem += int64(len(rec))
	for len(rec) > 0 {
		n := len(b.data)
		if n == 0 || len(b.data[n-1]) == chunkSize {
			b.data = append(b.data, r.chunk())
			r.held += chunkSize
			n++
		}
		c := b.data[n-1]
		k := copy(c[len(c):chunkSize], rec)
		b.data[n-1] = c[:len(c)+k]
		rec = rec[k:]
	}
}

// chunk returns an empty chunk: a written one, or a new one.
func (r *Runner) chunk() []byte {
	r.chunkMu.Lock()
	defer r.chunkMu.Unlock()
	if n := len(r.free); n > 0 {
		c := r.free[n-1]
		r.free = r.free[:n-1]
		return c[:0]
	}
	return make([]byte, 0, chunkSize)
}

// release gives written chunks back for reuse (up to spillAt bytes of
// them are kept).
func (r *Runner) release(chunks [][]byte) {
	r.chunkMu.Lock()
	defer r.chunkMu.Unlock()
	for _, c := range chunks {
		if int64(len(r.free)+1)*chunkSize > spillAt {
			return
		}
		r.free = append(r.free, c)
	}
}

// drop forgets b's records in memory (its source is not written).
func (r *Runner) drop(b *bucket) {
	r.held -= int64(len(b.data)) * chunkSize
	r.release(b.data)
	b.data, b.mem = nil, 0
}

// spill appends every bucket's records in memory to the bucket's temp
// file. An error is a store failure.
func (r *Runner) spill() error {
	r.spills++
	open := 0
	for _, c := range r.collectors {
		for _, b := range c.buckets {
			if len(b.data) == 0 {
				continue
			}
			if err := r.appendTemp(b, open < maxOpen); err != nil {
				return err
			}
			if b.f != nil {
				open++
			}
		}
	}
	r.held = 0
	return nil
}

// appendTemp appends b's records in memory to its temp file (see
// writeChunks) and frees them.
func (r *Runner) appendTemp(b *bucket, keepOpen bool) error {
	err := r.writeChunks(b, b.data, keepOpen)
	b.data, b.mem = nil, 0
	return err
}

// writeChunks appends chunks to b's temp file, creating it (and the
// project folder) the first time, and gives them back for reuse;
// keepOpen says whether the file may stay open. The records are written
// through the page cache: writeSeed fsyncs the file before it links it
// into place.
func (r *Runner) writeChunks(b *bucket, chunks [][]byte, keepOpen bool) error {
	if b.tmp == "" {
		dir := filepath.Dir(b.path)
		made, err := mkdirs(dir)
		b.madeDir = made
		if err != nil {
			return fmt.Errorf("creating %s: %w", dir, err)
		}
		p, err := atomicfile.Create(b.path)
		if err != nil {
			return fmt.Errorf("writing %s: %w", b.path, err)
		}
		b.tmp, b.f = p.File.Name(), p.File
		if err := r.track(b.tmp); err != nil {
			b.f.Close()
			os.Remove(b.tmp)
			b.tmp, b.f = "", nil
			return err
		}
	} else if b.f == nil {
		f, err := os.OpenFile(b.tmp, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			return writeError(b.tmp, err)
		}
		b.f = f
	}
	for _, c := range chunks {
		if _, err := b.f.Write(c); err != nil {
			return writeError(b.tmp, err)
		}
	}
	r.release(chunks)
	if !keepOpen {
		err := b.f.Close()
		b.f = nil
		if err != nil {
			return writeError(b.tmp, err)
		}
	}
	return nil
}

// discard removes b's temp file unless it became the seed file, and
// returns the folders made for it (to remove when they end up empty).
func (r *Runner) discard(b *bucket) []string {
	if b.f != nil {
		b.f.Close()
		b.f = nil
	}
	if b.tmp != "" && !b.done {
		os.Remove(b.tmp)
		r.untrack(b.tmp)
		b.done = true
	}
	b.data = nil
	made := b.madeDir
	b.madeDir = nil
	return made
}

// removeEmpty removes the folders that are empty, deepest first.
func removeEmpty(dirs []string) {
	sort.Slice(dirs, func(i, j int) bool { return len(dirs[i]) > len(dirs[j]) })
	for _, d := range dirs {
		os.Remove(d) // fails, as it should, when the folder holds anything
	}
}

// mkdirs creates dir and its missing parents (0700) and returns the ones
// it created, deepest first.
func mkdirs(dir string) ([]string, error) {
	var missing []string
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(d); err == nil {
			break
		} else if !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		missing = append(missing, d)
		if filepath.Dir(d) == d {
			break
		}
	}
	if err := store.EnsureDir(dir); err != nil {
		return missing, err
	}
	return missing, nil
}

// writeError says that writing path failed: with the cause only when err
// is the *fs.PathError of that operation (which names the file again).
func writeError(path string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) && pe.Path == path {
		err = pe.Err
	}
	return fmt.Errorf("writing %s: %w", path, err)
}
