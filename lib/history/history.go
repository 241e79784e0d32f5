// Package history reads the visible history of a scope: every store file's
// records, each prompt once, none that a tombstone hides, newest first.
// A prompt shows at its newest copy's time and text, with the provenance
// (src, session, file and project) of its richest copy (see rank) within
// richerWindow of the newest one. Every file is read from its end and the
// files are merged on the records' timestamps, so the newest prompts come
// after a few kilobytes of each file, however large the store
// (docs/hist-pick.md, "How it works").
package history

import (
	"errors"
	"fmt"
	"io/fs"

	"hist/lib/record"
	"hist/lib/store"
	"hist/lib/tombstone"
	"hist/lib/words"
)

// Entry is one visible prompt: the newest copy's text and time, the
// richest copy's provenance.
type Entry struct {
	Text    string
	TS      int64
	Src     string
	Session string
	File    string // the store file the richest copy is in
	Project string // its project hash ("" for global files)
}

// FileError is a store file, or a folder of the scope, that could not
// be read.
type FileError struct {
	Path string
	Err  error
}

func (e FileError) Error() string { return fmt.Sprintf("%s: %s", e.Path, words.Describe(e.Err)) }

// Fix is the chmod that lets hist read it ("" when no chmod would).
func (e FileError) Fix() string { return words.Chmod(e.Path, e.Err) }

// Hint is "; let hist read it: <Fix>", or "" when no chmod would help:
// the end of a message that names e.
func (e FileError) Hint() string {
	if fix := e.Fix(); fix != "" {
		return "; let hist read it: " + fix
	}
	return ""
}

// vanished reports whether one of the failed files vanished (or was
// replaced) while it was read: a rewrite moved its prompts, and a read of
// the store once the rewrite is over finds them.
func vanished(failed []FileError) bool {
	for _, f := range failed {
		if errors.Is(f.Err, fs.ErrNotExist) {
			return true
		}
	}
	return false
}

// maxRank is the richest a copy gets (see rank).
const maxRank = 3

// rank is how much a copy tells of where its prompt came from: 3 with a
// project and an agent session, 2 with a project, 1 with a session only,
// 0 with neither.
func rank(src, session []byte, project string) int8 {
	var r int8
	if project != "" {
		r = 2
	}
	if len(src) > 0 && len(session) > 0 {
		r++
	}
	return r
}

// Result is the visible history of a set of files, read whole.
type Result struct {
	StreamResult
	entries []Entry
}

// Len is the number of visible prompts.
func (r *Result) Len() int { return len(r.entries) }

// At returns the i-th visible prompt, newest first.
func (r *Result) At(i int) Entry { return r.entries[i] }

// Read reads the visible history of files, as Stream sends it with
// Options.Hold. hidden may be nil (nothing is hidden). Files that cannot
// be read are listed in Result.Failed; the others are read whole.
func Read(files []store.File, hidden *tombstone.Set) *Result {
	res := &Result{}
	sr := streamFiles(files, hidden, seenSet{}, 0, Options{Hold: true}, func(e Entry) bool {
		res.entries = append(res.entries, e)
		return true
	})
	res.StreamResult = *sr
	return res
}

// Report says what the stream left out, through warnf and errorf: the
// malformed lines it skipped, and each file or folder it could not read,
// whose prompts are "not <done>" ("listed"); true when some could not be
// read.
func (r *StreamResult) Report(warnf, errorf func(format string, args ...any), done string) bool {
	if r.Stats.Malformed > 0 {
		warnf("skipped %s", words.Plural(r.Stats.Malformed, "malformed store line", "malformed store lines"))
	}
	for _, f := range r.Failed {
		errorf("could not read %v: its prompts are not %s%s", f, done, f.Hint())
	}
	return len(r.Failed) > 0
}

// StreamResult is what a stream saw.
type StreamResult struct {
	Stats   record.Stats
	Failed  []FileError // files that could not be read (or not to the end)
	Hidden  int         // prompts hidden by a tombstone (each counted once)
	Stopped bool        // the callback asked to stop
	sent    int         // prompts sent, by this stream and the ones it follows
}
