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
	"sync"
	"sync/atomic"
	"syscall"

	"hist/lib/atomicfile"
	"hist/lib/identity"
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

// spillAt is how many bytes of chunks the records waiting in memory may
// take: past it, every bucket's records are appended to the bucket's temp
// file (the seed file to be), so memory stays bounded whatever the
// transcripts hold. Each spill writes once to each file (a direct write
// costs much the same at 80 KB as at 160 KB), so a larger budget means
// fewer writes: 32 MB (twice that while a spill is in flight) is a third
// less time in the kernel than 16 MB for the same seeds.
var spillAt int64 = 32 << 20

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
// its temp file, then buf.
type bucket struct {
	hash   string
	cwd    string
	path   string // the seed file
	exists bool   // the seed file was there when the bucket was made
	// The records not handed to a spill yet: tail (what a spill left
	// after its last whole block, while data is empty), then data.
	tail   []byte
	data   chunked
	out    chunked // the records handed to the spill in flight
	outN   int     // of them, the bytes it writes (whole blocks)
	n      int
	hidden int
	dupes  int
	// The prompts kept so far, for the dedup (see seen): by time, the
	// offset of the record of the one prompt kept at that time, or -1
	// once two or more were, whose keys are then in keys.
	byTS map[int64]int64
	keys map[eventKey]struct{}
	pos  int64 // bytes of records appended so far (temp file, out, tail, data)
	// eager: every prompt's key is in keys (no records to read back:
	// a dry run, a seed that exists; or the keys come free with the
	// tombstone check).
	eager bool

	tmp     string   // temp file in the project folder ("" until the first spill)
	f       *os.File // open temp file, or nil
	direct  bool     // spills write the temp file with direct I/O
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
			p = canonical{cwd: cw, hash: store.Hash(cw), ok: true}
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
			bk = &bucket{hash: pr.hash, cwd: pr.cwd, byTS: map[int64]int64{}, keys: map[eventKey]struct{}{},
				path: filepath.Join(o.Store.ProjectDir(pr.hash), FileName(c.src))}
			// A seed that exists is never rewritten: its prompts are only
			// counted (the check under the lock has the last word).
			if _, err := os.Lstat(bk.path); err == nil {
				bk.exists = true
			}
			bk.eager = o.DryRun || bk.exists || !c.hidden.Empty()
			c.buckets[pr.hash] = bk
		}
		if pp.hidden {
			bk.hidden++
			continue
		}
		c.applied++
		dup, err := c.seen(bk, p, pp)
		if err != nil {
			return err
		}
		if dup {
			bk.dupes++
			continue
		}
		bk.n++
		if p.Approx {
			c.approx++
		}
		if o.DryRun || bk.exists {
			continue // counted, never written
		}
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
// memory, or in its temp file (once the spill in flight is done).
func (r *Runner) recordAt(b *bucket, off int64) (record.Record, error) {
	inMem := b.pos - int64(len(b.tail)+b.data.n)
	rest := io.MultiReader(bytes.NewReader(b.tail), b.data.reader(0))
	if off >= inMem {
		io.CopyN(io.Discard, rest, off-inMem)
	} else {
		if err := r.waitSpill(); err != nil {
			return record.Record{}, err
		}
		f, err := os.Open(b.tmp)
		if err != nil {
			return record.Record{}, fmt.Errorf("reading %s back: %w", b.tmp, err)
		}
		defer f.Close()
		rest = io.MultiReader(io.NewSectionReader(f, off, inMem-off), rest)
	}
	line, err := bufio.NewReader(rest).ReadBytes('\n')
	if err != nil {
		return record.Record{}, fmt.Errorf("reading %s back: %w", b.tmp, err)
	}
	rec, err := record.Parse(line[:len(line)-1])
	if err != nil {
		return record.Record{}, fmt.Errorf("reading %s back: %w", b.tmp, err)
	}
	return rec, nil
}

