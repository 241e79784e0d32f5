package seed

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"hist/lib/atomicfile"
	"hist/lib/identity"
	"hist/lib/lock"
	"hist/lib/record"
	"hist/lib/redact"
	"hist/lib/store"
	"hist/lib/tombstone"
	"hist/lib/transcript"
)

// The legacy migration's files, beside the global files: the folder held
// while it runs, and the record of the files migrated (MigratedPath).
const (
	MigrationLockName = store.GlobalName + ".migration-lock"
	MigratedName      = "history-global.migrated.json"
	migratedSchema    = "hist.legacy-migration/v1"
)

// MigratedPath is this machine's migration record (the machine that owns
// the files without a machine id keeps history-global.migrated.json).
func MigratedPath(st store.Store) string { return st.OwnPath(st.Root, MigratedName) }

// globalPath is this machine's global file, that its migration appends to.
func globalPath(st store.Store) string { return st.OwnPath(st.Root, store.GlobalName) }

// LegacySource is one agent's prompt-recall file.
type LegacySource struct {
	Name string // "claude", "codex", "opencode", "cursor"
	Path string
	// Scan reads the file at path whole and emits each prompt; an I/O
	// error is a *transcript.ReadError.
	Scan func(path string, emit func(transcript.Prompt) error) (transcript.Stats, error)
}

// Legacy source statuses.
const (
	LegacyMigrated = "migrated" // read whole now; its prompts were added
	LegacyWould    = "would"    // --dry-run: it would be migrated
	LegacyDone     = "done"     // migrated by an earlier run: not read again
	LegacyMissing  = "missing"  // no such file (yet): looked for again next run
	LegacyRetry    = "retry"    // could not be read: retried next run
	LegacySkipped  = "skipped"  // not a regular file, or the migration did not run
	LegacyFailed   = "failed"   // history-global.jsonl could not be written
	LegacyWaiting  = "waiting"  // hidden.json cannot be trusted
)

// LegacyResult is what the migration did with one source (an entry of
// the migration's "sources" in hist-seed --json).
type LegacyResult struct {
	Name      string `json:"source"`
	Path      string `json:"path"`
	Status    string `json:"status"`
	Read      int    `json:"read"`          // prompts read
	Added     int    `json:"added"`         // records appended to the global file
	Hidden    int    `json:"hidden"`        // prompts hidden by hidden.json, left out
	Dupes     int    `json:"already_there"` // prompts a global file holds already (same text and time), left out
	Malformed int    `json:"malformed"`     // lines skipped
	Err       string `json:"error,omitempty"`
}

// MigrationReport is what the legacy migration did (the "migration" of
// hist-seed --json).
type MigrationReport struct {
	Global string `json:"-"` // this machine's global file
	// LockHeld names the lock folder when it was there already (a process
	// died holding it, or a migration is running): the migration was
	// skipped. Untrusted (hidden.json cannot be trusted) and Busy (the
	// store's lock stayed held) say why nothing was migrated.
	LockHeld  string         `json:"lock_held,omitempty"`
	Untrusted string         `json:"untrusted,omitempty"`
	Busy      string         `json:"busy,omitempty"`
	Sources   []LegacyResult `json:"sources"`
}

// Migrated is one entry of history-global.migrated.json.
type Migrated struct {
	Path     string    `json:"path"`
	Size     int64     `json:"size"`
	ModTime  time.Time `json:"mtime"`
	Migrated time.Time `json:"migrated"`
	Prompts  int       `json:"prompts"`
}

type migratedFile struct {
	Schema  string              `json:"schema"`
	Sources map[string]Migrated `json:"sources"`
}

// LoadMigrated reads this machine's migration record: source name -> what
// was migrated. A file that cannot be read or parsed is an error (the
// migration then does not run).
func LoadMigrated(st store.Store) (map[string]Migrated, error) {
	path := MigratedPath(st)
	// Opened so that a FIFO there cannot block, and bounded: a record
	// names a few files.
	data, err := atomicfile.ReadLimited(path, 4<<20)
	if errors.Is(err, fs.ErrNotExist) {
		return map[string]Migrated{}, nil
	}
	if err != nil {
		return nil, err
	}
	var m migratedFile
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("%s is not a migration record (%s)", path, err)
	}
	if m.Schema != migratedSchema {
		return nil, fmt.Errorf("%s is not a migration record (schema is not %s)", path, migratedSchema)
	}
	if m.Sources == nil {
		m.Sources = map[string]Migrated{}
	}
	return m.Sources, nil
}

