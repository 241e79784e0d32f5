package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"hist/lib/atomicfile"
)

// RenameFile in the config home holds "OLD NEW" while a rename of this
// machine is under way, so that the next RenameMachine finishes one cut
// short.
const RenameFile = "machine-rename"

// Renamed is what RenameMachine did.
type Renamed struct {
	From, To string
	Files    int      // files renamed
	Kept     []string // files left under the old id: their new name was taken (both are still read)
}

// RenameMachine gives this machine the id to (docs/sync.md), under the
// rewriters' lock the caller holds: it records the rename in RenameFile,
// writes machine-id (new captures use it from then on), renames every
// store file carrying the old id, and legacy-owner's id, then removes
// RenameFile. Each step is atomic; a failure leaves some files under the
// old id (still read, as another machine's) and the next RenameMachine
// finishes first. A file whose new name is taken gets a fresh name of its
// kind, or (the registry) is merged; tombstones, ledger and state then
// stay under the old id (Renamed.Kept).
func RenameMachine(root, configHome, to string) (Renamed, error) {
	if !ValidMachine(to) {
		return Renamed{}, fmt.Errorf("%q: %w", to, ErrBadMachine)
	}
	if from, pending, err := PendingRename(configHome); err != nil {
		return Renamed{}, err
	} else if from != "" {
		if _, err := renameAll(root, configHome, from, pending); err != nil {
			return Renamed{}, err
		}
	}
	from, err := readMachine(filepath.Join(configHome, MachineFile))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return Renamed{}, err
	}
	return renameAll(root, configHome, from, to)
}

// PendingRename is the rename of this machine that did not finish, if any.
func PendingRename(configHome string) (from, to string, err error) {
	path := filepath.Join(configHome, RenameFile)
	data, err := atomicfile.ReadRegular(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", "", nil
	}
	f := strings.Fields(string(data))
	if err == nil && (len(f) != 2 || !ValidMachine(f[0]) || !ValidMachine(f[1])) {
		err = fmt.Errorf("%s holds %q, not \"OLD NEW\": remove it, then run again", path, data)
	}
	if err != nil {
		return "", "", err
	}
	return f[0], f[1], nil
}

// renameAll renames from's files to to (from "" when the machine had no
// id yet: only the id is written).
func renameAll(root, configHome, from, to string) (Renamed, error) {
	r := Renamed{From: from, To: to}
	journal := filepath.Join(configHome, RenameFile)
	moving := from != "" && from != to
	if err := EnsureDir(configHome); err != nil {
		return r, err
	}
	if moving {
		if err := atomicfile.WriteBytes(journal, []byte(from+" "+to+"\n")); err != nil {
			return r, err
		}
	}
	if err := atomicfile.WriteBytes(filepath.Join(configHome, MachineFile), []byte(to+"\n")); err != nil || !moving {
		return r, err
	}
	// Twice: a capture that read the old id before it changed may have
	// made a file since the first pass.
	for range 2 {
		r.Kept = nil
		hashes, err := Store{Root: root}.ProjectHashes()
		if err != nil {
			return r, err
		}
		for i, dir := range append([]string{root}, hashes...) {
			if i > 0 {
				dir = filepath.Join(root, ProjectsDir, dir)
			}
			if err := r.renameIn(dir, i == 0); err != nil {
				return r, err
			}
		}
	}
	legacy := filepath.Join(root, LegacyOwnerName)
	if data, err := atomicfile.ReadRegular(legacy); err == nil && strings.TrimSpace(string(data)) == from {
		if err := atomicfile.WriteBytes(legacy, []byte(to+"\n")); err != nil {
			return r, err
		}
	}
	if err := os.Remove(journal); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return r, err
	}
	return r, atomicfile.SyncDir(configHome)
}

// renameIn renames the old id's files in dir: the store's root (atRoot)
// or a project's folder.
func (r *Renamed) renameIn(dir string, atRoot bool) error {
	ents, err := readDir(dir)
	if err != nil {
		return err
	}
	renamed := false
	for _, e := range ents {
		name := e.Name()
		i := strings.LastIndex(name, "@"+r.From+".")
		if i < 0 || atomicfile.IsTemp(name) || IsSyncthing(name) || MachineOf(name) != r.From {
			continue
		}
		to := name[:i] + "@" + r.To + name[i+1+len(r.From):]
		if err := r.move(dir, name, to, atRoot); err != nil {
			return fmt.Errorf("renaming %s: %w", filepath.Join(dir, name), err)
		}
		renamed = true
	}
	if renamed {
		return atomicfile.SyncDir(dir)
	}
	return nil
}

// move renames dir/name to dir/to, or when to is taken to a fresh name of
// its kind, or merges a registry; what it cannot place it leaves.
func (r *Renamed) move(dir, name, to string, atRoot bool) error {
	from := filepath.Join(dir, name)
	if taken(filepath.Join(dir, to)) {
		switch {
		case atRoot && isRegistry(name):
			m := Registry{}
			readRegistry(from, m)
			r.Files++
			if err := (Store{Root: dir, Machine: r.To}).RegisterAll(m); err != nil {
				return err
			}
			return os.Remove(from)
		case !atRoot:
			to = r.freshName(name)
		default:
			to = ""
		}
		if to == "" || taken(filepath.Join(dir, to)) {
			r.Kept = append(r.Kept, from)
			return nil
		}
	}
	r.Files++
	return os.Rename(from, filepath.Join(dir, to))
}

func taken(path string) bool {
	_, err := os.Lstat(path)
	return !errors.Is(err, fs.ErrNotExist)
}

// freshName is a new name under the new id for a project file whose
// renamed name is taken: a capture file's instance gets the old id added,
// a seed file becomes an import file; "" for the others.
func (r *Renamed) freshName(name string) string {
	stem := strings.TrimSuffix(name, "@"+r.From+".jsonl")
	switch Classify(name) {
	case Capture:
		if id := stem + "-" + r.From; stem != name && ValidInstance(id) {
			return CaptureFile(id, r.To)
		}
	case Seed:
		agent, ok := strings.CutPrefix(stem, "seed-")
		if !ok {
			agent = "pi"
		}
		return ImportFile(agent, r.To, time.Now().UnixMilli())
	}
	return ""
}