// hold appends a record to b's records in memory. The tail a spill left
// goes first into the chunk that takes it, so that the next spill writes
// whole blocks from the chunks as they are.
func (r *Runner) hold(b *bucket, rec []byte) {
	if len(b.tail) > 0 {
		r.held += int64(b.data.append(&r.pool, b.tail)) * chunkSize
		b.tail = b.tail[:0]
	}
	r.held += int64(b.data.append(&r.pool, rec)) * chunkSize
	b.pos += int64(len(rec))
}

// drop forgets b's records in memory (its source is not written).
func (r *Runner) drop(b *bucket) {
	r.held -= int64(len(b.data.cs)) * chunkSize
	b.data.release(&r.pool)
	b.tail = nil
}

// spill hands every bucket's records, as many whole blocks of them as
// there are, to goroutines that append them to the buckets' temp files,
// so that reading goes on meanwhile; the rest (less than a block) stays
// as the bucket's tail. It first waits for the previous spill, and
// returns its error (a store failure). Chunks written go back to the pool.
func (r *Runner) spill() error {
	if err := r.waitSpill(); err != nil {
		return err
	}
	var todo []*bucket
	for _, c := range r.collectors {
		for _, b := range c.buckets {
			if b.data.n == 0 {
				continue
			}
			whole := b.data.n &^ (dioAlign - 1)
			for _, p := range b.data.pieces(whole, b.data.n) {
				b.tail = append(b.tail, p...)
			}
			if whole == 0 {
				b.data.release(&r.pool)
				continue
			}
			b.out, b.outN = b.data, whole
			b.data = chunked{}
			todo = append(todo, b)
		}
	}
	r.held = 0
	if len(todo) == 0 {
		return nil
	}
	done := make(chan error, 1)
	r.spilling = done
	r.spills++
	go func() {
		// The buckets are shared among a few goroutines: a direct write
		// waits for the disk, and several in flight overlap those waits.
		errs := make([]error, spillWriters)
		lasts := make([]*bucket, spillWriters)
		var wg sync.WaitGroup
		for w := range min(spillWriters, len(todo)) {
			wg.Add(1)
			go func() {
				defer wg.Done()
				open := 0
				for i := w; i < len(todo); i += spillWriters {
					b := todo[i]
					err := r.appendTemp(b, b.out.pieces(0, b.outN), open < maxOpen/spillWriters, false)
					b.out.release(&r.pool)
					if err != nil {
						errs[w] = err
						return
					}
					if b.f != nil {
						open++
						lasts[w] = b
					}
				}
			}()
		}
		wg.Wait()
		// The first failure is the spill's (one line: hist-seed says it).
		for _, err := range errs {
			if err != nil {
				done <- err
				return
			}
		}
		// One fsync has the disk store what it holds in its cache,
		// the blocks this spill wrote directly included: the fsyncs at
		// the end then have the last spill's blocks to wait for, not all
		// of them. Its error is the spill's: reported once, a later fsync
		// of the file would not see it.
		for _, last := range slices.Backward(lasts) {
			if last != nil {
				if err := last.f.Sync(); err != nil {
					done <- writeError(last.tmp, err)
					return
				}
				break
			}
		}
		done <- nil
	}()
	return nil
}

// spillWriters is how many goroutines write a spill.
const spillWriters = 4

// waitSpill waits for the spill in flight, if any, and returns its error.
// The buckets' temp files are the caller's again afterwards.
func (r *Runner) waitSpill() error {
	if r.spilling == nil {
		return nil
	}
	err := <-r.spilling
	r.spilling = nil
	return err
}

