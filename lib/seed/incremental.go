package seed

import (
	"cmp"
	"fmt"
	"io/fs"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"hist/lib/identity"
	"hist/lib/ledger"
	"hist/lib/record"
	"hist/lib/store"
	"hist/lib/transcript"
)

// A run imports only the prompts whose key the ledger does not hold, that
// a seed file written before the ledger existed does not stand for (its
// cutoff), and that the project does not hold already as a live capture
// (docs/hist-seed.md, "Rules").

const (
	noCutoff   = math.MinInt64 // the ledger covers the project's seed file of the source
	liveWindow = 5000          // how far apart (ms) a live capture and the transcript's copy of a prompt may be
)

// Settle is how long after it was typed a prompt is left to later runs: a
// hook or extension capturing it live may not have written it yet (the pi
// extension runs hist-seed as its first prompt is sent).
const Settle = 10 * time.Second

// imported reports whether the ledger holds k, reading it the first time.
func (r *Runner) imported(k ledger.Key) (bool, error) {
	if r.led == nil {
		l, err := ledger.Load(r.Opts.Store.Ledger())
		if err != nil {
			return false, fmt.Errorf("reading %s: %w", r.Opts.Store.Ledger(), err)
		}
		r.led = l
	}
	return r.led.Has(k), nil
}

// state returns the import state, reading it the first time.
func (r *Runner) state() *ledger.State {
	if r.st == nil {
		r.st = ledger.LoadState(r.Opts.Store.State(), build())
	}
	return r.st
}

// build names the running hist-seed build: its executable's size and
// modification time (a rebuild reads every transcript once again).
var build = sync.OnceValue(func() string {
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	fi, err := os.Stat(exe)
	if err != nil {
		return ""
	}
	return fmt.Sprintf("%d %d", fi.Size(), fi.ModTime().UnixNano())
})

// cutoff returns the cutoff of the seed file at path (src's, in project
// hash): recorded in the state, or, for a seed file written before the
// ledger existed, the time of its newest record, recorded then.
func (r *Runner) cutoff(hash, src, path string) (int64, error) {
	st := r.state()
	if ms, ok := st.Cutoff(hash, src); ok {
		if ms == 0 {
			return noCutoff, nil
		}
		return ms, nil
	}
	newest := int64(math.MinInt64 + 1)
	if err := scanFile(path, func(l *record.Line) error {
		newest = max(newest, l.TS)
		return nil
	}); err != nil {
		return 0, err
	}
	st.SetCutoff(hash, src, newest)
	return newest, nil
}

// scanFile calls fn for each record of the store file at path.
func scanFile(path string, fn func(*record.Line) error) error {
	f, err := store.Open(path)
	if err == nil {
		_, err = record.Scan(f, fn)
		f.Close()
	}
	if err != nil {
		return fmt.Errorf("reading %s: %w", path, err)
	}
	return nil
}

// A live copy of a prompt event is a record of the project's store files
// with the event's identity, within liveWindow of its time, and of its
// session when both have one (a live capture, or the record of a run
// killed before it recorded its keys). Each copy stands for one event:
// they are paired closest in time first, so that a prompt typed again
// seconds later is not taken for a copy of the first.

// liveRec is a record of the project's store files.
type liveRec struct {
	key     eventKey
	session string
}

// liveMatches returns the indexes of b's records whose event has a live
// copy in the store.
func (r *Runner) liveMatches(b *bucket) map[int]bool {
	groups := map[[2]uint64]bool{}
	for _, e := range b.events {
		if e.rec >= 0 {
			groups[e.key.id] = true
		}
	}
	var evs []event
	lo, hi := int64(math.MaxInt64), int64(math.MinInt64)
	for _, e := range b.events {
		if groups[e.key.id] {
			evs = append(evs, e)
			lo, hi = min(lo, e.key.ts), max(hi, e.key.ts)
		}
	}
	if len(evs) == 0 {
		return nil
	}
	return pairLive(evs, r.storeRecords(b, groups, lo-liveWindow, hi+liveWindow))
}

