// Package tombstone holds hidden.json: the deletion records that keep a
// deleted prompt hidden everywhere hist reads.
//
// The file is a JSON array of strings, oldest first. "sha256:<hex>" hides
// the prompt whose normalized form has that SHA-256. A plain entry from
// earlier builds is a prompt's first 120 normalized characters: shorter
// than 120 it hides that exact prompt, exactly 120 it hides every prompt
// that begins with it. A file that exists but cannot be trusted
// (unreadable, corrupt, not an array of strings) is an *UntrustedError:
// callers fail closed.
package tombstone

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"hist/lib/atomicfile"
	"hist/lib/identity"
	"hist/lib/shellquote"
	"hist/lib/store"
	"hist/lib/words"
)

// Cap is the most entries a delete leaves in hidden.json: past it the
// oldest are dropped, except those that hide a prompt still on disk (see
// Trim).
const Cap = 1000

// maxRead bounds what is read of one tombstone file: some 55,000 keys
// (docs/store-format.md, "Bounds").
const maxRead = 4 << 20

// PrefixLen is the length, in characters, of a legacy prefix entry (see
// isPrefixEntry for how characters are counted).
const PrefixLen = 120

// UntrustedError says a tombstone file (or its folder) exists but cannot
// be trusted. Its message says how to recover: never to delete the file
// when the cause is its permissions.
type UntrustedError struct {
	Path string
	Err  error
}

func (e *UntrustedError) Error() string {
	return fmt.Sprintf("%s cannot be trusted (%v): history stays blocked so hidden prompts do not resurface; %s", e.Path, e.Err, e.fix())
}

func (e *UntrustedError) Unwrap() error { return e.Err }

// fix says how to make the file trusted again.
func (e *UntrustedError) fix() string {
	if c := words.Chmod(e.Path, e.Err); c != "" {
		return "let hist read it: " + c
	}
	q := func(p string) string { return shellquote.Quote(p, shellquote.Any) }
	prev := e.Path + PrevSuffix
	if _, _, err := readFile(prev); err == nil {
		return fmt.Sprintf("restore the version before the last delete (its prompts may show again: delete them again): cp %s %s", q(prev), q(e.Path))
	}
	return "restore the file or delete it yourself (hidden prompts may then reappear)"
}

// PrevSuffix names the copy of a tombstone file's previous version that
// Save keeps beside it, to restore by hand.
const PrevSuffix = ".prev"

// Set is a loaded tombstone file, with the other machines' ones beside it.
type Set struct {
	Path    string
	Entries []string    // in file order, oldest first
	Exists  bool        // the file was there when loaded
	Files   []FileCount // the files read: Path first when it exists, then the others beside it

	others []string // the other tombstone files' entries: they hide too, and Save never writes them
	copies []string // Syncthing's conflict copies of Path, merged into Entries: Save removes them
	raw    []byte   // Path's content as loaded (nil when not read whole): Save keeps it as PrevSuffix

	// Each entry by what it hides: keys by hash, legacy plain entries of
	// under 120 characters by their normalized form, and legacy prefixes
	// (see prefixForm) by their length in bytes (prefixLens lists those
	// lengths, ascending).
	keys       map[[32]byte]string
	exact      map[string]string
	prefixes   map[int]map[string]string
	prefixLens []int
}

// FileCount is one tombstone file and how many entries it holds.
type FileCount struct {
	Path    string
	Entries int
}

// Load reads the tombstone file at path (hidden.json,
// hidden@<machine>.json) and every other tombstone file in its folder,
// conflict copies included: a set hides what any of them hides
// (docs/store-format.md). A missing file is an empty,
// trusted set; any file that exists but cannot be trusted is an
// *UntrustedError.
func Load(path string) (*Set, error) {
	s := &Set{Path: path}
	entries, raw, err := readFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, &UntrustedError{Path: path, Err: err}
	default:
		s.Entries, s.raw, s.Exists = entries, raw, true
	}
	own := s.Entries
	// Another machine's tombstone file that Syncthing is replacing is
	// missing for an instant (the old file removed before its temp file
	// is renamed into place): read again until the listing and the reads
	// agree, for up to replaceWait.
	for deadline := time.Now().Add(replaceWait); ; time.Sleep(replaceWait / 50) {
		s.Entries, s.others, s.copies, s.Files = own, nil, nil, nil
		if s.Exists {
			s.Files = []FileCount{{path, len(own)}}
		}
		settled, err := s.loadOthers(path)
		if err != nil {
			return nil, err
		}
		if settled || time.Now().After(deadline) {
			break
		}
	}
	s.index()
	return s, nil
}