// appendTemp appends pieces to b's temp file, creating it (and the project
// folder) the first time; keepOpen says whether the file may stay open.
//
// Spills write with direct I/O where the file system has it: whole blocks,
// straight from the chunks (spill keeps the rest for the next write). The
// seed files are written once and not read soon, and copying hundreds of
// megabytes into the page cache (then writing it back) costs more than
// reading the transcripts. The last write (final) sends its whole blocks
// directly too, and the rest through the page cache, so the file ends
// where its records do.
func (r *Runner) appendTemp(b *bucket, pieces [][]byte, keepOpen, final bool) error {
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
		b.direct = !final && !noDirect && setDirect(b.f, true) == nil
	} else if b.f == nil {
		f, err := os.OpenFile(b.tmp, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			return writeError(b.tmp, err)
		}
		b.f = f
		if b.direct && setDirect(f, true) != nil {
			b.direct = false
		}
	}
	var err error
	if b.direct {
		// Whole blocks directly; when this is the last write, the rest
		// through the page cache, which the fsync then writes back.
		pieces, err = r.writeDirect(b, pieces)
		if err == nil && final && b.direct {
			err = setDirect(b.f, false)
			b.direct = false
		}
	}
	if err == nil && !b.direct {
		_, err = writeAll(b.f, pieces)
		startWriteback(b.f)
	}
	if err != nil {
		return writeError(b.tmp, err)
	}
	if !keepOpen {
		err := b.f.Close()
		b.f = nil
		if err != nil {
			return writeError(b.tmp, err)
		}
	}
	return nil
}

// noDirect turns direct I/O off, and stageSkew misaligns the chunks
// (direct writes from them are then refused): for tests.
var (
	noDirect  = false
	stageSkew = 0
)

// dioAlign is the alignment of direct writes: of the memory, the file
// offset and the length (4096 covers every common block size).
const dioAlign = 4096

// writeDirect writes the whole blocks at the start of pieces with direct
// I/O, and returns the pieces of the rest (less than a block, but for a
// write the kernel refused). Every piece but the last must be whole blocks
// at a dioAlign boundary, as chunks are. Where a direct write is refused
// (EINVAL or EOPNOTSUPP: a block size or a file system it does not suit),
// the file goes back to the page cache: b.direct is false, and the caller
// writes the rest that way.
func (r *Runner) writeDirect(b *bucket, pieces [][]byte) ([][]byte, error) {
	total := 0
	for _, p := range pieces {
		total += len(p)
	}
	blocks, rest := split(pieces, total&^(dioAlign-1))
	for len(blocks) > 0 {
		m, err := writev(b.f, blocks[:min(len(blocks), maxIov)])
		m = max(m, 0)
		if m == 0 && err == nil {
			err = io.ErrShortWrite
		}
		r.directBytes.Add(int64(m))
		_, blocks = split(blocks, m) // a refused write may follow a short one
		if err != nil {
			if !errors.Is(err, syscall.EINVAL) && !errors.Is(err, syscall.EOPNOTSUPP) {
				return nil, err
			}
			if err := setDirect(b.f, false); err != nil {
				return nil, err
			}
			b.direct = false
			return append(blocks, rest...), nil
		}
	}
	return rest, nil
}

// maxIov bounds the pieces of one writev (IOV_MAX is 1024 on Linux).
const maxIov = 512

// split cuts pieces at byte n: the pieces before it and after it (new
// slices; the bytes are shared).
func split(pieces [][]byte, n int) (before, after [][]byte) {
	for i, p := range pieces {
		if n < len(p) {
			before = append([][]byte(nil), pieces[:i]...)
			if n > 0 {
				before = append(before, p[:n])
			}
			return before, append([][]byte{p[n:]}, pieces[i+1:]...)
		}
		n -= len(p)
	}
	return pieces, nil
}

// writeAll writes pieces, going on after short writes.
func writeAll(f *os.File, pieces [][]byte) (int, error) {
	n := 0
	for len(pieces) > 0 {
		m, err := writev(f, pieces[:min(len(pieces), maxIov)])
		m = max(m, 0)
		if m == 0 && err == nil {
			err = io.ErrShortWrite
		}
		n += m
		_, pieces = split(pieces, m)
		if err != nil {
			return n, err
		}
	}
	return n, nil
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
	b.data, b.out, b.tail = chunked{}, chunked{}, nil // the pool is released next
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
