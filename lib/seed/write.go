package seed

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"hist/lib/atomicfile"
	"hist/lib/tombstone"
)

// writeSeed makes a bucket's temp file its seed or import file. When
// refilter is set, hidden.json has changed since the sources were read:
// the records it now hides are left out; so are the ones the ledger holds
// now when it grew (ledgerGrew: another run imported meanwhile), and the
// ones the project holds already (captured live).
//
// The temp file (0600, in the project folder) is fsynced and hard-linked
// to the seed's name, which fails rather than replace a file that appeared
// meanwhile; then the temp name is removed. On a file system without hard
// links it is renamed instead, after checking that the name is still free
// (the caller holds the rewriters' lock). The folder is fsynced by
// syncFolders. On any failure the temp file is left for discard to
// remove.
func (r *Runner) writeSeed(src string, b *bucket, hidden *tombstone.Set, refilter, ledgerGrew bool) FileResult {
	fr := FileResult{Project: b.hash, Cwd: b.cwd, Source: src, Path: b.path,
		Prompts: b.n, Known: b.known, Recent: b.recent, Hidden: b.hidden, Dupes: b.dupes}
	fail := func(err error) FileResult {
		fr.Status, fr.Err = FileFailed, err.Error()
		return fr
	}
	switch {
	case b.n == 0:
		fr.Status, fr.Path = FileNone, ""
		return fr
	case r.Opts.DryRun:
		fr.Status = FileWould
		return fr
	}
	if isSeedPath(b.path, src) {
		// Another run may have written the seed file meanwhile: then
		// this run's records go to an import file.
		if _, err := os.Lstat(b.path); err == nil {
			b.path = importName(filepath.Dir(b.path), src, r.Opts.Store.Machine, r.Opts.Now().UnixMilli())
			fr.Path = b.path
		} else if !errors.Is(err, fs.ErrNotExist) {
			return fail(err)
		}
	}
	if err := r.appendTemp(b); err != nil {
		return fail(err)
	}
	hideCheck := refilter && !hidden.Empty()
	if live := r.liveCopies(b); hideCheck || ledgerGrew || live != nil {
		if err := r.filter(b, hidden, hideCheck, live, &fr); err != nil {
			return fail(err)
		}
		if fr.Prompts == 0 {
			r.removeTemp(b)
			fr.Status, fr.Path = FileNone, ""
			return fr
		}
	}
	if err := link(b.tmp, b.path); err != nil {
		return fail(err)
	}
	r.untrack(b.tmp)
	b.done = true
	b.madeDir = nil
	fr.Status = FileWritten // once its folder is synced (syncFolders)
	return fr
}

// errAppeared: the file appeared while hist-seed wrote it.
var errAppeared = errors.New("the file appeared while hist-seed wrote it: run hist-seed again")

// link fsyncs the temp file tmp and links it to path, which must not
// exist; the temp name goes.
func link(tmp, path string) error {
	f, err := os.OpenFile(tmp, os.O_RDWR, 0)
	if err != nil {
		return writeError(tmp, err)
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
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
			fr.Status = FileFailed
			fr.Err = fmt.Errorf("the seed %s is written but its folder could not be synced: %w", fr.Path, err).Error()
		}
	}
}

// syncDir is atomicfile.SyncDir; tests make it fail.
var syncDir = atomicfile.SyncDir

// sameEntries reports whether two loads of hidden.json hold the same
// entries (then nothing new is hidden).
func sameEntries(a, b *tombstone.Set) bool {
	return slices.Equal(a.Entries, b.Entries)
}
