package seed

import (
	"errors"
	"fmt"
	"hash/maphash"
	"io/fs"
	"os"
	"path/filepath"

	"hist/lib/atomicfile"
	"hist/lib/identity"
	"hist/lib/ledger"
	"hist/lib/record"
	"hist/lib/redact"
	"hist/lib/store"
	"hist/lib/transcript"
)

// eventKey is a prompt event: its time and a 128-bit hash of its identity
// (normalized text), two maphash sums with random seeds (no input can aim
// at a collision).
type eventKey struct {
	ts int64
	id [2]uint64
}

var keySeeds = [2]maphash.Seed{maphash.MakeSeed(), maphash.MakeSeed()}

func makeKey(ts int64, norm []byte) eventKey {
	return eventKey{ts, [2]uint64{maphash.Bytes(keySeeds[0], norm), maphash.Bytes(keySeeds[1], norm)}}
}

// spillAt is how many bytes of records may wait in memory: past it, every
// bucket's records are appended to its temp file.
var spillAt int64 = 8 << 20

// bucket holds one project's records for one source: the ones spilled to
// its temp file, then recs.
type bucket struct {
	canonical
	src    string
	path   string // the seed file, or the import file when the project has its seed
	seed   bool   // path is the seed file
	recs   []byte // the records not written to the temp file yet
	hidden int
	dupes  int
	known  int // prompts an earlier run imported (the ledger, or a seed's cutoff)
	recent int // prompts typed less than Settle ago, left to a later run
	// The ledger keys: of the records, in their order (wkeys), and of the
	// other prompts that count as imported once this run is (okeys: the
	// hidden ones, repeats, and the ones a seed file's cutoff covers).
	wkeys, okeys []ledger.Key
	seen         map[eventKey]struct{} // the prompt events met, for the dedup
	// events are the prompt events a live capture may be a copy of (see
	// liveMatches), kept when the project had store files (live).
	events []event
	live   bool
	cutoff int64 // the prompts up to this time are the ones the project's seed file of the source stands for (noCutoff: none)

	tmp string // temp file in the project folder ("" before the first write and once done)
}

// event is a prompt event of a bucket, with the index of its record (-1:
// this run writes none).
type event struct {
	key     eventKey
	session string
	rec     int
}

// collector gathers one source's prompts by project.
type collector struct {
	r         *Runner
	src       Source
	listing   *ledger.Listing      // of the source's files (see keeper)
	buckets   map[string]*bucket   // by hash
	canon     map[string]canonical // raw cwd -> its project
	noCwd     int
	approx    int // prompts kept whose time is not their own
	norm      []byte
	unsettled []string // files with prompts left to a later run: their stamps are not recorded
}

type canonical struct {
	cwd, hash string   // "": no usable cwd
	also      []string // the project's other folders (store.ProjectOf)
}

func (c *collector) project(raw string) canonical {
	if p, ok := c.canon[raw]; ok {
		return p
	}
	var p canonical
	if raw != "" && filepath.IsAbs(raw) {
		if cw, err := store.Canonical(raw); err == nil {
			hash, also := store.ProjectOf(cw)
			p = canonical{cwd: cw, hash: hash, also: also}
		}
	}
	c.canon[raw] = p
	return p
}

// add files p in its project's bucket, or counts why it is left out. An
// error is a store failure.
func (c *collector) add(p transcript.Prompt) error {
	o := &c.r.Opts
	raw := p.Text
	lkey := ledger.KeyOf(c.src.Name, p.Key, p.Session, p.TS, raw)
	if !o.NoRedact {
		p.Text = redact.Text(p.Text)
	}
	if !identity.Capturable(p.Text) {
		return nil
	}
	pr := c.project(p.Cwd)
	if pr.cwd == "" {
		c.noCwd++
		return nil
	}
	if o.Project != "" && pr.cwd != o.Project {
		return nil
	}
	b, err := c.bucket(pr)
	if err != nil {
		return err
	}
	known, err := c.r.imported(lkey)
	if err != nil {
		return err
	}
	// A prompt deleted as it was typed (its tombstone names the text with
	// the secret) stays hidden once redacted.
	c.norm = identity.AppendNormalized(c.norm[:0], p.Text)
	hidden := c.r.hidden.HiddenNormalized(c.norm) || (raw != p.Text && c.r.hidden.Hidden(raw))
	ev := event{key: makeKey(p.TS, c.norm), session: p.Session, rec: -1}
	_, dup := b.seen[ev.key]
	b.seen[ev.key] = struct{}{}
	switch {
	case known || (b.cutoff != noCutoff && p.TS <= b.cutoff):
		b.known++
		if !known {
			b.okeys = append(b.okeys, lkey)
		}
		if !hidden && !dup {
			b.note(ev)
		}
	case dup:
		b.dupes++
		b.okeys = append(b.okeys, lkey)
	case hidden:
		b.hidden++
		b.okeys = append(b.okeys, lkey)
	case c.src.Live && p.TS > c.r.now-Settle.Milliseconds() && p.TS <= c.r.now+Settle.Milliseconds():
		// Typed a moment ago: its live capture may be on its way. Its
		// file is read again by the next run.
		b.recent++
		c.unsettled = append(c.unsettled, p.File)
		b.note(ev)
	default:
		ev.rec = len(b.wkeys)
		b.note(ev)
		return c.keep(b, &p, lkey)
	}
	return nil
}

