package claude

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"hist/lib/transcript"
)

// file is one transcript to read, with its modification time for ordering.
type file struct {
	path  string
	mtime int64
}

// listFiles returns the transcript files under root (or root itself when it
// is not a directory) that keep keeps, and counts what it passes over in
// st: subagent transcripts (every *.jsonl under a "subagents" folder, and
// agent-*.jsonl files) in Subagent, files that are not regular in Skipped.
// A missing root yields nothing. Directories named like a transcript are
// returned too, so that reading them reports the error.
func listFiles(root string, keep transcript.Keep, st *transcript.Stats) ([]file, error) {
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
		return []file{{root, info.ModTime().UnixNano()}}, nil
	}
	walkRoot := root
	if li, err := os.Lstat(root); err == nil && li.Mode()&fs.ModeSymlink != 0 {
		if walkRoot, err = filepath.EvalSymlinks(root); err != nil {
			return nil, &transcript.ReadError{Path: root, Err: err}
		}
	}
	var files []file
	err = filepath.WalkDir(walkRoot, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && path != walkRoot {
				return nil // removed while we walked
			}
			return &transcript.ReadError{Path: path, Err: err}
		}
		name := d.Name()
		if d.IsDir() && name == "subagents" && path != walkRoot {
			st.Subagent += countTranscripts(path)
			return fs.SkipDir
		}
		if !strings.HasSuffix(name, ".jsonl") || path == walkRoot {
			return nil
		}
		var fi fs.FileInfo
		switch t := d.Type(); {
		case strings.HasPrefix(name, "agent-") && !t.IsDir():
			st.Subagent++
			return nil
		case t.IsDir(), t.IsRegular():
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
			files = append(files, file{path, fi.ModTime().UnixNano()})
		}
		if d.IsDir() {
			return fs.SkipDir
		}
		return nil
	})
	return files, err
}

// countTranscripts counts the *.jsonl entries below dir (a subagents
// folder, passed over); errors only make the count smaller.
func countTranscripts(dir string) int {
	n := 0
	filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(d.Name(), ".jsonl") {
			n++
		}
		return nil
	})
	return n
}
