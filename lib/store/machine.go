package store

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"hist/lib/atomicfile"
)

// A store shared between machines (docs/store-format.md, "One store on
// several machines") has one writer per file: every file a machine writes
// carries the machine's id in its name, "<stem>@<machine>.<ext>".
const (
	MachineEnv      = "HIST_MACHINE" // names this machine before its first write (MachineID)
	MachineFile     = "machine-id"   // the machine id's file in the config home
	LegacyOwnerName = "legacy-owner" // at the root: the machine that may rewrite the files without an id
)

// ValidMachine reports whether id can be a machine id: 1 to 32 letters,
// digits, '-' and '_'.
func ValidMachine(id string) bool {
	return id != "" && len(id) <= 32 && strings.Trim(id, machineChars) == ""
}

const machineChars = "-_0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"

// ErrBadMachine says HIST_MACHINE holds a value that cannot be a machine id.
var ErrBadMachine = errors.New("not a machine id")

// MismatchError says HIST_MACHINE differs from the id recorded at the
// machine's first write: taking it would split its history in two.
type MismatchError struct {
	Env      string // HIST_MACHINE's value
	Recorded string // the id in Path
	Path     string // the machine-id file
}

func (e *MismatchError) Error() string {
	return fmt.Sprintf("%s=%s differs from this machine's id %s (recorded in %s at its first write)", MachineEnv, e.Env, e.Recorded, e.Path)
}

// MachineID is this machine's id, fixed at its first write in
// configHome/machine-id. When that file is missing, create makes it with
// HIST_MACHINE, else 8 random hex digits; without create it is
// fs.ErrNotExist, or HIST_MACHINE when set (the id the first write will
// record). A HIST_MACHINE other than the recorded id returns the recorded
// id with a *MismatchError. Concurrent first runs agree: the file appears
// whole, never over another's (WriteNew), and the losers read the winner's.
func MachineID(getenv func(string) string, configHome string, create bool) (string, error) {
	env := getenv(MachineEnv)
	if env != "" && !ValidMachine(env) {
		return "", fmt.Errorf("%s=%q: %w", MachineEnv, env, ErrBadMachine)
	}
	path := filepath.Join(configHome, MachineFile)
	id, err := readMachine(path)
	switch {
	case !errors.Is(err, fs.ErrNotExist):
	case create:
		id = cmp.Or(env, atomicfile.RandHex(4))
		if err = EnsureDir(configHome); err == nil {
			if err = atomicfile.WriteNew(path, []byte(id+"\n")); errors.Is(err, fs.ErrExist) {
				id, err = readMachine(path)
			}
		}
	case env != "":
		return env, nil
	}
	if err != nil {
		return "", err
	}
	if env != "" && env != id {
		return id, &MismatchError{Env: env, Recorded: id, Path: path}
	}
	return id, nil
}

func readMachine(path string) (string, error) {
	data, err := atomicfile.ReadRegular(path)
	if err != nil {
		return "", err
	}
	id := strings.TrimSpace(string(data))
	if !ValidMachine(id) {
		return "", fmt.Errorf("%s holds %q, not a machine id", path, id)
	}
	return id, nil
}

// conflictMark starts the part Syncthing adds to the name of the losing
// copy of a conflict, before the extension:
// ".sync-conflict-YYYYMMDD-HHMMSS-DEVICE" (DEVICE: 7 of [A-Z0-9]).
const conflictMark = ".sync-conflict-"

var conflictPart = regexp.MustCompile(`^\.sync-conflict-[0-9]{8}-[0-9]{6}-[A-Z0-9]{7}`)

// Unconflicted is the name of the file a Syncthing conflict copy was made
// from (name itself for other names), and whether name is one.
func Unconflicted(name string) (string, bool) {
	if i := strings.LastIndex(name, conflictMark); i >= 0 {
		if m := conflictPart.FindStringIndex(name[i:]); m != nil {
			return name[:i] + name[i+m[1]:], true
		}
	}
	return name, false
}

// Named is base ("x.jsonl", "hidden.json") with machine's id before its
// extension: "x@m.jsonl"; base itself when machine is "".
func Named(base, machine string) string {
	if machine == "" {
		return base
	}
	ext := filepath.Ext(base)
	return strings.TrimSuffix(base, ext) + "@" + machine + ext
}

