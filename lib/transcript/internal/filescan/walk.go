package filescan

import (
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"hist/lib/transcript"
)

// maxWalkers bounds the goroutines that walk the folders under a root.
const maxWalkers = 4

// WalkDir walks the tree at root as filepath.WalkDir does, calling fn for
// every file and folder in it, except that the folders directly under
// root are walked by several goroutines at once (listing a tree of many
// thousands of transcripts is mostly waiting for the kernel, one folder at
// a time); when root holds a single folder, the folders under that one
// (Codex's sessions/YYYY/MM/DD: a year, a month, then days), and so on. fn must be safe for concurrent use, and the order of the calls
// is root's entries in lexical order, then each subtree's in its own
// lexical order, subtrees interleaved. fn is called for root and its
// entries on the calling goroutine, so a SkipDir or SkipAll for them works
// as with filepath.WalkDir (except that a SkipDir for a file under root
// skips the rest of root's entries but not the folders before it); in a
// subtree, SkipAll skips the rest of that subtree only.
// The error returned is the first one fn returned, in no set order when
// several subtrees fail.
func WalkDir(root string, fn fs.WalkDirFunc) error {
	info, err := os.Lstat(root)
	if err != nil {
		err = fn(root, nil, err)
	} else {
		err = walkRoot(root, fs.FileInfoToDirEntry(info), fn, false)
	}
	if err == filepath.SkipDir || err == filepath.SkipAll {
		return nil
	}
	return err
}

// walkRoot walks root, whose own entry fn has seen already when seen is
// set.
func walkRoot(root string, d fs.DirEntry, fn fs.WalkDirFunc, seen bool) error {
	if !seen {
		if err := fn(root, d, nil); err != nil || !d.IsDir() {
			return err
		}
	}
	ents, err := os.ReadDir(root)
	if err != nil {
		if err = fn(root, d, err); err != nil {
			return err
		}
	}
	var subs []string
	var lone fs.DirEntry // the entry of subs[0]
	for _, e := range ents {
		path := filepath.Join(root, e.Name())
		err := fn(path, e, nil)
		if err == filepath.SkipDir {
			if e.IsDir() {
				continue
			}
			break // for a file: the rest of root's entries are skipped
		}
		if err != nil {
			return err
		}
		if e.IsDir() {
			subs = append(subs, path)
			lone = e
		}
	}
	if len(subs) == 1 {
		return walkRoot(subs[0], lone, fn, true)
	}
	workers := min(runtime.GOMAXPROCS(0), maxWalkers, len(subs))
	if workers < 2 {
		for _, sub := range subs {
			if err := walkSub(sub, fn); err != nil {
				return err
			}
		}
		return nil
	}
	var (
		mu    sync.Mutex
		first error
		next  int
		wg    sync.WaitGroup
	)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				if next >= len(subs) || first != nil {
					mu.Unlock()
					return
				}
				sub := subs[next]
				next++
				mu.Unlock()
				if err := walkSub(sub, fn); err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	return first
}

// walkSub walks the folder sub, whose own entry fn has seen already.
func walkSub(sub string, fn fs.WalkDirFunc) error {
	err := walkDir(sub, nil, func(path string, d fs.DirEntry, err error) error {
		if path == sub && err == nil {
			return nil // seen in root's listing
		}
		return fn(path, d, err)
	})
	if err == filepath.SkipDir || err == filepath.SkipAll {
		return nil
	}
	return err
}

// walkDir is filepath.WalkDir's walk, except that the entries it hands to
// fn take their Info from the folder they were listed in (fstatat), not
// by looking their whole path up again. d is nil for the folder a walk
// starts at, which is then lstat'ed.
func walkDir(path string, d fs.DirEntry, fn fs.WalkDirFunc) error {
	if d == nil {
		info, err := os.Lstat(path)
		if err != nil {
			return fn(path, nil, err)
		}
		d = fs.FileInfoToDirEntry(info)
	}
	if err := fn(path, d, nil); err != nil || !d.IsDir() {
		if err == filepath.SkipDir && d.IsDir() {
			err = nil
		}
		return err
	}
	f, err := os.Open(path)
	var ents []fs.DirEntry
	if err == nil {
		ents, err = f.ReadDir(-1)
		defer f.Close()
	}
	if err != nil {
		if err = fn(path, d, err); err != nil {
			if err == filepath.SkipDir && d.IsDir() {
				err = nil
			}
			return err
		}
	}
	slices.SortFunc(ents, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	for _, e := range ents {
		// path came from filepath.Join (walkRoot's), so it is clean and
		// joining by hand gives what Join would, without cleaning again.
		if err := walkDir(path+string(filepath.Separator)+e.Name(), atEntry{e, f}, fn); err != nil {
			if err == filepath.SkipDir {
				break
			}
			return err
		}
	}
	return nil
}

// atEntry is a folder entry whose Info is an fstatat in its open folder.
type atEntry struct {
	fs.DirEntry
	dir *os.File
}

func (e atEntry) Info() (fs.FileInfo, error) {
	var st unix.Stat_t
	name := e.Name()
	err := unix.Fstatat(int(e.dir.Fd()), name, &st, unix.AT_SYMLINK_NOFOLLOW)
	if err != nil {
		return nil, &fs.PathError{Op: "lstat", Path: filepath.Join(e.dir.Name(), name), Err: err}
	}
	return &statInfo{name, st}, nil
}

// statInfo is the fs.FileInfo of a unix.Stat_t. Its methods take a
// pointer, so that Sys hands out the Stat_t it holds instead of a copy
// made on the heap at each call.
type statInfo struct {
	name string
	st   unix.Stat_t
}

func (i *statInfo) Name() string       { return i.name }
func (i *statInfo) Size() int64        { return i.st.Size }
func (i *statInfo) ModTime() time.Time { return time.Unix(i.st.Mtim.Unix()) }
func (i *statInfo) IsDir() bool        { return i.Mode().IsDir() }
func (i *statInfo) Sys() any           { return &i.st }
func (i *statInfo) Mode() fs.FileMode {
	m := fs.FileMode(i.st.Mode & 0o777)
	switch i.st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
		m |= fs.ModeDir
	case unix.S_IFLNK:
		m |= fs.ModeSymlink
	case unix.S_IFIFO:
		m |= fs.ModeNamedPipe
	case unix.S_IFSOCK:
		m |= fs.ModeSocket
	case unix.S_IFCHR:
		m |= fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFBLK:
		m |= fs.ModeDevice
	}
	if i.st.Mode&unix.S_ISUID != 0 {
		m |= fs.ModeSetuid
	}
	if i.st.Mode&unix.S_ISGID != 0 {
		m |= fs.ModeSetgid
	}
	if i.st.Mode&unix.S_ISVTX != 0 {
		m |= fs.ModeSticky
	}
	return m
}

// Kept returns the paths that keep keeps (all of them when keep is nil),
// in their order. A path that cannot be stat'ed is kept: reading it
// reports the error.
func Kept(paths []string, keep transcript.Keep) []string {
	if keep == nil {
		return paths
	}
	out := paths[:0:0]
	for _, p := range paths {
		if fi, err := os.Stat(p); err != nil || keep.Keep(p, fi) {
			out = append(out, p)
		}
	}
	return out
}
