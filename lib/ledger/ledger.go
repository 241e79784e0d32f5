// Package ledger holds what hist-seed remembers between runs: the import
// ledger (a 16-byte key per prompt event ever imported) and the import
// state (each transcript file's stamp when last read, and the seed files'
// cutoffs). See docs/hist-seed.md, "Rules".
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
	return Key(h.Sum(nil)) // its first 16 bytes
}

// header starts a ledger file; it is one key long.
var header = []byte("hist ledger v1\n\n")

const keySize = int64(len(Key{}))

// Ledger is the set of keys imported so far: the file is a header, then
// keys. A torn last key (a killed append) is ignored, and cut off by the
// next append.
type Ledger struct {
	Path string
	keys map[Key]struct{}
	size int64 // bytes of the file read (whole keys)
}

// Load reads the ledger at path; a missing file is an empty ledger.
func Load(path string) (*Ledger, error) {
	l := &Ledger{Path: path, keys: map[Key]struct{}{}}
	if _, err := l.Refresh(); err != nil {
		return nil, err
	}
	return l, nil
}

// Has reports whether k was imported.
func (l *Ledger) Has(k Key) bool {
	_, ok := l.keys[k]
	return ok
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
	data, err := io.ReadAll(io.NewSectionReader(f, l.size, 1<<62))
	if err != nil {
		return false, err
	}
	if l.size == 0 && len(data) > 0 {
		if len(data) < len(header) || !bytes.Equal(data[:len(header)], header) {
			return false, fmt.Errorf("%s is not an import ledger (it does not start with %q): move it away", l.Path, header[:14])
		}
		data = data[len(header):]
		l.size = int64(len(header))
	}
	n := int64(len(data)) / keySize
	for i := range n {
		l.keys[Key(data[i*keySize:])] = struct{}{}
	}
	l.size += n * keySize
	return n > 0, nil
}

// Append adds the keys of groups to the file and fsyncs it (and, when it
// creates the file, its folder). The caller holds the store's rewriters'
// lock. After a failure the file may hold some of the keys: their records
// are in the store already.
func (l *Ledger) Append(groups ...[]Key) error {
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
	if over := (size - int64(len(header))) % keySize; !created && over != 0 {
		// A torn last key (a killed append) is cut off.
		size -= over
		if err := f.Truncate(size); err != nil {
			return err
		}
	}
	w := bufio.NewWriterSize(io.NewOffsetWriter(f, size), 64<<10)
	if created {
		w.Write(header)
	}
	for _, g := range groups {
		for _, k := range g {
			w.Write(k[:])
			l.keys[k] = struct{}{}
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
	return f.Close()
}
