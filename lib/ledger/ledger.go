// Package ledger holds what hist-seed remembers between runs: the import
// ledger (one 16-byte key per prompt event ever imported, so that none is
// imported twice, whatever became of its record since) and the import
// state (where each transcript file was read to, and the seed files'
// cutoffs). See docs/hist-seed.md, "Incremental import".
package ledger

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"hist/lib/atomicfile"
)

// Key identifies one prompt event of one source.
type Key [16]byte

// KeyOf is the key of a prompt event: its source and the id the reader
// gives it (Claude's record uuid, pi's entry id, ...), or, when the reader
// has none, its session, time and text.
func KeyOf(src, id, session string, ts int64, text string) Key {
	h := sha256.New()
	var n [8]byte
	put := func(s string) {
		binary.LittleEndian.PutUint64(n[:], uint64(len(s)))
		h.Write(n[:])
		io.WriteString(h, s)
	}
	put(src)
	if id != "" {
		h.Write([]byte{'i'})
		put(id)
	} else {
		h.Write([]byte{'t'})
		put(session)
		binary.LittleEndian.PutUint64(n[:], uint64(ts))
		h.Write(n[:])
		put(text)
	}
	var k Key
	copy(k[:], h.Sum(nil))
	return k
}

// header starts a ledger file; it is one key long, so that keys stay
// aligned.
var header = []byte("hist ledger v1\n\n")

// Ledger is the set of keys imported so far. The file is a header, then
// keys, appended by each run that imports (under the store's rewriters'
// lock). A torn last key (a run killed during its append) is ignored and
// cut off by the next append.
type Ledger struct {
	Path   string
	keys   []Key // the file's keys, sorted, once loaded is set
	loaded bool
	probes int              // lookups made by reading the file
	buf    []byte           // the buffer those lookups read through
	added  map[Key]struct{} // keys appended or read by Refresh since
	size   int64            // bytes of the file read (aligned)
	err    error            // the first read that failed
}

// scanProbes is how many lookups read through the file before its keys
// are loaded and sorted: a run that imports a prompt or two looks up as
// many keys, and reading a few megabytes of keys through a small buffer
// is cheaper than loading them (a fresh 3.2 MB buffer costs 15 ms of page
// faults here). One prompt appended to one of 66,687 pi transcripts
// (200,000 keys): the run took 35-43 ms more than one with nothing new
// when the keys were loaded, and at most 15 ms more now (medians of 7).
const scanProbes = 16

// scanChunk is the size of the reads of a lookup (a multiple of a key).
var scanChunk = 256 << 10

// Load opens the ledger at path; a missing file is an empty ledger. Its
// keys are read by the lookups (see Has).
func Load(path string) (*Ledger, error) {
	l := &Ledger{Path: path, added: map[Key]struct{}{}}
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return l, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	head := make([]byte, min(fi.Size(), int64(len(header))))
	if _, err := io.ReadFull(f, head); err != nil {
		return nil, err
	}
	if err := check(path, head); err != nil {
		return nil, err
	}
	if fi.Size() > 0 {
		n := (fi.Size() - int64(len(header))) / int64(len(Key{}))
		l.size = int64(len(header)) + n*int64(len(Key{}))
	}
	return l, nil
}

// check reports a ledger file's bytes that do not start as a ledger does.
func check(path string, data []byte) error {
	if len(data) > 0 && (len(data) < len(header) || !bytes.Equal(data[:len(header)], header)) {
		return fmt.Errorf("%s is not an import ledger (it does not start with %q): move it away", path, header[:14])
	}
	return nil
}

// parse reads a ledger file's bytes: the keys, and the size they end at.
func parse(path string, data []byte) ([]Key, int64, error) {
	if len(data) == 0 {
		return nil, 0, nil
	}
	if err := check(path, data); err != nil {
		return nil, 0, err
	}
	keys := toKeys(data[len(header):])
	return keys, int64(len(header) + len(keys)*len(Key{})), nil
}

// toKeys returns the whole keys in b.
func toKeys(b []byte) []Key {
	keys := make([]Key, len(b)/len(Key{}))
	for i := range keys {
		keys[i] = Key(b[i*len(Key{}):])
	}
	return keys
}

// Err is the first error met reading the file's keys. A lookup that met
// it reported the key as not imported: a caller that sees it must not
// act on those answers.
func (l *Ledger) Err() error { return l.err }