func saveMigrated(st store.Store, m map[string]Migrated) error {
	return atomicfile.WriteFile(MigratedPath(st), func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		return enc.Encode(migratedFile{Schema: migratedSchema, Sources: m})
	})
}

// pendingLegacy is a source read whole, with what it adds.
type pendingLegacy struct {
	src   LegacySource
	res   *LegacyResult // in the report
	info  Migrated
	recs  []record.Record
	norms [][]byte // the records' identities
}

// Migrate imports every prompt-recall file that this machine did not
// migrate before into its global file (history-global@<machine>.jsonl). It
// returns an error only when the store could not be read or written; each
// source's outcome is in the report.
func (r *Runner) Migrate(sources []LegacySource) (*MigrationReport, error) {
	o := &r.Opts
	rep := &MigrationReport{Global: globalPath(o.Store), Sources: []LegacyResult{}}
	done, err := LoadMigrated(o.Store)
	if err != nil {
		return rep, err
	}
	todo := planLegacy(sources, done, rep)
	if len(todo) == 0 {
		return rep, nil
	}
	hidden, err := tombstone.Load(o.Store.Hidden())
	if err != nil {
		rep.Untrusted = err.Error()
		setStatus(todo, LegacyWaiting)
		return rep, nil
	}
	if held, err := r.holdMigrationLock(); err != nil || held != "" {
		rep.LockHeld = held
		return rep, err
	}
	defer r.dropMigrationLock()
	var pend []pendingLegacy
	for _, p := range todo {
		if r.readLegacy(&p, hidden) {
			pend = append(pend, p)
		}
	}
	if len(pend) == 0 {
		return rep, nil
	}
	if o.DryRun {
		// What a real run would add, against the global file as it is.
		return rep, r.appendGlobal(pend, hidden, false)
	}
	return rep, r.writeLegacy(pend, done, rep)
}

// planLegacy adds each source to the report and returns the ones with
// work to do (not migrated before, and there).
func planLegacy(sources []LegacySource, done map[string]Migrated, rep *MigrationReport) []pendingLegacy {
	rep.Sources = make([]LegacyResult, len(sources))
	var todo []pendingLegacy
	for i, src := range sources {
		res := &rep.Sources[i]
		*res = LegacyResult{Name: src.Name, Path: src.Path, Status: LegacySkipped}
		_, migrated := done[src.Name]
		switch _, err := os.Lstat(src.Path); {
		case migrated:
			res.Status = LegacyDone
		case errors.Is(err, fs.ErrNotExist):
			res.Status = LegacyMissing
		default:
			todo = append(todo, pendingLegacy{src: src, res: res})
		}
	}
	return todo
}

// setStatus gives the sources pend status.
func setStatus(pend []pendingLegacy, status string) {
	for _, p := range pend {
		p.res.Status = status
	}
}

// readLegacy reads p's prompt-recall file whole; it returns false when it
// is not to be migrated now (p.res says why).
func (r *Runner) readLegacy(pend *pendingLegacy, hidden *tombstone.Set) bool {
	o, src, res := &r.Opts, pend.src, pend.res
	before, statErr := os.Stat(src.Path)
	o.Progress.reading("legacy "+src.Name, transcript.Stats{})
	st, err := src.Scan(src.Path, func(p transcript.Prompt) error {
		if o.Progress != nil {
			o.Progress.Prompts.Add(1)
		}
		raw := p.Text
		if !o.NoRedact {
			p.Text = redact.Text(p.Text)
		}
		if !identity.Capturable(p.Text) {
			return nil
		}
		norm := identity.AppendNormalized(nil, p.Text)
		// Deleted as typed (the tombstone names the text with the
		// secret): hidden once redacted too.
		if hidden.HiddenNormalized(norm) || (raw != p.Text && hidden.Hidden(raw)) {
			res.Hidden++
			return nil
		}
		pend.recs = append(pend.recs, record.Record{Text: p.Text, TS: p.TS, Src: src.Name, Session: p.Session})
		pend.norms = append(pend.norms, norm)
		return nil
	})
	o.Progress.reading("", st)
	res.Read, res.Malformed = st.Prompts, st.Malformed
	switch {
	case err != nil:
		res.Status, res.Err = LegacyRetry, err.Error()
	case statErr != nil:
		res.Status, res.Err = LegacyRetry, statErr.Error()
	case st.Files == 0 && st.Skipped > 0:
		res.Status, res.Err = LegacySkipped, "not a regular file"
	default:
		res.Status = LegacyWould
		pend.info = Migrated{Path: src.Path, Size: before.Size(), ModTime: before.ModTime().UTC(), Prompts: len(pend.recs)}
		return true
	}
	return false
}

