// Package history reads the visible history of a scope: every store file's
// records, each prompt once (its newest copy), none that a tombstone hides,
// newest first.
//
// It streams: files are read one at a time through one buffer, and only
// the winning copy of each prompt is kept, its text packed in an arena, so
// a scope of a million prompts costs about the size of its unique texts.
package history

import (
	"errors"
	"fmt"
	"hash/maphash"
	"io/fs"
	"os"
	"slices"
	"syscall"
	"unsafe"

	"hist/lib/identity"
	"hist/lib/record"
	"hist/lib/store"
	"hist/lib/tombstone"
)

// Entry is one visible prompt.
type Entry struct {
	Text    string
	TS      int64
	Src     string
	Session string
	File    string // the store file the newest copy is in
	Project string // its project hash ("" for global files)
}

// FileError is a store file that could not be read.
type FileError struct {
	Path string
	Err  error
}

func (e FileError) Error() string { return fmt.Sprintf("%s: %v", e.Path, e.Err) }

// Result is a scope's visible history.
type Result struct {
	Stats  record.Stats
	Failed []FileError // files that could not be read (the rest were)
	Hidden int         // prompts hidden by a tombstone

	files   []store.File
	provs   []prov
	entries []entry
}

type prov struct{ src, session string }

type entry struct {
	text string
	ts   int64
	seq  uint64
	file int32
	prov int32
}

// Len is the number of visible prompts.
func (r *Result) Len() int { return len(r.entries) }

// At returns the i-th visible prompt, newest first.
func (r *Result) At(i int) Entry {
	e := &r.entries[i]
	f := r.files[e.file]
	p := r.provs[e.prov]
	return Entry{Text: e.text, TS: e.ts, Src: p.src, Session: p.session, File: f.Path, Project: f.Project}
}

type key [2]uint64

// reader holds the state of one Read.
type reader struct {
	res    *Result
	index  map[key]int32
	seed1  maphash.Seed
	seed2  maphash.Seed
	norm   []byte
	arena  []byte
	provIx map[prov]int32
	seq    uint64
}

const chunk = 1 << 20

// store copies b into the arena and returns it as a string that lives as
// long as the arena.
func (rd *reader) store(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	if len(b) > chunk/4 {
		return string(b)
	}
	if cap(rd.arena)-len(rd.arena) < len(b) {
		rd.arena = make([]byte, 0, chunk)
	}
	start := len(rd.arena)
	rd.arena = append(rd.arena, b...)
	s := rd.arena[start:len(rd.arena):len(rd.arena)]
	return unsafe.String(&s[0], len(s))
}

func (rd *reader) provOf(src, session []byte) int32 {
	if i, ok := rd.provIx[prov{string(src), string(session)}]; ok { // no alloc for lookups
		return i
	}
	p := prov{string(src), string(session)}
	i := int32(len(rd.res.provs))
	rd.res.provs = append(rd.res.provs, p)
	rd.provIx[p] = i
	return i
}

// Read reads the visible history of files. hidden may be nil (nothing is
// hidden). Files that cannot be read are listed in Result.Failed; the
// others are read whole.
func Read(files []store.File, hidden *tombstone.Set) *Result {
	rd := &reader{
		res:    &Result{files: files},
		index:  make(map[key]int32),
		seed1:  maphash.MakeSeed(),
		seed2:  maphash.MakeSeed(),
		provIx: make(map[prov]int32),
	}
	rd.provOf(nil, nil)
	for i, f := range files {
		if err := rd.readFile(int32(i), f.Path); err != nil {
			rd.res.Failed = append(rd.res.Failed, FileError{Path: f.Path, Err: err})
		}
	}
	rd.finish(hidden)
	return rd.res
}

// Open opens a store file for reading, refusing what is not a regular file
// (a FIFO would block a reader forever; a folder cannot be read).
func Open(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, &fs.PathError{Op: "read", Path: path, Err: errors.New("not a regular file")}
	}
	return f, nil
}

func (rd *reader) readFile(fi int32, path string) error {
	f, err := Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := record.Scan(f, func(l *record.Line) error {
		rd.add(fi, l)
		return nil
	})
	rd.res.Stats.Add(st)
	return err
}

func (rd *reader) add(fi int32, l *record.Line) {
	rd.seq++
	rd.norm = identity.AppendNormalized(rd.norm[:0], unsafe.String(unsafe.SliceData(l.Text), len(l.Text)))
	k := key{maphash.Bytes(rd.seed1, rd.norm), maphash.Bytes(rd.seed2, rd.norm)}
	if i, ok := rd.index[k]; ok {
		e := &rd.res.entries[i]
		if l.TS < e.ts {
			return
		}
		e.text, e.ts, e.seq, e.file = rd.store(l.Text), l.TS, rd.seq, fi
		e.prov = rd.provOf(l.Src, l.Session)
		return
	}
	rd.index[k] = int32(len(rd.res.entries))
	rd.res.entries = append(rd.res.entries, entry{
		text: rd.store(l.Text), ts: l.TS, seq: rd.seq, file: fi, prov: rd.provOf(l.Src, l.Session),
	})
}

func (rd *reader) finish(hidden *tombstone.Set) {
	rd.index = nil
	es := rd.res.entries
	if hidden != nil && !hidden.Empty() {
		out := es[:0]
		for _, e := range es {
			rd.norm = identity.AppendNormalized(rd.norm[:0], e.text)
			if hidden.HiddenNormalized(rd.norm) {
				rd.res.Hidden++
				continue
			}
			out = append(out, e)
		}
		es = out
	}
	slices.SortFunc(es, func(a, b entry) int {
		if a.ts != b.ts {
			if a.ts > b.ts {
				return -1
			}
			return 1
		}
		if a.seq > b.seq {
			return -1
		}
		if a.seq < b.seq {
			return 1
		}
		return 0
	})
	rd.res.entries = es
}
