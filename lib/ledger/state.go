package ledger

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strconv"
	"strings"

	"hist/lib/atomicfile"
)

// Stamp is what a transcript file looked like when it was last read.
type Stamp struct {
	Dev, Ino uint64
	Size     int64
	Mtime    int64 // nanoseconds
}

// StampOf returns fi's stamp.
func StampOf(fi fs.FileInfo) Stamp {
	st := Stamp{Size: fi.Size(), Mtime: fi.ModTime().UnixNano()}
	st.Dev, st.Ino = devIno(fi)
	return st
}

// State is the import state: each transcript file's stamp, by source and
// path, and each seed file's cutoff. It is a cache: a lost or torn state
// only has files read again (the ledger keeps their prompts from being
// imported twice).
type State struct {
	Path  string
	Build string                      // the build that wrote the file stamps
	Files map[string]map[string]Stamp // source -> path -> stamp
	// Cutoffs: the prompts of the source up to this time (unix ms) are
	// the ones a seed file written before the ledger existed stands for
	// (those deleted since included); 0: the ledger covers the seed file.
	Cutoffs map[string]int64 // hash + "/" + source -> ms
	changed bool
}

const stateHeader = "hist import state v4"

// LoadState reads the state at path; a missing, unreadable or garbled
// file is an empty state. The file stamps another build recorded are
// dropped: its readers may yield other prompts from the same files.
func LoadState(path, build string) *State {
	s := &State{Path: path, Build: build, Files: map[string]map[string]Stamp{}, Cutoffs: map[string]int64{}}
	f, err := os.Open(path)
	if err != nil {
		return s
	}
	defer f.Close()
	if err := s.read(f); err != nil {
		s.Files, s.Cutoffs = map[string]map[string]Stamp{}, map[string]int64{}
	}
	return s
}

// read parses the state file: a header line, then
//
//	b <quoted build>
//	c <hash>/<source> <ms>
//	s <quoted source key>
//	f <dev> <ino> <size> <mtime> <quoted path>
//	end
//
// where an f line records a file of the source of the s line before it. A
// file that does not end with "end" (torn) is not taken.
func (s *State) read(r io.Reader) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	if !sc.Scan() || sc.Text() != stateHeader {
		return errors.New("no header")
	}
	sameBuild := false
	var files map[string]Stamp
	for sc.Scan() {
		kind, rest, _ := strings.Cut(sc.Text(), " ")
		var err error
		switch kind {
		case "b":
			var b string
			b, err = strconv.Unquote(rest)
			sameBuild = b == s.Build
		case "c":
			k, ms, _ := strings.Cut(rest, " ")
			s.Cutoffs[k], err = strconv.ParseInt(ms, 10, 64)
		case "s":
			var src string
			src, err = strconv.Unquote(rest)
			files = map[string]Stamp{}
			if sameBuild {
				s.Files[src] = files
			}
		case "f":
			err = parseFile(rest, files)
		case "end":
			return nil
		default:
			err = errors.New("unknown line")
		}
		if err != nil {
			return err
		}
	}
	return errors.New("no end") // torn, or unreadable
}

// parseFile parses an f line after its "f " into files.
func parseFile(line string, files map[string]Stamp) error {
	f := strings.SplitN(line, " ", 5)
	if len(f) != 5 || files == nil {
		return errors.New("bad file line")
	}
	var st Stamp
	var path string
	var errs [5]error
	st.Dev, errs[0] = strconv.ParseUint(f[0], 10, 64)
	st.Ino, errs[1] = strconv.ParseUint(f[1], 10, 64)
	st.Size, errs[2] = strconv.ParseInt(f[2], 10, 64)
	st.Mtime, errs[3] = strconv.ParseInt(f[3], 10, 64)
	path, errs[4] = strconv.Unquote(f[4])
	files[path] = st // a file with an error is not taken
	return errors.Join(errs[:]...)
}

// Listing is what one run lists of a source's files (see SetFiles).
type Listing struct {
	src     string
	old     map[string]Stamp // the state's files of the source
	next    map[string]Stamp // the files listed
	changed bool
}

// Listing starts a run's listing of source src.
func (s *State) Listing(src string) *Listing {
	old := s.Files[src]
	return &Listing{src: src, old: old, next: make(map[string]Stamp, len(old))}
}

// List records path's stamp, and reports whether it is the one recorded.
func (l *Listing) List(path string, st Stamp) bool {
	old, ok := l.old[path]
	l.next[path] = st
	same := ok && old == st
	l.changed = l.changed || !same
	return same
}

// Known reports whether the state holds path.
func (l *Listing) Known(path string) bool {
	_, ok := l.old[path]
	return ok
}

// Forget drops path from the listing: its stamp is not recorded, so the
// next run reads it again.
func (l *Listing) Forget(path string) {
	delete(l.next, path)
	l.changed = true
}

// SetFiles makes the files l listed the source's files.
func (s *State) SetFiles(l *Listing) {
	if l.changed || len(l.next) != len(l.old) {
		s.Files[l.src] = l.next
		s.changed = true
	}
}

// Cutoff returns the cutoff of src's seed file in project hash, if any.
func (s *State) Cutoff(hash, src string) (int64, bool) {
	ms, ok := s.Cutoffs[hash+"/"+src]
	return ms, ok
}

// SetCutoff records a seed file's cutoff.
func (s *State) SetCutoff(hash, src string, ms int64) {
	s.Cutoffs[hash+"/"+src] = ms
	s.changed = true
}

// Save writes the state when it changed (atomically).
func (s *State) Save() error {
	if !s.changed {
		return nil
	}
	err := atomicfile.WriteFile(s.Path, func(out io.Writer) error {
		w := bufio.NewWriterSize(out, 64<<10)
		fmt.Fprintf(w, "%s\nb %q\n", stateHeader, s.Build)
		for k, ms := range s.Cutoffs {
			fmt.Fprintf(w, "c %s %d\n", k, ms)
		}
		for src, files := range s.Files {
			fmt.Fprintf(w, "s %q\n", src)
			for path, st := range files {
				fmt.Fprintf(w, "f %d %d %d %d %q\n", st.Dev, st.Ino, st.Size, st.Mtime, path)
			}
		}
		w.WriteString("end\n")
		return w.Flush()
	})
	if err == nil {
		s.changed = false
	}
	return err
}
