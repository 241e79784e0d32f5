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
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"hist/lib/atomicfile"
	"hist/lib/identity"
	"hist/lib/store"
)

// Cap is the most entries hidden.json holds; past it the oldest is dropped.
const Cap = 1000

// PrefixLen is the length, in characters, of a legacy prefix entry (see
// isPrefixEntry for how characters are counted).
const PrefixLen = 120

// UntrustedError says hidden.json exists but cannot be trusted.
type UntrustedError struct {
	Path string
	Err  error
}

func (e *UntrustedError) Error() string {
	return fmt.Sprintf("%s cannot be trusted (%v): history stays blocked so hidden prompts do not resurface; restore the file or delete it yourself (hidden prompts may then reappear)", e.Path, e.Err)
}
func (e *UntrustedError) Unwrap() error { return e.Err }

// Set is a loaded tombstone file, with the other machines' ones beside it.
type Set struct {
	Path    string
	Entries []string // in file order, oldest first
	Exists  bool     // the file was there when loaded

	// others are the entries of the other tombstone files in Path's
	// folder (hidden.json, every machine's hidden@<machine>.json): they
	// hide too, and Save never writes them. copies are Syncthing's
	// conflict copies of Path: their entries are merged into Entries, and
	// Save removes them once the merge is written.
	others []string
	copies []string

	keys  map[[32]byte]struct{}
	exact map[string]struct{} // legacy plain entries < 120 chars, normalized
	// Legacy plain entries of 120 characters, normalized (see prefixForm),
	// by their length in bytes; prefixLens lists those lengths, ascending.
	prefixes   map[int]map[string]struct{}
	prefixLens []int
}

// Load reads the tombstone file at path, and, when its name is a
// tombstone file's (hidden.json, hidden@<machine>.json), every other
// tombstone file in its folder, conflict copies included: a set hides what
// any of them hides (docs/store-format.md). A missing file is an empty,
// trusted set; any file that exists but cannot be trusted is an
// *UntrustedError.
func Load(path string) (*Set, error) {
	s := &Set{Path: path}
	if _, err := s.load(path, &s.Entries); err != nil {
		return nil, err
	}
	if isTombstoneName(filepath.Base(path)) {
		own := s.Entries
		// Another machine's tombstone file that Syncthing is replacing is
		// missing for an instant (the old file removed before its temp
		// file is renamed into place): read again until the listing and
		// the reads agree, for up to replaceWait.
		for deadline := time.Now().Add(replaceWait); ; time.Sleep(replaceWait / 50) {
			s.Entries, s.others, s.copies = own, nil, nil
			settled, err := s.loadOthers(path)
			if err != nil {
				return nil, err
			}
			if settled || time.Now().After(deadline) {
				break
			}
		}
	}
	s.index()
	return s, nil
}

// replaceWait is how long Load waits for a tombstone file being replaced.
const replaceWait = 500 * time.Millisecond

// loadOthers reads the tombstone files beside path. It reports false when
// one was missing: listed but gone when read, or named by a temp file of
// Syncthing's and not listed.
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
			if t := strings.TrimSuffix(strings.TrimPrefix(name, ".syncthing."), ".tmp"); isTombstoneName(t) && !listed[t] {
				settled = false
			}
			continue
		}
		p := filepath.Join(dir, name)
		orig, conflict := store.Unconflicted(name)
		if p == path || !isTombstoneName(orig) {
			continue
		}
		var entries []string
		ok, err := s.load(p, &entries)
		if err != nil {
			return false, err
		}
		settled = settled && ok
		if conflict && orig == filepath.Base(path) {
			s.copies = append(s.copies, p)
			s.Entries = mergeEntries(s.Entries, entries)
			continue
		}
		s.others = append(s.others, entries...)
	}
	return settled, nil
}

// load reads one tombstone file into out, and reports whether it was
// there: a missing file leaves out alone.
func (s *Set) load(path string, out *[]string) (bool, error) {
	data, err := atomicfile.ReadRegular(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, &UntrustedError{Path: path, Err: err}
	}
	if path == s.Path {
		s.Exists = true
	}
	if err := parse(data, out); err != nil {
		return false, &UntrustedError{Path: path, Err: err}
	}
	return true, nil
}

// isTombstoneName reports whether a base name is a tombstone file's.
func isTombstoneName(name string) bool {
	return name == store.HiddenName || strings.HasPrefix(name, "hidden@") && strings.HasSuffix(name, ".json") && store.MachineOf(name) != ""
}

// mergeEntries adds the entries of a conflict copy that a are missing,
// before a's own (the copy holds the older state).
func mergeEntries(a, copy []string) []string {
	have := make(map[string]bool, len(a))
	for _, e := range a {
		have[e] = true
	}
	var out []string
	for _, e := range copy {
		if !have[e] {
			have[e] = true
			out = append(out, e)
		}
	}
	out = append(out, a...)
	if len(out) > Cap {
		out = out[len(out)-Cap:]
	}
	return out
}

