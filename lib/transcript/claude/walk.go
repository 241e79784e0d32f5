package claude

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"hist/lib/transcript"
	"hist/lib/transcript/internal/filescan"
)

// file is one transcript to read, with its modification time for ordering
// and its size (-1 for a folder named like a transcript, whose read fails).
type file struct {
	path  string
	mtime int64
	size  int64
}

// listFiles returns the transcript files under root (or root itself when it
// is not a directory), and counts what it passes over in st: subagent
// transcripts (every *.jsonl under a "subagents" folder, and agent-*.jsonl
// files) in Subagent, files that are not regular in Skipped. A missing root yields nothing.
// Directories named like a transcript are returned too, so that reading
// them reports the error.
func listFiles(root string, keep transcript.Keep, st *transcript.Stats) ([]file, error) {
	info, err := os.Stat(root)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, &transcript.ReadError{Path: root, Err: err}
	}
	if !info.IsDir() {
		if keep != nil && !keep.Keep(root, info) {
			return nil, nil
		}
		return []file{{root, info.ModTime().UnixNano(), regularSize(info)}}, nil
	}
	walkRoot := root
	if li, err := os.Lstat(root); err == nil && li.Mode()&fs.ModeSymlink != 0 {
		if walkRoot, err = filepath.EvalSymlinks(root); err != nil {
			return nil, &transcript.ReadError{Path: root, Err: err}
		}
	}
	// The project folders are listed at once (each file's time is an
	// lstat). keep is asked once the walk is over: it may wait for the
	// import state, which is read meanwhile. The files are sorted
	// afterwards.
	type entry struct {
		path string
		fi   fs.FileInfo
	}
	var mu sync.Mutex
	var listed []entry
	list := func(path string, fi fs.FileInfo) {
		mu.Lock()
		listed = append(listed, entry{path, fi})
		mu.Unlock()
	}
	count := func(n *int, k int) {
		mu.Lock()
		*n += k
		mu.Unlock()
	}
	add := func(path string, d fs.DirEntry) error {
		fi, err := d.Info()
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return &transcript.ReadError{Path: path, Err: err}
		}
		list(path, fi)
		return nil
	}
	err = filescan.WalkDir(walkRoot, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && path != walkRoot {
				return nil // removed while we walked
			}
			return &transcript.ReadError{Path: path, Err: err}
		}
		name := d.Name()
		if d.IsDir() && name == "subagents" && path != walkRoot {
			count(&st.Subagent, countTranscripts(path))
			return fs.SkipDir
		}
		if !strings.HasSuffix(name, ".jsonl") {
			return nil
		}
		switch t := d.Type(); {
		case t.IsDir():
			if path == walkRoot {
				return nil
			}
			if err := add(path, d); err != nil {
				return err
			}
			return fs.SkipDir
		case strings.HasPrefix(name, "agent-"):
			count(&st.Subagent, 1)
		case t.IsRegular():
			return add(path, d)
		case t&fs.ModeSymlink != 0:
			if fi, err := os.Stat(path); err == nil && fi.Mode().IsRegular() {
				list(path, fi)
			} else {
				count(&st.Skipped, 1)
			}
		default:
			count(&st.Skipped, 1) // a FIFO, socket or device: reading could block
		}
		return nil
	})
	var files []file
	for _, e := range listed {
		if keep == nil || keep.Keep(e.path, e.fi) {
			files = append(files, file{e.path, e.fi.ModTime().UnixNano(), regularSize(e.fi)})
		}
	}
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

// regularSize is a regular file's size, or -1 (the reader then checks
// what it opened).
func regularSize(fi fs.FileInfo) int64 {
	if fi.Mode().IsRegular() {
		return fi.Size()
	}
	return -1
}
