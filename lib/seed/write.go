package seed

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"

	"hist/lib/atomicfile"
	"hist/lib/identity"
	"hist/lib/record"
	"hist/lib/tombstone"
)

// writeSeed makes a bucket's temp file its seed file, unless the seed
// file exists. When refilter is set, hidden.json has changed since the
// sources were read: the records it now hides are left out.
//
// The temp file (0600, in the project folder) is fsynced and hard-linked
// to the seed's name, which fails rather than replace a file that appeared
// meanwhile; then the temp name is removed and the folder fsynced. On a
// file system without hard links it is renamed instead, after checking
// that the name is still free (the caller holds the rewriters' lock). On
// any failure the temp file is left for discard to remove.
func (r *Runner) writeSeed(src string, b *bucket, hidden *tombstone.Set, refilter bool) FileResult {
	fr := FileResult{Project: b.hash, Cwd: b.cwd, Source: src, Path: b.path,
		Prompts: b.n, Hidden: b.hidden, Dupes: b.dupes}
	fail := func(err error) FileResult {
		fr.Status, fr.Err = FileFailed, err.Error()
		return fr
	}
	if _, err := os.Lstat(b.path); err == nil {
		fr.Status = FileExists
		return fr
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fail(err)
	}
	switch {
	case r.Opts.DryRun:
		fr.Status = FileWould
		return fr
	case b.exists:
		// Its records were not kept: writing now would lose them.
		return fail(errors.New("the seed file was removed while hist-seed ran: run it again"))
	}
	werr := r.appendTemp(b, true)
	b.data = nil
	if werr != nil {
		return fail(werr)
	}
	if refilter && !hidden.Empty() {
		if err := r.refilter(b, hidden, &fr); err != nil {
			return fail(err)
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
		fr.Status = FileExists
		return fr
	default:
		if _, err := os.Lstat(b.path); err == nil {
			fr.Status = FileExists
			return fr
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

// refilter copies b's temp file to a new one without the records hidden
// now hides, and makes the copy b's temp file.
func (r *Runner) refilter(b *bucket, hidden *tombstone.Set, fr *FileResult) error {
	old, err := os.Open(b.tmp)
	if err != nil {
		return err
	}
	defer old.Close()
	p, err := atomicfile.Create(b.path)
	if err != nil {
		return fmt.Errorf("writing %s: %w", b.path, err)
	}
	if err := r.track(p.File.Name()); err != nil {
		p.Cleanup()
		return err
	}
	w := bufio.NewWriterSize(p.File, 64<<10)
	var norm []byte
	_, err = record.Scan(old, func(l *record.Line) error {
		norm = identity.AppendNormalized(norm[:0], string(l.Text))
		if hidden.HiddenNormalized(norm) {
			fr.Prompts--
			fr.Hidden++
			return nil
		}
		w.Write(l.Raw)
		return w.WriteByte('\n')
	})
	if err == nil {
		err = w.Flush()
	}
	if err != nil {
		r.untrack(p.File.Name())
		p.Cleanup()
		return fmt.Errorf("writing %s: %w", b.path, err)
	}
	b.f.Close()
	os.Remove(b.tmp)
	r.untrack(b.tmp)
	b.tmp, b.f = p.File.Name(), p.File
	return nil
}

// sameEntries reports whether two loads of hidden.json hold the same
// entries (then nothing new is hidden).
func sameEntries(a, b *tombstone.Set) bool {
	return slices.Equal(a.Entries, b.Entries)
}
