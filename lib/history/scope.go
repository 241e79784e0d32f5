package history

import (
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
// false stops it. Without Options it sends each prompt at its newest copy
// met, with that copy's provenance.
//
// A delete or a compaction running meanwhile may move prompts out of a
// file before it is read (a capture file renamed to a claim, a claim
// removed once its compact file is committed, lines that reached a
// rewritten file's old inode put back after the rename). So the stream
// starts once no rewrite holds the store's lock, and when one ran while
// it read, it reads the scope again once the rewrite has ended, with
// hidden.json read again (a prompt deleted meanwhile stays hidden; when
// the file cannot be trusted, it stops there), and sends the prompts it
// had missed. It waits settleWait at most in all. The result is the last
// read's; the error is a listing of the scope's files that failed.
func Stream(st store.Store, sc store.Scope, hidden *tombstone.Set, opt Options, fn func(Entry) bool) (*StreamResult, error) {
	seen := seenSet{}
	sent := 0
	deadline := time.Now().Add(settleWait)
	for try := 1; ; try++ {
		lock.WaitFree(st.Lock(), deadline)
		files, err := st.Files(sc)
		if err != nil {
			return nil, err
		}
		ids := store.IDs(files)
		if afterList != nil {
			afterList()
		}
		res := streamFiles(files, hidden, seen, sent, opt, fn)
		sent = res.sent
		if res.Stopped || try == maxReads || time.Now().After(deadline) ||
			!lock.Held(st.Lock()) && !st.Moved(sc, files, ids, vanished(res.Failed)) {
			return res, nil
		}
		if hidden, err = tombstone.Load(st.Hidden()); err != nil {
			return res, nil // its failures name the files it could not read
		}
	}
}