// Has reports whether k was imported.
func (l *Ledger) Has(k Key) bool {
	if _, ok := l.added[k]; ok {
		return true
	}
	if l.size == 0 || l.err != nil {
		return false
	}
	if !l.loaded && l.probes < scanProbes {
		l.probes++
		found, err := l.scan(k)
		if err != nil {
			l.err = fmt.Errorf("reading %s: %w", l.Path, err)
		}
		return found
	}
	if !l.loaded {
		if err := l.load(); err != nil {
			l.err = fmt.Errorf("reading %s: %w", l.Path, err)
			return false
		}
	}
	_, ok := slices.BinarySearchFunc(l.keys, k, func(a, b Key) int { return bytes.Compare(a[:], b[:]) })
	return ok
}

// scan reads the file's keys through l.buf and reports whether k is one.
func (l *Ledger) scan(k Key) (bool, error) {
	f, err := os.Open(l.Path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	if l.buf == nil {
		l.buf = make([]byte, scanChunk)
	}
	for off := int64(len(header)); off < l.size; {
		b := l.buf[:min(int64(len(l.buf)), l.size-off)]
		if _, err := f.ReadAt(b, off); err != nil {
			return false, err
		}
		off += int64(len(b))
		// Keys are 16-byte aligned from the chunk's start: a match
		// elsewhere spans two keys.
		for i := 0; ; {
			j := bytes.Index(b[i:], k[:])
			if j < 0 {
				break
			}
			if (i+j)%len(Key{}) == 0 {
				return true, nil
			}
			i += j + 1
		}
	}
	return false, nil
}

// load reads the file's keys and sorts them.
func (l *Ledger) load() error {
	f, err := os.Open(l.Path)
	if err != nil {
		return err
	}
	defer f.Close()
	data := make([]byte, l.size-int64(len(header)))
	if _, err := f.ReadAt(data, int64(len(header))); err != nil {
		return err
	}
	l.keys = toKeys(data)
	slices.SortFunc(l.keys, func(a, b Key) int { return bytes.Compare(a[:], b[:]) })
	l.loaded, l.buf = true, nil
	return nil
}

// Refresh reads the keys appended to the file since it was read, and
// reports whether there were any (another run imported meanwhile).
func (l *Ledger) Refresh() (bool, error) {
	f, err := os.Open(l.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return false, err
	}
	if fi.Size() <= l.size {
		return false, nil
	}
	data := make([]byte, fi.Size()-l.size)
	if _, err := f.ReadAt(data, l.size); err != nil && !errors.Is(err, io.EOF) {
		return false, err
	}
	var keys []Key
	if l.size == 0 {
		keys, l.size, err = parse(l.Path, data)
		if err != nil {
			return false, err
		}
	} else {
		keys = toKeys(data)
		l.size += int64(len(keys) * len(Key{}))
	}
	for _, k := range keys {
		l.added[k] = struct{}{}
	}
	return len(keys) > 0, nil
}

// Append adds the keys of groups to the file and fsyncs it (and, when it
// creates the file, its folder). The caller holds the store's rewriters'
// lock. After a failure the file may end with some of the keys: a later
// run then skips those prompts' records, which are in the store already.
func (l *Ledger) Append(groups ...[]Key) error {
	n := 0
	for _, g := range groups {
		n += len(g)
	}
	if n == 0 {
		return nil
	}
	f, err := os.OpenFile(l.Path, os.O_RDWR|os.O_CREATE, atomicfile.FilePerm)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	size := fi.Size()
	created := size == 0
	if !created && size < int64(len(header)) {
		return fmt.Errorf("%s is not an import ledger (%d bytes): move it away", l.Path, size)
	}
	if over := (size - int64(len(header))) % int64(len(Key{})); !created && over != 0 {
		// A torn last key (a killed append) is cut off.
		size -= over
		if err := f.Truncate(size); err != nil {
			return err
		}
	}
	// The keys are written from where they are, through a small buffer:
	// a first import appends a key for every prompt (3.2 MB for 200,000).
	w := bufio.NewWriterSize(io.NewOffsetWriter(f, size), 64<<10)
	if created {
		w.Write(header)
	}
	for _, g := range groups {
		for _, k := range g {
			w.Write(k[:])
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if created {
		if err := atomicfile.SyncDir(filepath.Dir(l.Path)); err != nil {
			return err
		}
	}
	end := size + int64(n*len(Key{}))
	if created {
		end += int64(len(header))
	}
	if l.size == size {
		// The lookups read the file up to its new end; keys loaded
		// before are loaded again with the new ones.
		l.size = end
		l.keys, l.loaded = nil, false
	} else {
		// Another run appended since this one read the file: the keys
		// between are not read (see Refresh), so these are kept apart.
		for _, g := range groups {
			for _, k := range g {
				l.added[k] = struct{}{}
			}
		}
	}
	return f.Close()
}
