package history

import (
	"errors"
	"io/fs"
	"time"

	"hist/lib/lock"
	"hist/lib/store"
	"hist/lib/tombstone"
)

// settleWait bounds how long a stream waits for rewrites that run while
// it reads, and maxReads how many times it reads the scope.
const (
	settleWait = 3 * time.Second
	maxReads   = 20
)

// afterList, when set (by tests), runs between the listing of a scope's
// files and their reading.
var afterList func()

// Stream sends the visible prompts of a scope of st to fn, newest first,
// each once, none that hidden hides (hidden may be nil); fn returning
// false stops it.
//
// A delete or a compaction running meanwhile may move prompts out of a
// file before it is read (a capture file renamed to a claim, a claim
// removed once its compact file is committed). So the stream starts once
// no rewrite holds the store's lock, and when one ran while it read, it
// reads the scope again once it has ended, with hidden.json read again
// (it stops if the file cannot be trusted), and sends the prompts it had
// missed, for settleWait at most in all. The result is the last read's: a
// folder that cannot be listed is one of its Failed, and the rest is read.
func Stream(st store.Store, sc store.Scope, hidden *tombstone.Set, opt Options, fn func(Entry) bool) *StreamResult {
	seen := seenSet{}
	sent := 0
	deadline := time.Now().Add(settleWait)
	for try := 1; ; try++ {
		lock.WaitFree(st.Lock(), deadline)
		files, listErr := st.Files(sc)
		ids := store.IDs(files)
		if afterList != nil {
			afterList()
		}
		res := streamFiles(files, hidden, seen, sent, opt, fn)
		res.Failed = append(folderErrors(listErr), res.Failed...)
		sent = res.sent
		if res.Stopped || try == maxReads || time.Now().After(deadline) ||
			!lock.Held(st.Lock()) && !st.Moved(sc, files, ids, vanished(res.Failed)) {
			return res
		}
		var err error
		if hidden, err = tombstone.Load(st.Hidden()); err != nil {
			return res // its failures name the files it could not read
		}
	}
}

// folderErrors are the folders that store.Files could not list, from its
// error.
func folderErrors(err error) []FileError {
	if err == nil {
		return nil
	}
	errs := []error{err}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	}
	out := make([]FileError, len(errs))
	for i, e := range errs {
		out[i] = FileError{Err: e}
		var pe *fs.PathError
		if errors.As(e, &pe) {
			out[i] = FileError{Path: pe.Path, Err: pe.Err}
		}
	}
	return out
}