// note keeps ev for liveMatches, when the project may hold live copies.
func (b *bucket) note(ev event) {
	if b.live {
		b.events = append(b.events, ev)
	}
}

// keep writes p's record to b (a dry run only counts it).
func (c *collector) keep(b *bucket, p *transcript.Prompt, lkey ledger.Key) error {
	b.wkeys = append(b.wkeys, lkey)
	if p.Approx {
		c.approx++
	}
	if c.r.Opts.DryRun {
		return nil
	}
	before := len(b.recs)
	b.recs = record.Append(b.recs, record.Record{Text: p.Text, TS: p.TS, Src: p.Src, Session: p.Session})
	if c.r.held += int64(len(b.recs) - before); c.r.held > spillAt {
		return c.r.spill()
	}
	return nil
}

// bucket returns pr's bucket, made at its first prompt.
func (c *collector) bucket(pr canonical) (*bucket, error) {
	if b := c.buckets[pr.hash]; b != nil {
		return b, nil
	}
	st := c.r.Opts.Store
	dir := st.ProjectDir(pr.hash)
	b := &bucket{canonical: pr, src: c.src.Name, seen: map[eventKey]struct{}{},
		cutoff: noCutoff, path: st.OwnPath(dir, store.SeedFile(c.src.Name, "")), seed: true}
	// A project without store files yet holds no live copy (a prompt
	// captured while the run reads is typed a moment ago, see Settle).
	files, err := st.Files(store.Scope{Project: pr.hash, Also: pr.also})
	b.live = err != nil || len(files) > 0
	// The project's seed file of the source, in its folder or in the one
	// its path names (a project known by its repository since).
	for _, h := range append([]string{pr.hash}, pr.also...) {
		seed := st.OwnPath(st.ProjectDir(h), store.SeedFile(c.src.Name, ""))
		if _, err := os.Lstat(seed); err != nil {
			continue
		}
		if b.cutoff, err = c.r.cutoff(h, c.src.Name, seed); err != nil {
			return nil, err
		}
		b.path, b.seed = filepath.Join(dir, store.ImportLog(c.src.Name, st.Machine)), false
		break
	}
	c.buckets[pr.hash] = b
	return b, nil
}

// spill appends every bucket's records in memory to its temp file.
func (r *Runner) spill() error {
	for _, c := range r.collectors {
		for _, b := range c.buckets {
			if err := r.appendTemp(b); err != nil {
				return err
			}
		}
	}
	r.held = 0
	return nil
}

// appendTemp appends b's records in memory to its temp file (through the
// page cache: link fsyncs it), creating it the first time.
func (r *Runner) appendTemp(b *bucket) error {
	if len(b.recs) == 0 {
		return nil
	}
	if b.tmp == "" {
		dir := filepath.Dir(b.path)
		made, err := mkdirs(dir)
		r.made = append(r.made, made...)
		if err != nil {
			return fmt.Errorf("creating %s: %w", dir, err)
		}
		f, err := r.newTemp(b.path)
		if err != nil {
			return err
		}
		f.Close()
		b.tmp = f.Name()
	}
	f, err := os.OpenFile(b.tmp, os.O_WRONLY|os.O_APPEND, 0)
	if err == nil {
		_, err = f.Write(b.recs)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	b.recs = nil
	if err != nil {
		return writeError(b.tmp, err)
	}
	return nil
}

// newTemp creates a temp file for path that Interrupt removes.
func (r *Runner) newTemp(path string) (*os.File, error) {
	p, err := atomicfile.Create(path)
	if err != nil {
		return nil, fmt.Errorf("writing %s: %w", path, err)
	}
	if err := r.track(p.File.Name()); err != nil {
		p.Cleanup()
		return nil, err
	}
	return p.File, nil
}

// mkdirs creates dir and its missing parents (0700) and returns the ones
// it created, deepest first.
func mkdirs(dir string) ([]string, error) {
	var missing []string
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(d); !errors.Is(err, fs.ErrNotExist) || filepath.Dir(d) == d {
			break
		}
		missing = append(missing, d)
	}
	return missing, store.EnsureDir(dir)
}

// writeError says that writing path failed, without err's path when it
// is path.
func writeError(path string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) && pe.Path == path {
		err = pe.Err
	}
	return fmt.Errorf("writing %s: %w", path, err)
}