// replaceWait is how long Load waits for a tombstone file being replaced.
const replaceWait = 500 * time.Millisecond

// loadOthers reads the tombstone files beside path. It reports false when
// one was missing: listed but gone when read, or named by a temp file of
// Syncthing's (written less than a minute ago) and not listed.
func (s *Set) loadOthers(path string) (settled bool, err error) {
	dir := filepath.Dir(path)
	ents, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false, &UntrustedError{Path: dir, Err: err}
	}
	settled = true
	listed := make(map[string]bool, len(ents))
	for _, e := range ents {
		listed[e.Name()] = true
	}
	for _, e := range ents {
		name := e.Name()
		if store.IsSyncthing(name) {
			if t := strings.TrimSuffix(strings.TrimPrefix(name, ".syncthing."), ".tmp"); isTombstoneName(t) && !listed[t] && store.SyncTempFresh(e) {
				settled = false
			}
			continue
		}
		p := filepath.Join(dir, name)
		orig, conflict := store.Unconflicted(name)
		if p == path || !isTombstoneName(orig) {
			continue
		}
		entries, _, err := readFile(p)
		if errors.Is(err, fs.ErrNotExist) {
			settled = false
			continue
		}
		if err != nil {
			return false, &UntrustedError{Path: p, Err: err}
		}
		s.Files = append(s.Files, FileCount{p, len(entries)})
		if conflict && orig == filepath.Base(path) {
			s.copies = append(s.copies, p)
			s.Entries = mergeEntries(s.Entries, entries)
			continue
		}
		s.others = append(s.others, entries...)
	}
	return settled, nil
}

