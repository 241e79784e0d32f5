package ledger

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"hist/lib/atomicfile"
)

// Stamp is what a transcript file looked like when it was last listed: a
// file with the same stamp is not read again.
type Stamp struct {
	Dev, Ino uint64
	Size     int64
	Mtime    int64 // nanoseconds
}

// File is what the state holds of one transcript file: its stamp, and
// where its last read stopped (see transcript.Cursor; Offset 0 for the
// files that are not read by lines, read whole when they change).
type File struct {
	Stamp
	Offset  int64
	Head    uint64
	Context string
	seen    bool // listed by this run
}

// State is the import state: each transcript file's stamp and cursor, by
// source and path, and each seed file's cutoff. A run that imports
// appends what changed to the file, or rewrites it whole once the changes
// appended make a good part of it. It is a cache: a lost, stale or torn
// state only has files read again, which the ledger keeps from importing
// anything twice; so it is written without fsyncs.
type State struct {
	Path  string
	Build string                     // the build that wrote the file stamps
	Files map[string]map[string]File // source -> path -> file
	// Cutoffs, by project hash and source: the prompts of the source up
	// to this time (unix ms) are the ones a seed file written before the
	// ledger existed stands for. They count as imported, since a seed's
	// prompts deleted since are not in it any more. 0: the ledger covers
	// the seed file.
	Cutoffs map[string]int64 // hash + "/" + source -> ms
	changed bool
	// What changed since the file was read, to append to it when it can
	// be (base: it was read whole, of this build; lines: its entries).
	log   []change
	base  bool
	lines int
}

// change is a file recorded (or dropped: gone) or a cutoff set.
type change struct {
	src, path string
	f         File
	gone      bool
	cutoff    string // hash + "/" + source, for a cutoff
}

// LoadState reads the state at path; a missing, unreadable or garbled
// file is an empty state (then every transcript is read again: the ledger
// keeps that from importing anything twice).
func LoadState(path, build string) *State {
	s := &State{Path: path, Build: build, Files: map[string]map[string]File{}, Cutoffs: map[string]int64{}}
	f, err := os.Open(path)
	if err != nil {
		return s
	}
	defer f.Close()
	if err := s.read(f, build); err != nil {
		s.Files, s.Cutoffs = map[string]map[string]File{}, map[string]int64{}
		s.base, s.lines = false, 0
	}
	return s
}

const stateHeader = "hist import state v3"

// read parses the state file: a header line, then one line per entry:
//
//	b <quoted build>
//	c <hash>/<source> <ms>
//	s <quoted source key> [<number of f lines that follow>]
//	f <dev> <ino> <size> <mtime> <offset> <head> <quoted context> <quoted path>
//	x <quoted path>
//	end
//
// where an f line records a file of the source of the s line before it
// (a later line for the same file wins), an x line drops one, and each
// run's lines end with "end": a file that does not (torn) is not taken.
// The file stamps of another build are dropped (its readers may yield
// other prompts from the same files).
func (s *State) read(r io.Reader, build string) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	if !sc.Scan() || sc.Text() != stateHeader {
		return errors.New("no header")
	}
	sameBuild, ended := false, false
	var files map[string]File
	for sc.Scan() {
		s.lines++
		raw := sc.Bytes()
		if len(raw) > 2 && raw[0] == 'f' && raw[1] == ' ' {
			// Most lines: parsed from the scanner's buffer, the path
			// the only string made.
			if files == nil {
				return fmt.Errorf("bad line %q", raw)
			}
			ended = false
			if !sameBuild {
				continue
			}
			path, f, ok := parseFile(raw[2:])
			if !ok {
				return fmt.Errorf("bad line %q", raw)
			}
			files[path] = f
			continue
		}
		line := string(raw)
		kind, rest, _ := strings.Cut(line, " ")
		switch kind {
		case "b":
			b, err := strconv.Unquote(rest)
			if err != nil {
				return err
			}
			sameBuild = b == build
		case "s":
			// s <quoted source> [<files>]: the count sizes the map.
			q, err := strconv.QuotedPrefix(rest)
			if err != nil {
				return err
			}
			src, _ := strconv.Unquote(q)
			n, _ := strconv.Atoi(strings.TrimPrefix(rest[len(q):], " "))
			if files = s.Files[src]; files == nil {
				files = make(map[string]File, min(max(n, 0), 1<<20))
				if sameBuild {
					s.Files[src] = files
				}
			}
		case "x":
			if files == nil {
				return fmt.Errorf("bad line %q", line)
			}
			path, err := strconv.Unquote(rest)
			if err != nil {
				return err
			}
			delete(files, path)
		case "c":
			k, ms, ok := strings.Cut(rest, " ")
			n, err := strconv.ParseInt(ms, 10, 64)
			if !ok || err != nil {
				return fmt.Errorf("bad line %q", line)
			}
			s.Cutoffs[k] = n
		case "end":
			ended = true
			continue
		default:
			return fmt.Errorf("bad line %q", line)
		}
		ended = false // until the next end
	}
	if err := sc.Err(); err != nil {
		return err
	}
	if !ended {
		return errors.New("no end")
	}
	s.base = sameBuild
	return nil
}

