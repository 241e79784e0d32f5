// Package deletion removes every copy of a prompt from a scope of the store
// and tombstones it in hidden.json.
package deletion

import (
	"errors"

	"hist/lib/store"
)

// Outcome is the final state of a delete; it picks the notice shown to users.
type Outcome int

const (
	Clean            Outcome = iota // every copy removed, tombstone written
	NothingRemoved                  // failed before touching any file (no tombstone)
	PartlyHidden                    // some files could not be rewritten; tombstone written
	RemovedNotHidden                // copies removed, tombstone write failed
	Both                            // some files not rewritten and tombstone write failed
	Untrusted                       // hidden.json cannot be trusted: refused, nothing changed
)

// Notice is the spec's exact user notice for o ("" for Clean and Untrusted).
func (o Outcome) Notice() string {
	switch o {
	case NothingRemoved:
		return "Store delete failed; nothing was removed."
	case PartlyHidden:
		return "Some history files could not be rewritten; the prompt is hidden, but copies may remain on disk."
	case RemovedNotHidden:
		return "Deleted from the store, but hiding failed — the prompt may reappear from session transcripts."
	case Both:
		return "Some history files could not be rewritten and hiding failed — the prompt may reappear from those files or from session transcripts."
	}
	return ""
}

// Result reports what Delete did.
type Result struct {
	Outcome    Outcome
	Prompts    int      // prompts asked for
	Copies     int      // copies removed (or that would be, with DryRun)
	Rewritten  []string // files rewritten
	Failed     []error  // files that could not be read or rewritten
	Tombstones int      // tombstone entries written
	Err        error    // the error behind NothingRemoved/RemovedNotHidden/Both/Untrusted
}

// Options tune Delete.
type Options struct{ DryRun bool }

// Delete removes every copy of each prompt (by identity) in the scope's
// files, then tombstones them.
func Delete(st store.Store, sc store.Scope, prompts []string, opt Options) Result {
	return Result{Outcome: NothingRemoved, Prompts: len(prompts), Err: errors.New("not implemented yet")}
}
