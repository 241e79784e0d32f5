package seed

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"hist/lib/atomicfile"
	"hist/lib/identity"
	"hist/lib/record"
	"hist/lib/store"
)

// writeBucket writes a bucket's records from its temp file: linked into
// place as the project's seed file of the source, or appended to the
// machine's import file of the source when the project has its seed file
// (another run may have written it meanwhile). Left out are the records
// hidden.json hides now when it changed (refilter), the ones the ledger
// holds now when it grew (ledgerGrew), and the ones the project holds
// already (liveMatches). On a failure the temp file is left for cleanup.
func (r *Runner) writeBucket(b *bucket) FileResult {
	fr := FileResult{Project: b.hash, Cwd: b.cwd, Source: b.src, Path: b.path,
		Prompts: len(b.wkeys), Known: b.known, Recent: b.recent, Hidden: b.hidden, Dupes: b.dupes}
	fail := func(err error) FileResult {
		fr.Status, fr.Err = FileFailed, err.Error()
		return fr
	}
	if b.seed {
		if _, err := os.Lstat(b.path); err == nil {
			b.path, b.seed = filepath.Join(filepath.Dir(b.path), store.ImportLog(b.src, r.Opts.Store.Machine)), false
			fr.Path = b.path
		} else if !errors.Is(err, fs.ErrNotExist) {
			return fail(err)
		}
	}
	live := r.liveMatches(b)
	if fr.Prompts == 0 || r.Opts.DryRun {
		fr.Status, fr.Prompts, fr.Live = FileWould, fr.Prompts-len(live), len(live)
		if fr.Prompts == 0 {
			fr.Status, fr.Path = FileNone, ""
		}
		return fr
	}
	if err := r.appendTemp(b); err != nil {
		return fail(err)
	}
	hideCheck := r.refilter && !r.hidden.Empty()
	var err error
	switch {
	case !b.seed:
		err = r.appendKept(b, hideCheck, live, &fr)
	case hideCheck || r.ledgerGrew || len(live) > 0:
		err = r.filter(b, hideCheck, live, &fr)
	}
	if err == nil && b.seed && fr.Prompts > 0 {
		if err = r.track(""); err == nil {
			err = link(b.tmp, b.path)
		}
	}
	if err != nil {
		return fail(err)
	}
	r.removeTemp(b)
	if fr.Prompts == 0 {
		fr.Status, fr.Path = FileNone, ""
		return fr
	}
	fr.Status = FileWritten // a seed file once its folder is synced (syncFolders)
	return fr
}

// appendChunk is about how many bytes of records one write appends.
const appendChunk = 1 << 20

// keptRecords passes the records of b's temp file to out, in chunks of
// whole records, but the ones another run imported since (the ledger),
// that hidden.json hides now (when hideCheck) or that the project holds
// already (live, by index). It counts these in fr, and leaves in b.wkeys
// the keys of the records passed.
func (r *Runner) keptRecords(b *bucket, hideCheck bool, live map[int]bool, fr *FileResult, out func([]byte) error) error {
	in, err := os.Open(b.tmp)
	if err != nil {
		return err
	}
	defer in.Close()
	var norm, chunk []byte
	kept := b.wkeys[:0:0]
	i := 0
	_, err = record.Scan(in, func(l *record.Line) error {
		if i >= len(b.wkeys) {
			return errors.New("more records than keys")
		}
		k := b.wkeys[i]
		i++
		if hideCheck {
			norm = identity.AppendNormalized(norm[:0], string(l.Text))
		}
		switch {
		case r.led.Has(k):
			fr.Known++
		case hideCheck && r.hidden.HiddenNormalized(norm):
			fr.Hidden++
			b.okeys = append(b.okeys, k)
		case live[i-1]:
			fr.Live++
			b.okeys = append(b.okeys, k)
		default:
			kept = append(kept, k)
			if chunk = append(append(chunk, l.Raw...), '\n'); len(chunk) < appendChunk {
				return nil
			}
			err := out(chunk)
			chunk = chunk[:0]
			return err
		}
		fr.Prompts--
		return nil
	})
	if err == nil && len(chunk) > 0 {
		err = out(chunk)
	}
	b.wkeys = kept
	return err
}

// filter makes b's temp file a new one without the records that must not
// be written after all (keptRecords).
func (r *Runner) filter(b *bucket, hideCheck bool, live map[int]bool, fr *FileResult) error {
	f, err := r.newTemp(b.path)
	if err != nil {
		return err
	}
	err = r.keptRecords(b, hideCheck, live, fr, func(chunk []byte) error {
		_, err := f.Write(chunk)
		return err
	})
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	r.removeTemp(b)
	b.tmp = f.Name()
	if err != nil {
		return fmt.Errorf("writing %s: %w", b.path, err)
	}
	return nil
}

// appendKept appends to b's import file the records to write
// (keptRecords), as a capture file is appended to (store.Append: whole
// records, each write one O_APPEND write), and fsyncs it.
func (r *Runner) appendKept(b *bucket, hideCheck bool, live map[int]bool, fr *FileResult) error {
	if err := r.track(""); err != nil {
		return err
	}
	wrote := false
	err := r.keptRecords(b, hideCheck, live, fr, func(chunk []byte) error {
		wrote = true
		return store.Append(b.path, chunk)
	})
	if err == nil && wrote {
		err = syncFile(b.path)
	}
	if err != nil {
		return writeError(b.path, err)
	}
	return nil
}

// removeTemp removes b's temp file: its records are written (linked to
// the seed's name), or none is to be.
func (r *Runner) removeTemp(b *bucket) {
	if b.tmp != "" {
		os.Remove(b.tmp)
		r.mu.Lock()
		delete(r.temps, b.tmp)
		r.mu.Unlock()
		b.tmp = ""
	}
}

// syncFile fsyncs the file at path.
func syncFile(path string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// errAppeared: the file appeared while hist-seed wrote it.
var errAppeared = errors.New("the file appeared while hist-seed wrote it: run hist-seed again")

// link fsyncs the temp file tmp and hard-links it to path, which fails
// rather than replace a file that appeared meanwhile; the temp name goes.
// Without hard links it is renamed, once path is checked to be free (the
// caller holds the rewriters' lock). syncFolders fsyncs the folder.
func link(tmp, path string) error {
	if err := syncFile(tmp); err != nil {
		return writeError(tmp, err)
	}
	lerr := os.Link(tmp, path)
	switch {
	case lerr == nil:
		os.Remove(tmp)
		return nil
	case errors.Is(lerr, fs.ErrExist):
		return errAppeared
	}
	if _, err := os.Lstat(path); err == nil {
		return errAppeared
	}
	return os.Rename(tmp, path)
}

// syncFolders fsyncs, once each, the folders the seed files in results
// were linked into; a file whose folder could not be synced is marked
// failed.
func syncFolders(results []FileResult) {
	synced := map[string]error{}
	for i := range results {
		fr := &results[i]
		if fr.Status != FileWritten {
			continue
		}
		d := filepath.Dir(fr.Path)
		err, done := synced[d]
		if !done {
			err = syncDir(d)
			synced[d] = err
		}
		if err != nil {
			fr.Status, fr.Err = FileFailed, fmt.Sprintf("the seed %s is written but its folder could not be synced: %v", fr.Path, err)
		}
	}
}

// syncDir is atomicfile.SyncDir; tests make it fail.
var syncDir = atomicfile.SyncDir
