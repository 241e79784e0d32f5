package filescan

import (
	"io/fs"
	"sync"

	"hist/lib/transcript"
)

// Keeper applies a transcript.Keep to the files a walk lists, from the
// walk's goroutines: at once when the Keep is ready (transcript.Ready),
// else the files wait until it is, or until Flush. Kept is called, under
// the Keeper's lock, for each file kept (every file when Keep is nil).
type Keeper struct {
	Keep transcript.Keep
	Kept func(path string, fi fs.FileInfo)

	mu      sync.Mutex
	ready   bool
	pending []pendingFile
}

type pendingFile struct {
	path string
	fi   fs.FileInfo
}

// Add passes a listed file, with what its stat found, to the Keep.
func (k *Keeper) Add(path string, fi fs.FileInfo) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.Keep == nil {
		k.Kept(path, fi)
		return
	}
	if !k.ready {
		if r, ok := k.Keep.(transcript.Ready); ok && !r.Ready() {
			k.pending = append(k.pending, pendingFile{path, fi})
			return
		}
		k.flush()
	}
	if k.Keep.Keep(path, fi) {
		k.Kept(path, fi)
	}
}

// Flush passes the files still waiting to the Keep; call it once the
// walk is over.
func (k *Keeper) Flush() {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.flush()
}

func (k *Keeper) flush() {
	k.ready = true
	for _, p := range k.pending {
		if k.Keep == nil || k.Keep.Keep(p.path, p.fi) {
			k.Kept(p.path, p.fi)
		}
	}
	k.pending = nil
}