// MachineOf is the machine id a store file's base name carries ("" for
// none). Conflict copies, carry and claim files belong to their origin.
func MachineOf(name string) string {
	stem, _ := Unconflicted(name)
	if strings.HasSuffix(stem, ".jsonl") {
		stem = Origin(stem)
	}
	stem = stem[:len(stem)-len(filepath.Ext(stem))]
	i := strings.LastIndexByte(stem, '@')
	if i < 0 || !ValidMachine(stem[i+1:]) {
		return ""
	}
	return stem[i+1:]
}

// Owns reports whether this store's machine may rewrite the file with
// base name name: its own files, and those without a machine id when
// legacy (OwnsLegacy). A store without a machine owns every file.
func (s Store) Owns(name string, legacy bool) bool {
	m := MachineOf(name)
	return s.Machine == "" || m == s.Machine || m == "" && legacy
}

// OwnsLegacy reports whether this machine may rewrite the files whose
// names carry no machine id: the one named in legacy-owner. Without
// legacy-owner it may when the root shows no other machine's files, and a
// rewriter (claim, under the rewriters' lock) claims them by creating
// legacy-owner. Otherwise nobody rewrites them (they stay readable, and
// tombstones hide what they hold) until a user names a machine there.
func (s Store) OwnsLegacy(claim bool) bool {
	if s.Machine == "" {
		return true
	}
	path := s.path(LegacyOwnerName)
	if data, err := atomicfile.ReadRegular(path); !errors.Is(err, fs.ErrNotExist) {
		return err == nil && strings.TrimSpace(string(data)) == s.Machine
	}
	ents, _ := os.ReadDir(s.Root)
	for _, e := range ents { // another machine's tombstones, registry or imports
		name, _ := Unconflicted(e.Name())
		m := MachineOf(name)
		if m != "" && m != s.Machine && (strings.HasPrefix(name, "hidden@") || strings.HasPrefix(name, "registry@") || strings.HasPrefix(name, "imports@")) {
			return false
		}
	}
	if !claim {
		return true
	}
	if EnsureDir(s.Root) != nil {
		return false
	}
	err := atomicfile.WriteNew(path, []byte(s.Machine+"\n"))
	if errors.Is(err, fs.ErrExist) {
		return s.OwnsLegacy(false) // another rewriter claimed first
	}
	return err == nil
}

// TempOrigin is the base name of the file a temp file of lib/atomicfile
// (".<name>.tmp-<pid>-<rand>") was to replace, so that a sweep of stale
// temp files touches only its own machine's (another's pid means nothing).
func TempOrigin(name string) string {
	if i := strings.LastIndex(name, ".tmp-"); i > 1 && name[0] == '.' {
		return name[1:i]
	}
	return name
}

// Pulling reports whether the scope's folders hold a fresh temp file of
// Syncthing's: while it replaces a file (the old one removed before the
// temp file is renamed into place) the file is missing for an instant.
func (s Store) Pulling(sc Scope) bool {
	hashes, _ := s.hashes(sc)
	dirs := []string{s.Root}
	for _, h := range hashes {
		dirs = append(dirs, s.ProjectDir(h))
	}
	for _, dir := range dirs {
		ents, _ := os.ReadDir(dir)
		for _, e := range ents {
			if n := e.Name(); strings.HasPrefix(n, ".syncthing.") && IsSyncthing(n) && SyncTempFresh(e) {
				return true
			}
		}
	}
	return false
}

// IsSyncthing reports whether a base name is one of Syncthing's own files
// or folders (.stfolder, .stignore, .stversions, ".syncthing.<name>.tmp"):
// never store content, never reported.
func IsSyncthing(name string) bool {
	switch name {
	case ".stfolder", ".stignore", ".stversions":
		return true
	}
	return strings.HasPrefix(name, ".syncthing.") && strings.HasSuffix(name, ".tmp")
}

// SyncTempAge is how long a temp file of Syncthing's says that Syncthing
// is writing its file: an older one is from a transfer that stopped.
const SyncTempAge = time.Minute

// SyncTempFresh reports whether e, a temp file of Syncthing's, changed
// less than SyncTempAge ago, or is gone already (renamed into place).
func SyncTempFresh(e os.DirEntry) bool {
	fi, err := e.Info()
	return err != nil || time.Since(fi.ModTime()) < SyncTempAge
}
