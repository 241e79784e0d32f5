package seed

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"

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
// meanwhile; then the temp name is removed and the folder fsynced. On a
// file system without hard links it is renamed instead, after checking
// that the name is still free (the caller holds the rewriters' lock). On
// any failure the temp file is left for discard to remove.
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
	werr := r.appendTemp(b, true)
	b.data = nil
	if werr != nil {
		return fail(werr)
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
	if err := b.f.Sync(); err != nil {
		return fail(writeError(b.tmp, err))
	}
	err := b.f.Close()
	b.f = nil
	if err != nil {
		return fail(writeError(b.tmp, err))
	}
	lerr := os.Link(b.tmp, b.path)
	switch {
	case lerr == nil:
		os.Remove(b.tmp)
	case errors.Is(lerr, fs.ErrExist):
		return fail(errors.New("the file appeared while hist-seed wrote it: run hist-seed again"))
	default:
		if _, err := os.Lstat(b.path); err == nil {
			return fail(errors.New("the file appeared while hist-seed wrote it: run hist-seed again"))
		}
		if err := os.Rename(b.tmp, b.path); err != nil {
			return fail(err)
		}
	}
	r.untrack(b.tmp)
	b.done = true
	b.madeDir = nil
	fr.Status = FileWritten // once its folder is synced (syncFolders)
	return fr
}

// syncFolders fsyncs, once each, the folders the seed files in results
// were linked into, on up to workers goroutines; a file whose folder
// could not be synced is marked failed. The folders are synced after
// every file is in place, so that the syncs of all of them can share the
// file system's journal commits instead of each waiting for its own.
func syncFolders(results []FileResult, workers int) {
	byDir := map[string][]int{}
	var dirs []string
	for i, fr := range results {
		if fr.Status != FileWritten {
			continue
		}
		d := filepath.Dir(fr.Path)
		if byDir[d] == nil {
			dirs = append(dirs, d)
		}
		byDir[d] = append(byDir[d], i)
	}
	eachParallel(len(dirs), workers, func(k int) {
		err := syncDir(dirs[k])
		if err == nil {
			return
		}
		for _, i := range byDir[dirs[k]] {
			fr := &results[i]
			fr.Status = FileFailed
			fr.Err = fmt.Errorf("the seed %s is written but its folder could not be synced: %w", fr.Path, err).Error()
		}
	})
}

// syncDir is atomicfile.SyncDir; tests make it fail.
var syncDir = atomicfile.SyncDir

// eachParallel calls fn(0) ... fn(n-1) on up to workers goroutines.
func eachParallel(n, workers int, fn func(int)) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(workers, n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				fn(i)
			}
		}()
	}
	wg.Wait()
}

// sameEntries reports whether two loads of hidden.json hold the same
// entries (then nothing new is hidden).
func sameEntries(a, b *tombstone.Set) bool {
	return slices.Equal(a.Entries, b.Entries)
}