// parseFile parses an f line after its "f ".
func parseFile(b []byte) (string, File, bool) {
	var f File
	var fields [6][]byte
	for i := range fields {
		j := bytes.IndexByte(b, ' ')
		if j <= 0 {
			return "", f, false
		}
		fields[i], b = b[:j], b[j+1:]
	}
	var ok [6]bool
	f.Dev, ok[0] = parseUint(fields[0])
	f.Ino, ok[1] = parseUint(fields[1])
	f.Size, ok[2] = parseInt(fields[2])
	f.Mtime, ok[3] = parseInt(fields[3])
	f.Offset, ok[4] = parseInt(fields[4])
	f.Head, ok[5] = parseUint(fields[5])
	if ok != [6]bool{true, true, true, true, true, true} {
		return "", f, false
	}
	ctx, b, good := unquote(b)
	if !good || len(b) == 0 || b[0] != ' ' {
		return "", f, false
	}
	f.Context = ctx
	path, b, good := unquote(b[1:])
	return path, f, good && len(b) == 0
}

// unquote reads the Go-quoted string b starts with, and returns it and
// the rest of b.
func unquote(b []byte) (string, []byte, bool) {
	if len(b) < 2 || b[0] != '"' {
		return "", nil, false
	}
	if i := bytes.IndexAny(b[1:], `"\`); i >= 0 && b[1+i] == '"' {
		return string(b[1 : 1+i]), b[2+i:], true // nothing escaped
	}
	q, err := strconv.QuotedPrefix(string(b))
	if err != nil {
		return "", nil, false
	}
	u, err := strconv.Unquote(q)
	return u, b[len(q):], err == nil
}

// parseUint parses a decimal number.
func parseUint(b []byte) (uint64, bool) {
	if len(b) == 0 || len(b) > 20 {
		return 0, false
	}
	var n uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		d := uint64(c - '0')
		if n > (math.MaxUint64-d)/10 {
			return 0, false
		}
		n = n*10 + d
	}
	return n, true
}

// parseInt parses a decimal number, perhaps negative.
func parseInt(b []byte) (int64, bool) {
	neg := len(b) > 0 && b[0] == '-'
	if neg {
		b = b[1:]
	}
	u, ok := parseUint(b)
	switch {
	case !ok || u > math.MaxInt64+1 || (!neg && u > math.MaxInt64):
		return 0, false
	case neg:
		return -int64(u), true
	}
	return int64(u), true
}

// Unchanged reports whether path, of source src, has the stamp it had when
// it was last listed.
func (s *State) Unchanged(src, path string, st Stamp) bool {
	old, ok := s.Files[src][path]
	return ok && old.Stamp == st
}

// Listing is what one run lists and reads of a source's files, recorded
// in the state (SetFiles) when the run imports what it read. The files
// the state holds already are marked in place (their paths are not held
// twice); only the new or changed ones are held apart.
type Listing struct {
	src  string
	old  map[string]File // the state's files of the source
	next map[string]File // the files new or changed since
}

// Listing starts a run's listing of source src.
func (s *State) Listing(src string) *Listing {
	return &Listing{src: src, old: s.Files[src], next: map[string]File{}}
}

// List records that the run listed path with stamp st, and returns what
// the state held of it (ok false: nothing), and whether it is unchanged.
func (l *Listing) List(path string, st Stamp) (old File, ok, same bool) {
	old, ok = l.old[path]
	if ok && old.Stamp == st {
		if !old.seen {
			old.seen = true
			l.old[path] = old
		}
		return old, true, true
	}
	l.next[path] = File{Stamp: st}
	return old, ok, false
}

// Known reports whether the state holds path (listed or not).
func (l *Listing) Known(path string) bool {
	_, ok := l.old[path]
	return ok
}

// Reached records where the run's read of path stopped.
func (l *Listing) Reached(path string, offset int64, head uint64, context string) {
	f, ok := l.next[path]
	if !ok {
		return
	}
	f.Offset, f.Head, f.Context = offset, head, context
	l.next[path] = f
}

// SetFiles replaces the files of l's source with those l listed (read, or
// found unchanged), once what the run read of them is imported.
func (s *State) SetFiles(l *Listing) {
	for p, f := range l.old {
		switch {
		case f.seen:
			f.seen = false
			l.old[p] = f
		default:
			delete(l.old, p)
			if _, ok := l.next[p]; !ok {
				s.note(change{src: l.src, path: p, gone: true})
			}
		}
	}
	files := l.old
	if len(files) == 0 && !s.base {
		// Nothing to merge into, and the file is written whole (no
		// change to append): a first import's listing becomes the
		// source's files as it is.
		s.changed = s.changed || len(l.next) > 0
		s.Files[l.src], l.old, l.next = l.next, l.next, map[string]File{}
		return
	}
	if files == nil {
		files = map[string]File{}
		s.Files[l.src] = files
	}
	for p, f := range l.next {
		files[p] = f
		s.note(change{src: l.src, path: p, f: f})
	}
	l.next = map[string]File{}
}

// Cutoff returns the cutoff of the seed file of src in project hash, and
// whether there is one.
func (s *State) Cutoff(hash, src string) (int64, bool) {
	ms, ok := s.Cutoffs[hash+"/"+src]
	return ms, ok
}

// SetCutoff records a seed file's cutoff.
func (s *State) SetCutoff(hash, src string, ms int64) {
	s.Cutoffs[hash+"/"+src] = ms
	s.note(change{cutoff: hash + "/" + src})
}

// note records a change, to append when the state is saved (a state not
// read whole, of this build, is written whole: no change to keep).
func (s *State) note(c change) {
	s.changed = true
	if s.base {
		s.log = append(s.log, c)
	}
}

// appendable reports whether Save may append the changes to the file:
// it was read whole, of this build, and it stays mostly entries that are
// not superseded.
func (s *State) appendable() bool {
	n := 0
	for _, files := range s.Files {
		n += len(files)
	}
	return s.base && s.lines+len(s.log) <= 2*n+len(s.Cutoffs)+64
}

// Save writes the state when it changed, without fsyncs (see State):
// its changes appended, or the whole state renamed into place.
func (s *State) Save() error {
	if !s.changed {
		return nil
	}
	var err error
	if s.appendable() {
		err = s.appendLog()
	} else {
		err = s.rewrite()
	}
	if err == nil {
		s.changed = false
		s.log = s.log[:0]
	}
	return err
}

// appendFile appends a file's line to b.
func appendFile(b []byte, path string, f File) []byte {
	b = append(b, "f "...)
	b = strconv.AppendUint(b, f.Dev, 10)
	b = append(b, ' ')
	b = strconv.AppendUint(b, f.Ino, 10)
	for _, n := range []int64{f.Size, f.Mtime, f.Offset} {
		b = append(b, ' ')
		b = strconv.AppendInt(b, n, 10)
	}
	b = append(b, ' ')
	b = strconv.AppendUint(b, f.Head, 10)
	b = append(b, ' ')
	b = strconv.AppendQuote(b, f.Context)
	b = append(b, ' ')
	b = strconv.AppendQuote(b, path)
	return append(b, '\n')
}

// appendLog appends the changes to the file, in one write.
func (s *State) appendLog() error {
	var b []byte
	src := ""
	for i, c := range s.log {
		switch {
		case c.cutoff != "":
			b = append(b, "c "+c.cutoff+" "...)
			b = strconv.AppendInt(b, s.Cutoffs[c.cutoff], 10)
			b = append(b, '\n')
			continue
		case i == 0 || c.src != src:
			src = c.src
			b = append(b, "s "...)
			b = strconv.AppendQuote(b, src)
			b = append(b, '\n')
		}
		if c.gone {
			b = append(b, "x "...)
			b = strconv.AppendQuote(b, c.path)
			b = append(b, '\n')
		} else {
			b = appendFile(b, c.path, c.f)
		}
	}
	b = append(b, "end\n"...)
	f, err := os.OpenFile(s.Path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	s.lines += strings.Count(string(b), "\n")
	return f.Close()
}

// rewrite writes the whole state to a temp file renamed into place. On a
// fresh machine the store's folder may not exist yet: it is made (0700).
func (s *State) rewrite() error {
	if err := os.MkdirAll(filepath.Dir(s.Path), atomicfile.DirPerm); err != nil {
		return err
	}
	p, err := atomicfile.Create(s.Path)
	if err != nil {
		return err
	}
	defer p.Cleanup()
	bw := bufio.NewWriterSize(p.File, 64<<10)
	bw.WriteString(stateHeader + "\n")
	fmt.Fprintf(bw, "b %s\n", strconv.Quote(s.Build))
	lines := 2
	for k, ms := range s.Cutoffs {
		fmt.Fprintf(bw, "c %s %d\n", k, ms)
		lines++
	}
	var b []byte
	for src, files := range s.Files {
		fmt.Fprintf(bw, "s %s %d\n", strconv.Quote(src), len(files))
		lines++
		for path, f := range files {
			b = appendFile(b[:0], path, f)
			bw.Write(b)
		}
		lines += len(files)
	}
	bw.WriteString("end\n")
	if err := bw.Flush(); err != nil {
		return err
	}
	if err := p.File.Close(); err != nil {
		return err
	}
	if err := os.Rename(p.File.Name(), s.Path); err != nil {
		return err
	}
	s.base, s.lines = true, lines+1
	return nil
}

// StampOf returns fi's stamp.
func StampOf(fi fs.FileInfo) Stamp {
	st := Stamp{Size: fi.Size(), Mtime: fi.ModTime().UnixNano()}
	st.Dev, st.Ino = devIno(fi)
	return st
}
