// Package store holds the layout of the prompt store and the rules that
// say which files belong to which scope and to which machine. Each machine
// writes only files carrying its id (machine.go). Every file name is built
// in names.go and read back by Classify. The layout itself is written
// once, in docs/store-format.md ("Files").
package store

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"

	"hist/lib/atomicfile"
	"hist/lib/envdir"
	"hist/lib/gitremote"
	"hist/lib/termsafe"
)

// File names at the store's root.
const (
	ProjectsDir  = "projects"
	GlobalName   = "history-global.jsonl"
	HiddenName   = "hidden.json"
	RegistryName = "registry.json"
	LockName     = ".rewrite.lock"
	SeedName     = "seed.jsonl"
	LedgerName   = "imports.ledger"
	StateName    = "imports.state"
)

// Store is a store folder, as seen by one machine.
type Store struct {
	Root string
	// Machine is this machine's id (MachineID), which the files it writes
	// carry in their names; "" (before machine ids): plain names, and
	// every file is its own.
	Machine string
}

// DefaultRoot is the store root: $PI_CODING_AGENT_DIR/history when the
// variable is set, else ~/.pi/agent/history.
func DefaultRoot(getenv func(string) string, home string) string {
	if d := getenv("PI_CODING_AGENT_DIR"); d != "" {
		return filepath.Join(envdir.Expand(strings.TrimSpace(d), home), "history")
	}
	return filepath.Join(home, ".pi", "agent", "history")
}

// DefaultConfigHome is the config home: $GENTLE_PI_CONFIG_HOME, else
// ~/.pi/gentle-ai.
func DefaultConfigHome(getenv func(string) string, home string) string {
	if d := getenv("GENTLE_PI_CONFIG_HOME"); d != "" {
		return envdir.Expand(strings.TrimSpace(d), home)
	}
	return filepath.Join(home, ".pi", "gentle-ai")
}

func (s Store) path(elem ...string) string {
	return filepath.Join(append([]string{s.Root}, elem...)...)
}

// Projects is the folder of every project's folder.
func (s Store) Projects() string { return s.path(ProjectsDir) }

// ProjectDir is one project's folder.
func (s Store) ProjectDir(hash string) string { return s.path(ProjectsDir, hash) }

// Global is history-global.jsonl.
func (s Store) Global() string { return s.path(GlobalName) }

// Hidden is this machine's tombstone file, hidden@<machine>.json (see
// OwnPath). Readers load every machine's (lib/tombstone); a delete writes
// only its own.
func (s Store) Hidden() string { return s.ownIn(s.Root, HiddenName, false) }

// Registry is this machine's registry file, registry@<machine>.json.
func (s Store) Registry() string { return s.path(Named(RegistryName, s.Machine)) }

// Ledger is this machine's import ledger (lib/ledger).
func (s Store) Ledger() string { return s.ownIn(s.Root, LedgerName, true) }

// State is this machine's import state (lib/ledger).
func (s Store) State() string { return s.ownIn(s.Root, StateName, true) }

// OwnPath is this machine's file named base (a plain name) in dir:
// base@<machine>; or, for the machine that owns the files without a
// machine id (OwnsLegacy; Ledger and State claim them, their callers
// write), base itself while only that one exists, so that an upgraded
// store keeps its tombstones, import ledger, state and seed files.
func (s Store) OwnPath(dir, base string) string { return s.ownIn(dir, base, false) }

func (s Store) ownIn(dir, base string, claim bool) string {
	mine := filepath.Join(dir, Named(base, s.Machine))
	if s.Machine == "" {
		return mine
	}
	if _, err := os.Lstat(mine); errors.Is(err, fs.ErrNotExist) {
		if _, err := os.Lstat(filepath.Join(dir, base)); err == nil && s.OwnsLegacy(claim) {
			return filepath.Join(dir, base)
		}
	}
	return mine
}

// Lock is the file rewriters lock.
func (s Store) Lock() string { return s.path(LockName) }

