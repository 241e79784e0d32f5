package seed

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"hist/lib/atomicfile"
)

// createNew writes data to path only if path does not exist: the content
// goes to a temp file in the same folder (0600), is fsynced, and is then
// hard-linked to path, which fails rather than replace a file that
// appeared meanwhile; the temp name is removed and the folder fsynced. On a
// file system without hard links it falls back to a rename, after checking
// that path is still free (the caller holds the rewriters' lock). created
// is false when path exists; on an error nothing is left behind.
func (r *Runner) createNew(path string, data []byte) (created bool, err error) {
	p, err := atomicfile.Create(path)
	if err != nil {
		return false, err
	}
	tmp := p.File.Name()
	if err := r.track(tmp); err != nil {
		p.Cleanup()
		return false, err
	}
	defer r.untrack(tmp)
	defer p.Cleanup()
	if _, err := p.Write(data); err != nil {
		return false, err
	}
	if err := p.Sync(); err != nil {
		return false, err
	}
	lerr := os.Link(tmp, path)
	switch {
	case lerr == nil:
		p.Cleanup()
		return true, atomicfile.SyncDir(filepath.Dir(path))
	case errors.Is(lerr, fs.ErrExist):
		return false, nil
	}
	if _, err := os.Lstat(path); err == nil {
		return false, nil
	}
	if err := p.Commit(); err != nil {
		return false, err
	}
	return true, nil
}
