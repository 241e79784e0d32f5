package store

import (
	"os"
	"path/filepath"
)

// FileIDs are files' identities (os.SameFile), taken before they are
// read, so that Moved can tell whether a rewrite replaced one meanwhile.
type FileIDs []os.FileInfo

// IDs returns the files' identities (nil for a file that is gone).
func IDs(files []File) FileIDs {
	ids := make(FileIDs, len(files))
	for i, f := range files {
		ids[i], _ = os.Stat(f.Path)
	}
	return ids
}

// same reports whether a and b name the same files.
func (a FileIDs) same(b FileIDs) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if (a[i] == nil) != (b[i] == nil) || a[i] != nil && !os.SameFile(a[i], b[i]) {
			return false
		}
	}
	return true
}

// Moved says whether a rewrite (a delete, a compaction) may have moved
// prompts out of reach of a read of files (ids taken before it): a file
// vanished during the read or was replaced since, or the scope now holds
// a claim, carry or compact file that files did not list. Such a read is
// done again once the rewrite has ended.
func (s Store) Moved(sc Scope, files []File, ids FileIDs, vanished bool) bool {
	if vanished || !ids.same(IDs(files)) {
		return true
	}
	now, _ := s.Files(sc) // what a folder that cannot be listed holds is not read either
	had := make(map[string]bool, len(files))
	for _, f := range files {
		had[f.Path] = true
	}
	for _, f := range now {
		if had[f.Path] {
			continue
		}
		switch Classify(filepath.Base(f.Path)) {
		case Claim, Carry, Compact:
			return true
		}
	}
	return false
}