// Others reports how many entries the set holds from other tombstone
// files than its own.
func (s *Set) Others() int { return len(s.others) }

// HidesOthers returns a set that hides what the other machines' tombstone
// files hide and this one's does not: what this machine's rewriters still
// have to remove from its own files. Nil when there is nothing.
func (s *Set) HidesOthers() *Set {
	own := make(map[string]bool, len(s.Entries))
	for _, e := range s.Entries {
		own[e] = true
	}
	o := &Set{Path: s.Path}
	for _, e := range s.others {
		if !own[e] {
			o.Entries = append(o.Entries, e)
		}
	}
	if len(o.Entries) == 0 {
		return nil
	}
	o.index()
	return o
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

func (s *Set) index() {
	s.keys = make(map[[32]byte]struct{}, len(s.Entries)+len(s.others))
	s.exact = map[string]struct{}{}
	s.prefixes = map[int]map[string]struct{}{}
	s.prefixLens = s.prefixLens[:0]
	for _, e := range slices.Concat(s.Entries, s.others) {
		if sum, ok := parseKey(e); ok {
			s.keys[sum] = struct{}{}
			continue
		}
		if !isPrefixEntry(e) {
			s.exact[identity.Normalize(e)] = struct{}{}
			continue
		}
		p := prefixForm(e)
		if p == "" {
			continue // all white space: no prompt is blank, nothing to hide
		}
		set := s.prefixes[len(p)]
		if set == nil {
			set = map[string]struct{}{}
			s.prefixes[len(p)] = set
			s.prefixLens = append(s.prefixLens, len(p))
		}
		set[p] = struct{}{}
	}
	slices.Sort(s.prefixLens)
}

// isPrefixEntry reports whether a legacy plain entry is a 120-character
// prefix. Earlier builds counted characters as JavaScript does (UTF-16
// code units), so an entry that is 120 long by either count is one: a
// prompt that begins with it stays hidden whichever way it was cut.
func isPrefixEntry(e string) bool {
	if utf8.RuneCountInString(e) >= PrefixLen {
		return true
	}
	n := 0
	for _, r := range e {
		n++
		if r >= 0x10000 {
			n++ // a surrogate pair
		}
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
	if _, err := hex.Decode(sum[:], []byte(strings.ToLower(h))); err != nil {
		return sum, false
	}
	return sum, true
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
func (s *Set) HiddenNormalized(norm []byte) bool {
	if s.Empty() {
		return false
	}
	if len(s.keys) > 0 {
		if _, ok := s.keys[sha256.Sum256(norm)]; ok {
			return true
		}
	}
	if len(s.exact) > 0 {
		if _, ok := s.exact[string(norm)]; ok {
			return true
		}
	}
	for _, l := range s.prefixLens {
		if len(norm) < l {
			break
		}
		if _, ok := s.prefixes[l][string(norm[:l])]; ok {
			return true
		}
	}
	return false
}

// Hidden reports whether text is hidden.
func (s *Set) Hidden(text string) bool {
	return s.HiddenNormalized(identity.AppendNormalized(nil, text))
}

// Add records a deletion of text: its key moves to (or is added at) the
// end; past Cap the oldest entries are dropped. Legacy entries are kept as
// they are. It changes the set in memory only; Save writes it.
func (s *Set) Add(text string) string {
	key := identity.Key(text)
	s.AddKey(key)
	return key
}

// AddKey is Add for an already computed key.
func (s *Set) AddKey(key string) { s.AddKeys([]string{key}) }

// AddKeys adds keys in order, as AddKey would one by one: each moves to
// (or is added at) the end, and past Cap the oldest entries are dropped.
// It reports which keys were not in the set before (isNew, by index;
// repeats of a key count once) and how many entries were dropped: older
// ones first, then the first of keys when they alone are more than Cap.
func (s *Set) AddKeys(keys []string) (isNew []bool, dropped int) {
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
	out := s.Entries[:0:0]
	for _, e := range s.Entries {
		if _, moved := last[e]; !moved {
			out = append(out, e)
		}
	}
	for i, k := range keys {
		if last[k] == i {
			out = append(out, k)
		}
	}
	if len(out) > Cap {
		dropped = len(out) - Cap
		out = out[dropped:]
	}
	s.Entries = out
	s.index()
	return isNew, dropped
}

// Save writes the set's own entries to its path atomically (0600), then
// removes the conflict copies Load merged into them.
func (s *Set) Save() error {
	data, err := json.Marshal(s.Entries)
	if err != nil {
		return err
	}
	if s.Entries == nil {
		data = []byte("[]")
	}
	data = append(data, '\n')
	if err := atomicfile.WriteBytes(s.Path, data); err != nil {
		return err
	}
	for _, c := range s.copies {
		os.Remove(c)
	}
	s.copies = nil
	return nil
}
