package store

import (
	"path/filepath"
	"slices"
	"syscall"
)

// FileIDs are files' device and inode numbers, taken before they are
// read, so that Moved can tell whether a rewrite replaced one meanwhile.
type FileIDs []fileID

type fileID struct{ dev, ino uint64 }

// IDs returns the files' device and inode numbers (zero for a file that
// is gone).
func IDs(files []File) FileIDs {
	ids := make(FileIDs, len(files))
	for i, f := range files {
		var st syscall.Stat_t
		if syscall.Stat(f.Path, &st) == nil {
			ids[i] = fileID{uint64(st.Dev), uint64(st.Ino)}
		}
	}
	return ids
}

// Moved says whether a rewrite (a delete, a compaction) may have moved
// prompts out of reach of a read of files, whose ids were taken before
// the read: a file vanished during the read (vanished) or was replaced
// since, or the scope now holds a claim, carry or compact file that files
// did not list. Such a read is done again once the rewrite has ended.
func (s Store) Moved(sc Scope, files []File, ids FileIDs, vanished bool) bool {
	if vanished || !slices.Equal(ids, IDs(files)) {
		return true
	}
	now, err := s.Files(sc)
	if err != nil {
		return false
	}
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
