package jsonscan

import (
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sync"
)

// maxWalkers bounds the goroutines that walk the folders under a root.
const maxWalkers = 4

// WalkDir walks the tree at root as filepath.WalkDir does, calling fn for
// every file and folder in it, except that the folders directly under
// root are walked by several goroutines at once (listing a tree of many
// thousands of transcripts is mostly waiting for the kernel, one folder at
// a time). fn must be safe for concurrent use, and the order of the calls
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
		err = walkRoot(root, fs.FileInfoToDirEntry(info), fn)
	}
	if err == filepath.SkipDir || err == filepath.SkipAll {
		return nil
	}
	return err
}

func walkRoot(root string, d fs.DirEntry, fn fs.WalkDirFunc) error {
	if err := fn(root, d, nil); err != nil || !d.IsDir() {
		return err
	}
	ents, err := os.ReadDir(root)
	if err != nil {
		if err = fn(root, d, err); err != nil {
			return err
		}
	}
	var subs []string
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
		}
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
	return filepath.WalkDir(sub, func(path string, d fs.DirEntry, err error) error {
		if path == sub && err == nil {
			return nil // seen in root's listing
		}
		return fn(path, d, err)
	})
}
