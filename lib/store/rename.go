package store

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"hist/lib/atomicfile"
)

// RenameFile in the config home says a rename of this machine is under
// way: "OLD NEW". It is written before anything is renamed and removed
// once every file is, so that a rename cut short is finished by the next
// one (RenameMachine).
const RenameFile = "machine-rename"

// Renamed is what RenameMachine did.
type Renamed struct {
	From, To string
	Files    int      // files renamed
	Kept     []string // files left under the old id: their new name was taken (both are still read)
}

// RenameMachine gives this machine the id to; the caller holds the
// rewriters' lock (lib/lock, Store.Lock), so that no delete, compaction or
// import rewrites a file while it is renamed. It records the rename in configHome/machine-rename, writes to into
// configHome/machine-id (new captures use it from then on), renames every
// file of the store at root whose name carries the old id (the root's
// tombstones, registry, import ledger and state; each project's capture,
// seed, import, compact, carry and claim files, and Syncthing's conflict
// copies of them), puts to in legacy-owner when it named the old id, and
// removes machine-rename. Each step is atomic. A failure leaves some files
// under the old id and machine-rename in place: they stay readable (as
// another machine's), and the next RenameMachine, with any name, finishes
// that rename first. A file whose new name is taken gets a fresh name of
// its kind (a capture or import file) or, for the registry, is merged;
// the tombstones, ledger and state are then kept under the old id (all
// machines' tombstones are read; the ledger only avoids reading
// transcripts again).
func RenameMachine(root, configHome, to string) (Renamed, error) {
	if !ValidMachine(to) {
		return Renamed{}, fmt.Errorf("%q: %w", to, ErrBadMachine)
	}
	if pending, err := readRename(configHome); err != nil {
		return Renamed{}, err
	} else if pending.From != "" {
		if _, err := renameAll(root, configHome, pending.From, pending.To); err != nil {
			return Renamed{}, err
		}
	}
	from, err := readMachine(filepath.Join(configHome, MachineFile))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		from = ""
	case err != nil:
		return Renamed{}, err
	}
	return renameAll(root, configHome, from, to)
}

// readRename reads a rename that did not finish.
func readRename(configHome string) (Renamed, error) {
	data, err := atomicfile.ReadRegular(filepath.Join(configHome, RenameFile))
	if errors.Is(err, fs.ErrNotExist) {
		return Renamed{}, nil
	}
	if err != nil {
		return Renamed{}, err
	}
	f := strings.Fields(string(data))
	if len(f) != 2 || !ValidMachine(f[0]) || !ValidMachine(f[1]) {
		return Renamed{}, fmt.Errorf("%s holds %q, not \"OLD NEW\": remove it, then run again", filepath.Join(configHome, RenameFile), data)
	}
	return Renamed{From: f[0], To: f[1]}, nil
}

// PendingRename is the rename of this machine that did not finish, if any.
func PendingRename(configHome string) (from, to string) {
	r, _ := readRename(configHome)
	return r.From, r.To
}

// renameAll renames from's files to to (from "" when the machine had no
// id yet: only the id is written).
func renameAll(root, configHome, from, to string) (Renamed, error) {
	r := Renamed{From: from, To: to}
	journal := filepath.Join(configHome, RenameFile)
	if from != "" && from != to {
		if err := EnsureDir(configHome); err != nil {
			return r, err
		}
		if err := atomicfile.WriteBytes(journal, []byte(from+" "+to+"\n")); err != nil {
			return r, err
		}
	}
	if err := EnsureDir(configHome); err != nil {
		return r, err
	}
	if err := atomicfile.WriteBytes(filepath.Join(configHome, MachineFile), []byte(to+"\n")); err != nil {
		return r, err
	}
	if from == "" || from == to {
		return r, nil
	}
	// Twice: a capture that read the old id before it changed may have
	// made a file since the first pass.
	for range 2 {
		r.Kept = nil
		if err := r.pass(root); err != nil {
			return r, err
		}
	}
	if err := renameLegacyOwner(root, from, to); err != nil {
		return r, err
	}
	if err := os.Remove(journal); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return r, err
	}
	return r, atomicfile.SyncDir(configHome)
}

// pass renames the old id's files at the root and in every project.
func (r *Renamed) pass(root string) error {
	if err := r.renameIn(root, true); err != nil {
		return err
	}
	hashes, err := Store{Root: root}.ProjectHashes()
	if err != nil {
		return err
	}
	for _, h := range hashes {
		if err := r.renameIn(filepath.Join(root, ProjectsDir, h), false); err != nil {
			return err
		}
	}
	return nil
}

func (r *Renamed) renameIn(dir string, atRoot bool) error {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
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
		done, err := r.move(dir, name, to, atRoot)
		if err != nil {
			return fmt.Errorf("renaming %s: %w", filepath.Join(dir, name), err)
		}
		renamed = renamed || done
	}
	if renamed {
		return atomicfile.SyncDir(dir)
	}
	return nil
}

// move renames dir/name to dir/to, or, when to is taken, to a fresh name
// of the same kind, or merges a registry; what it cannot place it leaves.
func (r *Renamed) move(dir, name, to string, atRoot bool) (bool, error) {
	if _, err := os.Lstat(filepath.Join(dir, to)); errors.Is(err, fs.ErrNotExist) {
		r.Files++
		return true, os.Rename(filepath.Join(dir, name), filepath.Join(dir, to))
	}
	switch {
	case atRoot && strings.HasPrefix(name, "registry@") && strings.HasSuffix(name, ".json"):
		r.Files++
		return true, mergeRegistry(filepath.Join(dir, name), filepath.Join(dir, to))
	case !atRoot:
		if fresh := r.freshName(name); fresh != "" {
			if _, err := os.Lstat(filepath.Join(dir, fresh)); errors.Is(err, fs.ErrNotExist) {
				r.Files++
				return true, os.Rename(filepath.Join(dir, name), filepath.Join(dir, fresh))
			}
		}
	}
	r.Kept = append(r.Kept, filepath.Join(dir, name))
	return false, nil
}

// freshName is a new name, under the new id, for a project file whose
// renamed name is taken: a capture file gets its instance with the old id
// added, a seed file becomes an import file; "" for the others.
func (r *Renamed) freshName(name string) string {
	switch Classify(name) {
	case Capture:
		inst := strings.TrimSuffix(name, "@"+r.From+".jsonl")
		if id := inst + "-" + r.From; inst != name && ValidInstance(id) {
			return CaptureFile(id, r.To)
		}
	case Seed:
		agent := "pi"
		if a, ok := strings.CutPrefix(strings.TrimSuffix(name, "@"+r.From+".jsonl"), "seed-"); ok {
			agent = a
		}
		return ImportFile(agent, r.To, time.Now().UnixMilli())
	}
	return ""
}

// mergeRegistry puts the entries of the registry file from into to, then
// removes from.
func mergeRegistry(from, to string) error {
	m := Registry{}
	readRegistry(to, m)
	readRegistry(from, m)
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(m); err != nil {
		return err
	}
	if err := atomicfile.WriteBytes(to, buf.Bytes()); err != nil {
		return err
	}
	return os.Remove(from)
}

// renameLegacyOwner puts to in the root's legacy-owner when it names from.
func renameLegacyOwner(root, from, to string) error {
	path := filepath.Join(root, LegacyOwnerName)
	data, err := atomicfile.ReadRegular(path)
	if err != nil || strings.TrimSpace(string(data)) != from {
		return nil
	}
	return atomicfile.WriteBytes(path, []byte(to+"\n"))
}
