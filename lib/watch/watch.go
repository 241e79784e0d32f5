// Package watch tells when files under a few folders change: by fsnotify
// where it can watch (new subfolders included), else by walking the folder
// every Every and comparing each file's size and modification time (the
// inotify watch limit, too many open files for kqueue). A folder that does
// not exist yet, or was replaced, is looked at every Every, and watched
// once there (a change). The watches are fsnotify's alone: a folder removed
// takes its watch with it, so memory stays bounded.
package watch

import (
	"errors"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/fsnotify/fsnotify"
)

// Root is a folder to watch (or a single file).
type Root struct {
	Path string
	Flat bool // only the folder's own entries, not its subfolders'
}

// Every is how often a polled root is walked, and a missing one looked for.
const Every = 2 * time.Second

// Changes are reported settle after the last event, at most most after the
// first.
const (
	settle = 400 * time.Millisecond
	most   = 2 * time.Second
)

// Knobs for the package's tests.
var (
	pollEvery = Every
	addWatch  = func(w *fsnotify.Watcher, path string) error { return w.Add(path) }
)

// Watcher reports changes on C.
type Watcher struct {
	C      <-chan struct{} // a value once changes settled, standing for all since
	c      chan struct{}
	fw     *fsnotify.Watcher // nil: every root is polled
	why    string            // why fw is nil
	skip   string
	notice func(paths []string, why string) // told once per cause which roots are polled, and why
	roots  []*root
	stop   chan struct{}
	done   chan struct{}

	pending bool
	first   time.Time
	timer   *time.Timer
}

type mode int

const (
	watching mode = iota
	polling
	missing
)

type root struct {
	Root
	real string      // Path with symbolic links resolved, as events name it
	id   os.FileInfo // watching: the folder watched (a new one replaced it when it differs)
	mode mode
	walk map[string]stamp // polling: the last walk
}

// stamp is a polled file's size and modification time.
type stamp struct{ size, mtime int64 }

// Start watches roots; skip is a folder left out wherever it lies (the
// store, which the import writes). notice (never nil) is told which roots
// are polled, and why.
func Start(roots []Root, skip string, notice func(paths []string, why string)) *Watcher {
	c := make(chan struct{}, 1)
	w := &Watcher{C: c, c: c, skip: resolve(skip), notice: notice,
		stop: make(chan struct{}), done: make(chan struct{}), timer: time.NewTimer(time.Hour)}
	w.timer.Stop()
	var err error
	if w.fw, err = fsnotify.NewWatcher(); err != nil {
		w.fw, w.why = nil, reason(err)
	}
	var absent []string
	for _, r := range roots {
		rt := &root{Root: r}
		w.roots = append(w.roots, rt)
		if _, err := os.Stat(r.Path); errors.Is(err, fs.ErrNotExist) {
			rt.mode = missing
			absent = append(absent, r.Path)
			continue
		}
		w.begin(rt)
	}
	if len(absent) > 0 {
		notice(absent, "not there yet: looked for every "+Every.String())
	}
	go w.loop()
	return w
}

// Close stops watching.
func (w *Watcher) Close() {
	close(w.stop)
	<-w.done
}

// begin watches r, or polls it when it cannot be watched.
func (w *Watcher) begin(r *root) {
	r.real = resolve(r.Path)
	if w.fw == nil {
		w.poll(r, w.why)
		return
	}
	r.mode = watching
	r.id, _ = os.Stat(r.Path)
	if err := w.addTree(r, r.real); err != nil {
		w.poll(r, reason(err))
	}
}

// unwatch removes the watches under r.
func (w *Watcher) unwatch(r *root) {
	for _, p := range w.fw.WatchList() {
		if under(p, r.real) {
			w.fw.Remove(p)
		}
	}
}

// under reports whether p is dir or lies under it.
func under(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, dir+string(filepath.Separator))
}

// addTree watches dir and, unless r is flat, every folder under it.
func (w *Watcher) addTree(r *root, dir string) error {
	switch {
	case dir == w.skip:
		return nil
	case r.Flat:
		return w.add(dir)
	}
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return nil // gone, or unreadable: the import says so
		case p == w.skip:
			return filepath.SkipDir
		case p != dir && !d.IsDir():
			return nil
		}
		return w.add(p)
	})
}

