package pi

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"hist/lib/transcript"
)

// listFiles returns the transcript files under root (or root itself when it
// is not a directory) that keep keeps, and counts what it passes over in
// st. A missing root yields nothing. Directories named like a transcript
// are returned too, so that reading them reports the error.
func listFiles(root string, keep transcript.Keep, st *transcript.Stats) ([]string, error) {
	info, err := os.Stat(root)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, &transcript.ReadError{Path: root, Err: err}
	}
	if !info.IsDir() {
		if keep != nil && !keep(root, info) {
			return nil, nil
		}
		return []string{root}, nil
	}
	walkRoot := root
	if li, err := os.Lstat(root); err == nil && li.Mode()&fs.ModeSymlink != 0 {
		if walkRoot, err = filepath.EvalSymlinks(root); err != nil {
			return nil, &transcript.ReadError{Path: root, Err: err}
		}
	}
	var files []string
	err = filepath.WalkDir(walkRoot, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && path != walkRoot {
				return nil // removed while we walked
			}
			return &transcript.ReadError{Path: path, Err: err}
		}
		if !strings.HasSuffix(d.Name(), ".jsonl") {
			return nil
		}
		var fi fs.FileInfo
		switch t := d.Type(); {
		case t.IsDir():
			if path == walkRoot {
				return nil
			}
			files = append(files, path)
			return fs.SkipDir
		case t.IsRegular():
			fi, err = d.Info()
		case t&fs.ModeSymlink != 0:
			if fi, err = os.Stat(path); err != nil || !fi.Mode().IsRegular() {
				st.Skipped++ // dangling, or not to a regular file
				return nil
			}
		default:
			st.Skipped++ // a FIFO, socket or device: reading could block
			return nil
		}
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return nil // removed while we walked
		case err != nil:
			return &transcript.ReadError{Path: path, Err: err}
		case keep == nil || keep(path, fi):
			files = append(files, path)
		}
		return nil
	})
	return files, err
}
