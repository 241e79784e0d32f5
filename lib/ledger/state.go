package ledger

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"strconv"
	"strings"

	"hist/lib/atomicfile"
)

// Stamp is what a transcript file looked like when it was last read
// whole: a file with the same stamp is not read again.
type Stamp struct {
	Dev, Ino uint64
	Size     int64
	Mtime    int64 // nanoseconds
}

// State is the import state: each transcript file's stamp, by source and
// path, and each seed file's cutoff. It is rewritten whole (atomically)
// by each run that imports.
type State struct {
	Path  string
	Build string                      // the build that wrote the file stamps
	Files map[string]map[string]Stamp // source -> path -> stamp
	// Cutoffs, by project hash and source: the prompts of the source up
	// to this time (unix ms) are the ones a seed file written before the
	// ledger existed stands for. They count as imported, since a seed's
	// prompts deleted since are not in it any more. 0: the ledger covers
	// the seed file.
	Cutoffs map[string]int64 // hash + "/" + source -> ms
	changed bool
}

// LoadState reads the state at path; a missing or unreadable file is an
// empty state (then every transcript is read again: the ledger keeps that
// from importing anything twice).
func LoadState(path, build string) *State {
	s := &State{Path: path, Build: build, Files: map[string]map[string]Stamp{}, Cutoffs: map[string]int64{}}
	f, err := os.Open(path)
	if err != nil {
		return s
	}
	defer f.Close()
	if err := s.read(f, build); err != nil {
		s.Files, s.Cutoffs = map[string]map[string]Stamp{}, map[string]int64{}
	}
	return s
}

const stateHeader = "hist import state v2"

// read parses the state file: a header line, the build line, then one
// line per entry:
//
//	b <quoted build>
//	f <dev> <ino> <size> <mtime> <quoted source key> <quoted path>
//	c <hash>/<source> <ms>
//
// The file stamps of another build are dropped (its readers may yield
// other prompts from the same files).
func (s *State) read(r io.Reader, build string) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	if !sc.Scan() || sc.Text() != stateHeader {
		return errors.New("no header")
	}
	sameBuild := false
	for sc.Scan() {
		line := sc.Text()
		kind, rest, _ := strings.Cut(line, " ")
		switch kind {
		case "b":
			b, err := strconv.Unquote(rest)
			if err != nil {
				return err
			}
			sameBuild = b == build
		case "f":
			if !sameBuild {
				continue
			}
			f := strings.SplitN(rest, " ", 5)
			if len(f) != 5 {
				return fmt.Errorf("bad line %q", line)
			}
			var st Stamp
			var q string
			var errs [6]error
			st.Dev, errs[0] = strconv.ParseUint(f[0], 10, 64)
			st.Ino, errs[1] = strconv.ParseUint(f[1], 10, 64)
			st.Size, errs[2] = strconv.ParseInt(f[2], 10, 64)
			st.Mtime, errs[3] = strconv.ParseInt(f[3], 10, 64)
			q, errs[4] = strconv.QuotedPrefix(f[4])
			key, _ := strconv.Unquote(q)
			path, err := strconv.Unquote(strings.TrimPrefix(f[4][len(q):], " "))
			errs[5] = err
			if err := errors.Join(errs[:]...); err != nil {
				return err
			}
			s.set(key, path, st)
		case "c":
			k, ms, ok := strings.Cut(rest, " ")
			n, err := strconv.ParseInt(ms, 10, 64)
			if !ok || err != nil {
				return fmt.Errorf("bad line %q", line)
			}
			s.Cutoffs[k] = n
		}
	}
	return sc.Err()
}

func (s *State) set(src, path string, st Stamp) {
	m := s.Files[src]
	if m == nil {
		m = map[string]Stamp{}
		s.Files[src] = m
	}
	m[path] = st
}

// Unchanged reports whether path, of source src, has the stamp it had when
// it was last read whole.
func (s *State) Unchanged(src, path string, st Stamp) bool {
	old, ok := s.Files[src][path]
	return ok && old == st
}

// SetFiles replaces the stamps of source src with files (the files read
// whole, or found unchanged, by a run of the source that was imported).
func (s *State) SetFiles(src string, files map[string]Stamp) {
	if maps.Equal(s.Files[src], files) {
		return
	}
	s.Files[src] = files
	s.changed = true
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
	s.changed = true
}

// Save writes the state atomically when it changed.
func (s *State) Save() error {
	if !s.changed {
		return nil
	}
	err := atomicfile.WriteFile(s.Path, func(w io.Writer) error {
		bw := bufio.NewWriterSize(w, 64<<10)
		bw.WriteString(stateHeader + "\n")
		fmt.Fprintf(bw, "b %s\n", strconv.Quote(s.Build))
		for k, ms := range s.Cutoffs {
			fmt.Fprintf(bw, "c %s %d\n", k, ms)
		}
		for src, files := range s.Files {
			for p, st := range files {
				fmt.Fprintf(bw, "f %d %d %d %d %s %s\n", st.Dev, st.Ino, st.Size, st.Mtime, strconv.Quote(src), strconv.Quote(p))
			}
		}
		return bw.Flush()
	})
	if err == nil {
		s.changed = false
	}
	return err
}

// StampOf returns fi's stamp.
func StampOf(fi fs.FileInfo) Stamp {
	st := Stamp{Size: fi.Size(), Mtime: fi.ModTime().UnixNano()}
	st.Dev, st.Ino = devIno(fi)
	return st
}