func (w *Watcher) add(p string) error {
	if err := addWatch(w.fw, p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// poll makes r polled, and says why.
func (w *Watcher) poll(r *root, why string) {
	if w.fw != nil {
		w.unwatch(r)
	}
	r.mode = polling
	r.walk = w.stamps(r)
	w.notice([]string{r.Path}, "polled every "+Every.String()+": "+why)
}

// reason says why a watch could not be added.
func reason(err error) string {
	switch {
	case errors.Is(err, syscall.ENOSPC):
		return "the inotify watch limit is reached (raise fs.inotify.max_user_watches)"
	case errors.Is(err, syscall.EMFILE), errors.Is(err, syscall.ENFILE):
		return "too many open files to watch it"
	}
	return err.Error()
}

// resolve is p with symbolic links resolved, or p when that fails.
func resolve(p string) string {
	if q, err := filepath.EvalSymlinks(p); err == nil {
		return q
	}
	return p
}

// stamps walks r and returns each file's size and modification time.
func (w *Watcher) stamps(r *root) map[string]stamp {
	out := map[string]stamp{}
	filepath.WalkDir(r.real, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() {
			if p == w.skip || (r.Flat && p != r.real) {
				return filepath.SkipDir
			}
			return nil
		}
		if fi, err := d.Info(); err == nil {
			out[p] = stamp{fi.Size(), fi.ModTime().UnixNano()}
		}
		return nil
	})
	return out
}

func (w *Watcher) loop() {
	defer close(w.done)
	var events chan fsnotify.Event
	var errs chan error
	if w.fw != nil {
		defer w.fw.Close()
		events, errs = w.fw.Events, w.fw.Errors
	}
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	for {
		select {
		case <-w.stop:
			return
		case ev, ok := <-events:
			if !ok {
				events = nil
				continue
			}
			if ev.Op == fsnotify.Chmod {
				continue
			}
			if r := w.owner(ev.Name); r != nil && ev.Has(fsnotify.Create) && !r.Flat {
				if fi, err := os.Stat(ev.Name); err == nil && fi.IsDir() {
					if err := w.addTree(r, ev.Name); err != nil {
						w.poll(r, reason(err))
					}
				}
			}
			w.changed()
		case _, ok := <-errs:
			if !ok {
				errs = nil
				continue
			}
			w.changed() // events were lost (a queue overflow): look again
		case <-tick.C:
			if w.check() {
				w.fire()
			}
		case <-w.timer.C:
			w.fire()
		}
	}
}

// check looks at the roots; it returns whether any changed.
func (w *Watcher) check() bool {
	changed := false
	for _, r := range w.roots {
		switch r.mode {
		case missing:
			if _, err := os.Stat(r.Path); err == nil {
				w.begin(r)
				changed = true
			}
		case polling:
			now := w.stamps(r)
			changed = changed || !maps.Equal(now, r.walk)
			r.walk = now
		case watching:
			fi, err := os.Stat(r.Path)
			switch {
			case errors.Is(err, fs.ErrNotExist):
				w.unwatch(r)
				r.mode = missing
			case err == nil && (r.id != nil && !os.SameFile(fi, r.id) || !slices.Contains(w.fw.WatchList(), r.real)):
				// Replaced, or its watch lost (the old folder's removal
				// may be told after the new one's watch was added).
				w.unwatch(r)
				w.begin(r)
				changed = true
			}
		}
	}
	return changed
}

// owner is the watched root path p lies under.
func (w *Watcher) owner(p string) *root {
	for _, r := range w.roots {
		if r.mode == watching && under(p, r.real) {
			return r
		}
	}
	return nil
}

// changed notes an event: C is told settle after the last one, or most
// after the first.
func (w *Watcher) changed() {
	now := time.Now()
	if !w.pending {
		w.pending, w.first = true, now
	}
	w.timer.Reset(min(settle, w.first.Add(most).Sub(now)))
}

func (w *Watcher) fire() {
	w.pending = false
	w.timer.Stop()
	select {
	case w.c <- struct{}{}:
	default:
	}
}