// Canonical is a project folder absolute and cleaned, symlinks resolved
// when it exists.
func Canonical(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		return real, nil
	}
	return filepath.Clean(abs), nil
}

// Hash is a project's hash: the first 16 hex characters of the SHA-256 of
// its canonical cwd.
func Hash(canonical string) string {
	sum := sha256.Sum256([]byte(canonical))
	return hex.EncodeToString(sum[:8])
}

// Kind is what a store file is.
type Kind int

const (
	NotStore   Kind = iota // not a store file (temp files, other names)
	Capture                // <id>.jsonl
	Seed                   // seed.jsonl, seed-<agent>.jsonl
	Import                 // import-<agent>-<ms>-<rand>.jsonl
	Compact                // compact-<ms>-<rand>.jsonl
	Carry                  // <name>.carry-<ms>-<rand>.jsonl
	Claim                  // <name>.gc-<ms>-<rand>.jsonl
	GlobalFile             // history-global.jsonl
)

// Classify says what kind of store file a base name is. A Syncthing
// conflict copy ("x.sync-conflict-<date>-<time>-<device>.jsonl") is the
// kind of the file it was made from; Syncthing's temp files
// (".syncthing.*.tmp") and folders (.stfolder, .stversions) are not store
// files.
func Classify(name string) Kind {
	name, _ = Unconflicted(name)
	if !strings.HasSuffix(name, ".jsonl") || strings.HasPrefix(name, ".") { // temp files too
		return NotStore
	}
	// The last suffix says what the file is now: a compaction's claim of
	// a carry file ("x.jsonl.carry-….jsonl.gc-….jsonl") is a claim.
	stem := strings.TrimSuffix(name, ".jsonl")
	ci, gi := strings.LastIndex(stem, ".carry-"), strings.LastIndex(stem, ".gc-")
	switch {
	case gi > 0 && gi > ci:
		return Claim
	case ci > 0:
		return Carry
	case IsGlobal(name):
		return GlobalFile
	case name == SeedName || strings.HasPrefix(name, "seed-") || strings.HasPrefix(name, "seed@"):
		return Seed
	case strings.HasPrefix(name, "import-"):
		return Import
	case strings.HasPrefix(name, "compact-"):
		return Compact
	}
	return Capture
}

// Origin returns the base name of the file a carry or claim file came
// from (the name itself for other files). Both spellings are understood:
// "<name>.jsonl.carry-<ms>-<rand>.jsonl" (so
// "history-global.jsonl.carry-*.jsonl" is part of the global scope) and
// "<stem>.carry-<ms>-<rand>.jsonl".
func Origin(name string) string {
	name, _ = Unconflicted(name)
	stem := strings.TrimSuffix(name, ".jsonl")
	cut := false
	for {
		i := max(strings.LastIndex(stem, ".carry-"), strings.LastIndex(stem, ".gc-"))
		if i <= 0 {
			if cut && strings.HasSuffix(stem, ".jsonl") {
				return stem
			}
			return stem + ".jsonl"
		}
		stem, cut = stem[:i], true
	}
}

// IsSeed reports whether a base name is a seed file or comes from one.
func IsSeed(name string) bool { return Classify(Origin(name)) == Seed }

// File is one store file of a scope.
type File struct {
	Path    string
	Project string // project hash, "" for global files
	Kind    Kind
}

// ProjectFiles lists every store file in a project's folder, sorted by
// name. A missing folder has none.
func (s Store) ProjectFiles(hash string) ([]File, error) {
	return list(s.ProjectDir(hash), hash, func(_ string, k Kind) bool { return k != GlobalFile })
}

// GlobalFiles lists history-global.jsonl (when present) and its carry and
// claim files.
func (s Store) GlobalFiles() ([]File, error) {
	return list(s.Root, "", func(name string, _ Kind) bool { return IsGlobal(Origin(name)) })
}