// writeLegacy adds what pend holds to the machine's global file under the
// rewriters' lock, and records the migration.
func (r *Runner) writeLegacy(pend []pendingLegacy, done map[string]Migrated, rep *MigrationReport) error {
	o := &r.Opts
	lk, err := lock.Acquire(o.Store.Lock(), o.LockWait)
	if errors.Is(err, lock.ErrTimeout) {
		rep.Busy = err.Error()
		setStatus(pend, LegacySkipped)
		return nil
	}
	if err != nil {
		return fmt.Errorf("taking the store's lock: %w", err)
	}
	defer lk.Release()
	sweepTemps(o.Store, o.Store.Root)
	hidden, err := tombstone.Load(o.Store.Hidden())
	if err != nil {
		rep.Untrusted = err.Error()
		setStatus(pend, LegacyWaiting)
		return nil
	}
	if err := r.appendGlobal(pend, hidden, true); err != nil {
		for _, p := range pend {
			p.res.Status, p.res.Err, p.res.Added = LegacyFailed, err.Error(), 0
		}
		return err
	}
	now := o.Now().UTC()
	for _, p := range pend {
		p.info.Migrated = now
		done[p.res.Name] = p.info
		p.res.Status = LegacyMigrated
	}
	if err := saveMigrated(o.Store, done); err != nil {
		// The prompts are in the global file; the next run reads the
		// sources again and finds them there (same text and time).
		return fmt.Errorf("recording the migration in %s: %w", MigratedPath(o.Store), err)
	}
	return nil
}

// appendGlobal appends to the machine's global file, as a capture file is
// appended to, the records that no global file holds already (same
// identity and time) and that hidden does not hide, and fsyncs it. With
// write false it only counts them.
func (r *Runner) appendGlobal(pend []pendingLegacy, hidden *tombstone.Set, write bool) error {
	st := r.Opts.Store
	seen, err := globalKeys(st)
	if err != nil {
		return err
	}
	var add []byte
	for _, p := range pend {
		for i, rec := range p.recs {
			key := makeKey(rec.TS, p.norms[i])
			if _, dup := seen[key]; hidden.HiddenNormalized(p.norms[i]) {
				p.res.Hidden++
			} else if dup {
				p.res.Dupes++
			} else {
				seen[key] = struct{}{}
				add = record.Append(add, rec)
				p.res.Added++
			}
		}
	}
	if len(add) == 0 || !write {
		return nil
	}
	if err := r.track(""); err != nil {
		return err
	}
	path := globalPath(st)
	if err := store.Append(path, add); err != nil {
		return writeError(path, err)
	}
	if err := syncFile(path); err != nil {
		return writeError(path, err)
	}
	return nil
}

// globalKeys returns the prompt events the global files hold.
func globalKeys(st store.Store) (map[eventKey]struct{}, error) {
	seen := map[eventKey]struct{}{}
	files, err := st.GlobalFiles()
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", st.Root, err)
	}
	var norm []byte
	for _, gf := range files {
		if err := scanFile(gf.Path, func(l *record.Line) error {
			norm = identity.AppendNormalized(norm[:0], string(l.Text))
			seen[makeKey(l.TS, norm)] = struct{}{}
			return nil
		}); err != nil {
			return nil, err
		}
	}
	return seen, nil
}

// holdMigrationLock takes the migration lock folder (a dry run only
// checks that it is free): held names it when it was there already.
func (r *Runner) holdMigrationLock() (held string, err error) {
	root := r.Opts.Store.Root
	dir := filepath.Join(root, MigrationLockName)
	if r.Opts.DryRun {
		if _, err := os.Lstat(dir); err == nil {
			return dir, nil
		}
		return "", nil
	}
	if err := store.EnsureDir(root); err != nil {
		return "", fmt.Errorf("creating the store %s: %w", root, err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stopped {
		return "", errStopped
	}
	if err := os.Mkdir(dir, atomicfile.DirPerm); errors.Is(err, fs.ErrExist) {
		return dir, nil
	} else if err != nil {
		return "", fmt.Errorf("creating %s: %w", dir, err)
	}
	r.lockDir = dir
	return "", nil
}

func (r *Runner) dropMigrationLock() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.lockDir != "" {
		os.Remove(r.lockDir)
		r.lockDir = ""
	}
}