// storeRecords reads the records of the project's store files whose
// identity is one of groups and whose time is in [lo, hi]. A file it
// cannot read is passed over (a prompt may then be stored twice, which
// lists once).
func (r *Runner) storeRecords(b *bucket, groups map[[2]uint64]bool, lo, hi int64) []liveRec {
	files, _ := r.Opts.Store.Files(store.Scope{Project: b.hash, Also: b.also})
	var out []liveRec
	var norm []byte
	for _, sf := range files {
		fi, err := os.Stat(sf.Path)
		if err != nil || fi.ModTime().UnixMilli() < lo {
			continue
		}
		scanFile(sf.Path, func(l *record.Line) error {
			if l.TS < lo || l.TS > hi {
				return nil
			}
			norm = identity.AppendNormalized(norm[:0], string(l.Text))
			if k := makeKey(l.TS, norm); groups[k.id] {
				out = append(out, liveRec{k, l.Record().Session})
			}
			return nil
		})
	}
	return out
}

// pairLive pairs events with live copies, closest in time first (then by
// time, then by place, so that every run pairs them alike), each at most
// once, and returns the records of the events paired.
func pairLive(evs []event, recs []liveRec) map[int]bool {
	byID := map[[2]uint64][]int{}
	for j, l := range recs {
		byID[l.key.id] = append(byID[l.key.id], j)
	}
	type pair struct {
		d, ts int64
		e, l  int
	}
	var pairs []pair
	for i, e := range evs {
		for _, j := range byID[e.key.id] {
			d := max(e.key.ts-recs[j].key.ts, recs[j].key.ts-e.key.ts)
			s := recs[j].session
			if d <= liveWindow && (s == "" || e.session == "" || s == e.session) {
				pairs = append(pairs, pair{d, e.key.ts, i, j})
			}
		}
	}
	sort.Slice(pairs, func(a, b int) bool {
		x, y := pairs[a], pairs[b]
		return cmp.Or(cmp.Compare(x.d, y.d), cmp.Compare(x.ts, y.ts), cmp.Compare(x.e, y.e), cmp.Compare(x.l, y.l)) < 0
	})
	usedE, usedL := make([]bool, len(evs)), make([]bool, len(recs))
	drop := map[int]bool{}
	for _, p := range pairs {
		if usedE[p.e] || usedL[p.l] {
			continue
		}
		usedE[p.e], usedL[p.l] = true, true
		if rec := evs[p.e].rec; rec >= 0 {
			drop[rec] = true
		}
	}
	return drop
}

// commitKeys appends to the ledger the keys of the jobs whose records are
// in place, and notes in the state that the ledger covers the seed files
// written. The caller holds the store's rewriters' lock.
func (r *Runner) commitKeys(results []FileResult) error {
	var keys [][]ledger.Key
	n := 0
	for i, b := range r.jobs {
		switch fr := results[i]; fr.Status {
		case FileWritten, FileNone:
			keys = append(keys, b.wkeys, b.okeys)
			n += len(b.wkeys) + len(b.okeys)
			if fr.Status == FileWritten && b.seed {
				// The ledger covers the seed file this run wrote.
				r.state().SetCutoff(fr.Project, fr.Source, 0)
			}
		}
	}
	if n == 0 {
		return nil
	}
	if _, err := r.imported(ledger.Key{}); err != nil {
		return err
	}
	if err := r.led.Append(keys...); err != nil {
		return fmt.Errorf("writing %s: %w", r.led.Path, err)
	}
	return nil
}

// keeper returns the Keep that a source's scan is given, and the listing
// it fills with the stamp of every file the reader lists: it keeps the
// files whose stamp changed since a run recorded it (see advance).
func (r *Runner) keeper(src Source, unchanged *int) (transcript.Keep, *ledger.Listing) {
	// The stamps are kept by source and root (pi's --sessions names another).
	l := r.state().Listing(src.Name + " " + strconv.Quote(src.Root))
	return func(path string, fi fs.FileInfo) bool {
		same := l.List(path, ledger.StampOf(fi))
		if strings.HasSuffix(path, ".db") {
			// A database's changes may sit in its write-ahead log.
			wal := path + "-wal"
			if wi, err := os.Stat(wal); err == nil {
				same = l.List(wal, ledger.StampOf(wi)) && same
			} else if l.Known(wal) {
				same = false
			}
		}
		if same {
			*unchanged++
		}
		return !same
	}, l
}
