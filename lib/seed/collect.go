package seed

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/maphash"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

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

// spillAt is how many bytes of encoded records may wait in memory: past
// it, every bucket's records are appended to the bucket's temp file (the
// seed file to be), so memory stays bounded whatever the transcripts
// hold.
var spillAt int64 = 16 << 20

// maxOpen bounds the temp files kept open between spills; the others are
// reopened (O_APPEND) at the next one.
const maxOpen = 64

// bucket holds one project's records for one source: the ones spilled to
// its temp file, then buf.
type bucket struct {
	hash   string
	cwd    string
	path   string // the seed file
	exists bool   // the seed file was there when the bucket was made
	buf    []byte
	n      int
	hidden int
	dupes  int
	seen   map[eventKey]struct{}

	tmp     string   // temp file in the project folder ("" until the first spill)
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
	norm    []byte
	noCwd   int
	approx  int   // prompts kept whose time is not their own
	err     error // a failed spill: a store failure
}

type canonical struct {
	cwd, hash string
	ok        bool
}

func newCollector(r *Runner, src string, hidden *tombstone.Set) *collector {
	return &collector{r: r, src: src, hidden: hidden, buckets: map[string]*bucket{}, canon: map[string]canonical{}}
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

func (c *collector) add(p transcript.Prompt) error {
	raw := p.Text
	if !c.r.Opts.NoRedact {
		p.Text = redact.Text(p.Text)
	}
	if !identity.Capturable(p.Text) {
		return nil
	}
	pr := c.project(p.Cwd)
	if !pr.ok {
		c.noCwd++
		return nil
	}
	o := &c.r.Opts
	if o.Project != "" && pr.cwd != o.Project {
		return nil
	}
	b := c.buckets[pr.hash]
	if b == nil {
		b = &bucket{hash: pr.hash, cwd: pr.cwd, seen: map[eventKey]struct{}{},
			path: filepath.Join(o.Store.ProjectDir(pr.hash), FileName(c.src))}
		// A seed that exists is never rewritten: its prompts are only
		// counted (the check under the lock has the last word).
		if _, err := os.Lstat(b.path); err == nil {
			b.exists = true
		}
		c.buckets[pr.hash] = b
	}
	c.norm = identity.AppendNormalized(c.norm[:0], p.Text)
	// A prompt deleted as it was typed (its tombstone names the text with
	// the secret) stays hidden once redacted.
	if c.hidden.HiddenNormalized(c.norm) || (raw != p.Text && c.hidden.Hidden(raw)) {
		b.hidden++
		return nil
	}
	k := makeKey(p.TS, c.norm)
	if _, dup := b.seen[k]; dup {
		b.dupes++
		return nil
	}
	b.seen[k] = struct{}{}
	b.n++
	if p.Approx {
		c.approx++
	}
	if o.DryRun || b.exists {
		return nil // counted, never written
	}
	before := len(b.buf)
	b.buf = record.Append(b.buf, record.Record{Text: p.Text, TS: p.TS, Src: p.Src, Session: p.Session})
	c.r.held += int64(len(b.buf) - before)
	if c.r.held > spillAt {
		return c.r.spill()
	}
	return nil
}

// spill appends every bucket's records to its temp file. A bucket keeps
// its buffer for the next round when the buffer is no larger than its
// share of four times the budget (at most 1 MB), so that busy projects do
// not grow a new one each round while the buffers kept stay within that
// bound.
func (r *Runner) spill() error {
	n := 0
	for _, c := range r.collectors {
		n += len(c.buckets)
	}
	keep := min(4*spillAt/int64(max(n, 1)), 1<<20)
	open := 0
	for _, c := range r.collectors {
		for _, b := range c.buckets {
			if len(b.buf) == 0 {
				continue
			}
			if err := r.appendTemp(b, open < maxOpen); err != nil {
				return err
			}
			if b.f != nil {
				open++
			}
			if int64(cap(b.buf)) > keep {
				b.buf = nil
			} else {
				b.buf = b.buf[:0]
			}
		}
	}
	r.held = 0
	return nil
}

// appendTemp appends b.buf to b's temp file, creating it (and the project
// folder) the first time; keepOpen says whether the file may stay open.
func (r *Runner) appendTemp(b *bucket, keepOpen bool) error {
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
			return fmt.Errorf("writing %s: %w", b.tmp, err)
		}
		b.f = f
	}
	if _, err := b.f.Write(b.buf); err != nil {
		return fmt.Errorf("writing %s: %w", b.tmp, err)
	}
	if !keepOpen {
		err := b.f.Close()
		b.f = nil
		if err != nil {
			return fmt.Errorf("writing %s: %w", b.tmp, err)
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