// list lists the store files in dir that keep takes.
func list(dir, hash string, keep func(string, Kind) bool) ([]File, error) {
	ents, err := readDir(dir)
	var out []File
	for _, e := range ents {
		if k := Classify(e.Name()); k != NotStore && keep(e.Name(), k) {
			out = append(out, File{Path: filepath.Join(dir, e.Name()), Project: hash, Kind: k})
		}
	}
	return out, err
}

// readDir is os.ReadDir, with nothing in a missing folder and nothing
// from one that cannot be read.
func readDir(dir string) ([]os.DirEntry, error) {
	ents, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	return ents, nil // none in a missing folder
}

// ProjectHashes lists the project folders, sorted.
func (s Store) ProjectHashes() ([]string, error) {
	ents, err := readDir(s.Projects())
	var out []string
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".") {
			continue
		}
		dir := e.IsDir()
		if e.Type()&fs.ModeSymlink != 0 {
			// A project folder may be a symbolic link to a folder (kept
			// on another disk): every scope follows it.
			fi, err := os.Stat(filepath.Join(s.Projects(), e.Name()))
			dir = err == nil && fi.IsDir()
		}
		if dir {
			out = append(out, e.Name())
		}
	}
	return out, err // sorted, as os.ReadDir lists
}

// Scope is what a reader or a delete covers: one project, or everything.
type Scope struct {
	All     bool
	Project string   // hash, when !All
	Also    []string // the project's other folders (ProjectOf, ProjectScope)
}

// ProjectOf returns the hash of the project at the canonical folder canon:
// of its repository's identity when it is in a git repository with a
// remote (the same repository at other paths or machines is one project:
// docs/sync.md), else of the folder. also holds the folder's own hash then:
// where its prompts went before, and go on a machine without the remote.
func ProjectOf(canon string) (hash string, also []string) {
	if id, ok := gitremote.Identity(canon); ok {
		return Hash(id), []string{Hash(canon)}
	}
	return Hash(canon), nil
}

// Files lists the store files of a scope. A folder that cannot be listed
// is left out and named in the error (errors.Join of *fs.PathError).
func (s Store) Files(sc Scope) ([]File, error) {
	hashes, err := s.hashes(sc)
	errs := []error{err}
	var out []File
	for _, h := range hashes {
		fs, err := s.ProjectFiles(h)
		errs = append(errs, err)
		out = append(out, fs...)
	}
	if sc.All {
		g, err := s.GlobalFiles()
		errs = append(errs, err)
		out = append(out, g...)
	}
	return out, errors.Join(errs...)
}

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

// hashes are the projects of a scope.
func (s Store) hashes(sc Scope) ([]string, error) {
	if sc.All {
		return s.ProjectHashes()
	}
	return append([]string{sc.Project}, sc.Also...), nil
}

// EnsureDir creates dir and its parents with the store's folder mode.
func EnsureDir(dir string) error { return os.MkdirAll(dir, atomicfile.DirPerm) }

// Open opens a store file for reading, refusing what is not a regular file:
// the open does not block on a FIFO put in a store file's place, which
// would hold a reader forever, and a folder is "not a regular file" too.
func Open(path string) (*os.File, error) {
	f, err := atomicfile.OpenRegular(path)
	if errors.Is(err, syscall.EISDIR) {
		err = &fs.PathError{Op: "read", Path: path, Err: atomicfile.ErrNotRegular}
	}
	return f, err
}

// Warnings go to WarnTo (stderr; tests change it).
var WarnTo io.Writer = os.Stderr

var warned sync.Map

// Warn says on stderr, once per key in a process, what a command works
// around in the store (a peer file over its size limit, skipped), as
// "<command>: warning: …", escaped on a terminal (termsafe).
func Warn(key, format string, args ...any) {
	if _, done := warned.LoadOrStore(key, true); done {
		return
	}
	fmt.Fprintf(WarnTo, "%s: warning: %s\n", filepath.Base(os.Args[0]), termsafe.Message(WarnTo, fmt.Sprintf(format, args...)))
}