// readFile reads one tombstone file: its entries, and its content when
// it was read whole. Of a file over maxRead only the newest entries are
// read (said once on stderr).
func readFile(path string) (entries []string, raw []byte, err error) {
	f, err := atomicfile.OpenRegular(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	if fi.Size() <= maxRead {
		raw, err := io.ReadAll(io.LimitReader(f, maxRead))
		if err == nil {
			err = parse(raw, &entries)
		}
		return entries, raw, err
	}
	tail := make([]byte, maxRead)
	if _, err := f.ReadAt(tail, fi.Size()-maxRead); err != nil {
		return nil, nil, err
	}
	if entries, err = parseTail(tail); err != nil {
		return nil, nil, err
	}
	store.Warn(path, "%s is %d MB, more than hist writes: only its newest %d entries are read (they hide what they hide; the older ones hide nothing now); if it is another machine's, check that machine's hist",
		path, fi.Size()>>20, len(entries))
	return entries, nil, nil
}

// parseTail reads the entries of the end of a JSON array of strings:
// from the first string that follows a comma (a string whose text ends
// with a comma may fool it: a few are tried).
func parseTail(data []byte) ([]string, error) {
	tries := 0
	for i := 1; i < len(data) && tries < 8; i++ {
		if data[i] != '"' {
			continue
		}
		j := i - 1
		for j > 0 && strings.IndexByte(" \t\r\n", data[j]) >= 0 {
			j--
		}
		if data[j] != ',' {
			continue
		}
		tries++
		var out []string
		if parse(append([]byte{'['}, data[i:]...), &out) == nil {
			return out, nil
		}
	}
	return nil, errors.New("its last 4 MiB are not the end of a JSON array of strings")
}

// isTombstoneName reports whether a base name is a tombstone file's.
func isTombstoneName(name string) bool {
	return name == store.HiddenName || strings.HasPrefix(name, "hidden@") && strings.HasSuffix(name, ".json") && store.MachineOf(name) != ""
}

// mergeEntries merges a conflict copy's entries into a's, each list by its
// own recency: the copy's newest entry is as recent as a's newest, so the
// two are taken in turns from their newest ends (an entry in both takes
// its more recent place). Nothing is cut: the cap applies when a delete
// writes the file (Trim), which keeps what still hides a stored prompt.
func mergeEntries(a, copy []string) []string {
	out := make([]string, 0, len(a)+len(copy))
	seen := make(map[string]bool, len(a)+len(copy))
	take := func(e string) {
		if !seen[e] {
			seen[e] = true
			out = append(out, e)
		}
	}
	for i, j := len(a)-1, len(copy)-1; i >= 0 || j >= 0; i, j = i-1, j-1 {
		if i >= 0 {
			take(a[i])
		}
		if j >= 0 {
			take(copy[j])
		}
	}
	slices.Reverse(out)
	return out
}

// HidesOthers returns a set that hides what the other machines' tombstone
// files hide and this one's does not: what this machine's rewriters still
// have to remove from its own files. Nil when there is nothing.
func (s *Set) HidesOthers() *Set {
	own := make(map[string]bool, len(s.Entries))
	for _, e := range s.Entries {
		own[e] = true
	}
	var o []string
	for _, e := range s.others {
		if !own[e] {
			o = append(o, e)
		}
	}
	if len(o) == 0 {
		return nil
	}
	return New(o)
}

func parse(data []byte, out *[]string) error {
	// Only JSON's own white space: bytes.TrimSpace would also drop "\f",
	// "\v" and Unicode spaces, and trust a file encoding/json rejects.
	trimmed := bytes.Trim(data, " \t\r\n")
	if len(trimmed) == 0 || trimmed[0] != '[' {
		return errors.New("not a JSON array")
	}
	var raw []json.RawMessage
	if err := json.Unmarshal(trimmed, &raw); err != nil {
		return fmt.Errorf("not valid JSON: %v", err)
	}
	entries := make([]string, 0, len(raw))
	for i, r := range raw {
		var s string
		if len(r) == 0 || r[0] != '"' || json.Unmarshal(r, &s) != nil {
			return fmt.Errorf("entry %d is not a string", i+1)
		}
		entries = append(entries, s)
	}
	*out = entries
	return nil
}

// New returns a set of entries, with no file: it hides what they hide.
func New(entries []string) *Set {
	s := &Set{Entries: entries}
	s.index()
	return s
}

func (s *Set) index() {
	s.keys = make(map[[32]byte]string, len(s.Entries)+len(s.others))
	s.exact = map[string]string{}
	s.prefixes = map[int]map[string]string{}
	s.prefixLens = s.prefixLens[:0]
	for _, e := range slices.Concat(s.Entries, s.others) {
		if sum, ok := parseKey(e); ok {
			s.keys[sum] = e
			continue
		}
		if !isPrefixEntry(e) {
			s.exact[identity.Normalize(e)] = e
			continue
		}
		p := prefixForm(e)
		if p == "" {
			continue // all white space: no prompt is blank, nothing to hide
		}
		set := s.prefixes[len(p)]
		if set == nil {
			set = map[string]string{}
			s.prefixes[len(p)] = set
			s.prefixLens = append(s.prefixLens, len(p))
		}
		set[p] = e
	}
	slices.Sort(s.prefixLens)
}

// isPrefixEntry reports whether a legacy plain entry is a 120-character
// prefix. Earlier builds counted characters as JavaScript does (UTF-16
// code units), so an entry that is 120 long by either count is one: a
// prompt that begins with it stays hidden whichever way it was cut.
func isPrefixEntry(e string) bool {
	n := 0 // UTF-16 code units, never fewer than characters
	for _, r := range e {
		n += utf16.RuneLen(r)
	}
	return n >= PrefixLen
}

// prefixForm is the normalized form of a prefix entry, which is the first
// 120 characters of a normalized prompt. The cut may fall just after a
// space, which normalizing the entry on its own would trim (the prompt
// went on after it, so the space is part of the prefix), or inside a
// UTF-16 surrogate pair (read back as U+FFFD, which is dropped: the
// prompts that begin with the rest stay hidden). A longer entry is cut to
// 120 characters.
func prefixForm(e string) string {
	n := identity.Normalize(e)
	if n == "" {
		return ""
	}
	if last, _ := utf8.DecodeLastRuneInString(e); unicode.IsSpace(last) {
		n += " "
	}
	n = truncRunes(n, PrefixLen)
	if strings.HasSuffix(n, string(utf8.RuneError)) && strings.HasSuffix(e, string(utf8.RuneError)) {
		n = strings.TrimSuffix(n, string(utf8.RuneError))
	}
	return n
}

func parseKey(e string) ([32]byte, bool) {
	var sum [32]byte
	if !strings.HasPrefix(e, identity.KeyPrefix) {
		return sum, false
	}
	h := e[len(identity.KeyPrefix):]
	if len(h) != 64 {
		return sum, false
	}
	_, err := hex.Decode(sum[:], []byte(h))
	return sum, err == nil
}

func truncRunes(s string, n int) string {
	i := 0
	for pos := range s {
		if i == n {
			return s[:pos]
		}
		i++
	}
	return s
}

// Empty reports whether the set hides nothing.
func (s *Set) Empty() bool {
	return len(s.keys) == 0 && len(s.exact) == 0 && len(s.prefixLens) == 0
}

// HiddenNormalized reports whether the prompt with normalized form norm is
// hidden.
func (s *Set) HiddenNormalized(norm []byte) bool { return s.Hider(norm) != "" }

// Hider returns the entry that hides the prompt with normalized form
// norm, "" when none does.
func (s *Set) Hider(norm []byte) string {
	if s.Empty() {
		return ""
	}
	if len(s.keys) > 0 {
		if e, ok := s.keys[sha256.Sum256(norm)]; ok {
			return e
		}
	}
	if e, ok := s.exact[string(norm)]; ok {
		return e
	}
	for _, l := range s.prefixLens {
		if len(norm) < l {
			break
		}
		if e, ok := s.prefixes[l][string(norm[:l])]; ok {
			return e
		}
	}
	return ""
}

// Hidden reports whether text is hidden.
func (s *Set) Hidden(text string) bool {
	return s.HiddenNormalized(identity.AppendNormalized(nil, text))
}

// Add records a deletion of text: its key moves to (or is added at) the
// end. Legacy entries are kept as they are. It changes the set in memory
// only; Save writes it.
func (s *Set) Add(text string) string {
	key := identity.Key(text)
	s.AddKeys([]string{key})
	return key
}

// AddKeys adds keys in order, as Add would one by one: each moves to (or
// is added at) the end. It reports which keys were not in the set before
// (by index; repeats of a key count once).
func (s *Set) AddKeys(keys []string) (isNew []bool) {
	had := make(map[string]bool, len(s.Entries))
	for _, e := range s.Entries {
		had[e] = true
	}
	isNew = make([]bool, len(keys))
	last := make(map[string]int, len(keys)) // where each key goes: its last place in keys
	for i, k := range keys {
		isNew[i] = !had[k]
		had[k] = true
		last[k] = i
	}
	s.Entries = slices.DeleteFunc(slices.Clone(s.Entries), func(e string) bool { _, moved := last[e]; return moved })
	for i, k := range keys {
		if last[k] == i {
			s.Entries = append(s.Entries, k)
		}
	}
	s.index()
	return isNew
}

// Trim drops the entries older than the newest Cap, except those keep
// says to keep: an entry that hides a prompt still on disk is kept past
// the cap rather than let the prompt show again. It returns the entries
// dropped.
func (s *Set) Trim(keep func(entry string) bool) (dropped []string) {
	old := len(s.Entries) - Cap
	if old <= 0 {
		return nil
	}
	out := s.Entries[:0:0]
	for i, e := range s.Entries {
		if i < old && !keep(e) {
			dropped = append(dropped, e)
			continue
		}
		out = append(out, e)
	}
	s.Entries = out
	s.index()
	return dropped
}

// Save keeps the file's previous version (PrevSuffix), writes the set's
// own entries to its path atomically, then removes the conflict copies
// Load merged into them.
func (s *Set) Save() error {
	data, err := json.Marshal(append([]string{}, s.Entries...))
	if err != nil {
		return err
	}
	data = append(data, '\n')
	if s.raw != nil && !bytes.Equal(s.raw, data) {
		// Only a help to restore by hand: the new file is written even
		// when its previous version cannot be kept.
		atomicfile.WriteBytes(s.Path+PrevSuffix, s.raw)
	}
	if err := atomicfile.WriteBytes(s.Path, data); err != nil {
		return err
	}
	s.raw = data
	for _, c := range s.copies {
		os.Remove(c)
	}
	s.copies = nil
	return nil
}
