package seed

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"hist/lib/atomicfile"
	"hist/lib/store"
	"hist/lib/tombstone"
)

// writeBucket writes a bucket's records from its temp file: linked into
// place as the project's seed file of the source, or appended to the
// machine's import file of the source when the project has its seed file
// (it may have appeared meanwhile: another run wrote it). When refilter is
// set, hidden.json has changed since the sources were read: the records it
// now hides are left out; so are the ones the ledger holds now when it
// grew (ledgerGrew: another run imported meanwhile), and the ones the
// project holds already (see liveMatches).
//
// A seed file is the temp file (0600, in the project folder) fsynced and
// hard-linked to the seed's name, which fails rather than replace a file
// that appeared meanwhile; on a file system without hard links it is
// renamed instead, after checking that the name is still free (the caller
// holds the rewriters' lock). Its folder is fsynced by syncFolders. An
// import file is appended to as a capture file is (store.Append: whole
// records, each write one O_APPEND write), then fsynced. On any failure
// the temp file is left for discard to remove.
func (r *Runner) writeBucket(src string, b *bucket, hidden *tombstone.Set, refilter, ledgerGrew bool) FileResult {
	fr := FileResult{Project: b.hash, Cwd: b.cwd, Source: src, Path: b.path,
		Prompts: b.n, Known: b.known, Recent: b.recent, Hidden: b.hidden, Dupes: b.dupes}
	fail := func(err error) FileResult {
		fr.Status, fr.Err = FileFailed, err.Error()
		return fr
	}
	if isSeedPath(b.path, src) {
		if _, err := os.Lstat(b.path); err == nil {
			b.path = filepath.Join(filepath.Dir(b.path), store.ImportLog(src, r.Opts.Store.Machine))
			fr.Path = b.path
		} else if !errors.Is(err, fs.ErrNotExist) {
			return fail(err)
		}
	}
	live := r.liveMatches(b)
	if b.n == 0 || r.Opts.DryRun {
		fr.Status, fr.Prompts, fr.Live = FileWould, b.n-len(live), len(live)
		if fr.Prompts == 0 {
			fr.Status, fr.Path = FileNone, ""
		}
		return fr
	}
	if err := r.appendTemp(b); err != nil {
		return fail(err)
	}
	if hideCheck := refilter && !hidden.Empty(); hideCheck || ledgerGrew || len(live) > 0 {
		if err := r.filter(b, hidden, hideCheck, live, &fr); err != nil {
			return fail(err)
		}
		if fr.Prompts == 0 {
			r.removeTemp(b)
			fr.Status, fr.Path = FileNone, ""
			return fr
		}
	}
	err := r.running()
	if err == nil && isSeedPath(b.path, src) {
		err = link(b.tmp, b.path)
	} else if err == nil {
		err = appendFile(b.tmp, b.path)
	}
	if err != nil {
		return fail(err)
	}
	r.removeTemp(b)
	b.madeDir = nil
	fr.Status = FileWritten // a seed file once its folder is synced (syncFolders)
	return fr
}

// appendFile appends the records of the file tmp to path (appendRecords).
func appendFile(tmp, path string) error {
	f, err := os.Open(tmp)
	if err != nil {
		return writeError(tmp, err)
	}
	defer f.Close()
	return appendRecords(path, f)
}

// appendRecords appends the records r holds to path, as a capture file is
// appended to (store.Append: whole records, each write one O_APPEND
// write), and fsyncs path.
func appendRecords(path string, r io.Reader) error {
	br := bufio.NewReaderSize(r, 64<<10)
	var chunk []byte
	for {
		line, rerr := br.ReadBytes('\n')
		chunk = append(chunk, line...)
		if len(chunk) > 0 && (rerr != nil || len(chunk) >= appendChunk) {
			if err := store.Append(path, chunk); err != nil {
				return writeError(path, err)
			}
			chunk = chunk[:0]
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			return fmt.Errorf("reading the records for %s: %w", path, rerr)
		}
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err == nil {
		err = f.Sync()
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		return writeError(path, err)
	}
	return nil
}

// appendChunk is about how many bytes of records one write appends.
const appendChunk = 1 << 20

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
