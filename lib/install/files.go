package install

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"hist/lib/atomicfile"
	"hist/lib/words"
)

// file is a file install reads, then writes or removes: a symbolic link
// is followed, and its target is the file written.
type file struct {
	path   string      // as the agent names it
	real   string      // the file itself: path, or the target of its link
	linked bool        // path is a symbolic link
	data   []byte      // its content; nil when it does not exist
	mode   os.FileMode // its permissions
}

// readFile reads path. A link to nothing, or something other than a
// regular file, is refused: install would otherwise replace it.
func readFile(path string) (*file, error) {
	f := &file{path: path, real: path}
	fi, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return f, nil
	case err != nil:
		return nil, fmt.Errorf("reading %s: %s", path, words.Describe(err))
	case fi.Mode()&fs.ModeSymlink != 0:
		target, err := filepath.EvalSymlinks(path)
		if errors.Is(err, fs.ErrNotExist) {
			to, _ := os.Readlink(path)
			return nil, &refused{fmt.Sprintf("is a symbolic link to %s, which does not exist: create that file, or remove the link, then run again", to)}
		}
		if err != nil {
			return nil, fmt.Errorf("following the link %s: %s", path, words.Describe(err))
		}
		f.real, f.linked = target, true
	}
	data, err := atomicfile.ReadRegular(f.real)
	if err == nil {
		fi, err = os.Stat(f.real)
	}
	switch {
	case errors.Is(err, atomicfile.ErrNotRegular) || errors.Is(err, syscall.EISDIR):
		return nil, &refused{"is not a regular file: move it away, then run again"}
	case err != nil:
		return nil, fmt.Errorf("reading %s: %s", f.real, words.Describe(err))
	}
	f.data, f.mode = data, fi.Mode().Perm()
	return f, nil
}

// writable refuses to change a file its owner may not write: the user
// protected it (the check is on the mode, which binds root too).
func (f *file) writable() error {
	if f.data != nil && f.mode&0o200 == 0 {
		return &refused{fmt.Sprintf("is read-only (mode %04o): hist leaves a file you protected as it is; make it writable (chmod u+w %s), then run again", f.mode, f.real)}
	}
	return nil
}

// backupMark names hist's copies of a file it changed: NAME.hist-backup-<time>.
const backupMark = ".hist-backup-"

// backups reads the hist backups of f, newest first.
func (f *file) backups() []backup {
	ents, _ := os.ReadDir(filepath.Dir(f.real))
	prefix := filepath.Base(f.real) + backupMark
	var names []string
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), prefix) && e.Type().IsRegular() {
			names = append(names, e.Name())
		}
	}
	slices.SortFunc(names, func(a, b string) int { // newest first: longer names are later ones of the same second
		return cmp.Or(len(b)-len(a), strings.Compare(b, a))
	})
	var out []backup
	for _, n := range names {
		p := filepath.Join(filepath.Dir(f.real), n)
		if data, err := atomicfile.ReadRegular(p); err == nil {
			out = append(out, backup{p, data})
		}
	}
	return out
}

// writeBackup keeps data beside path as a new file
// NAME.hist-backup-YYYYMMDD-HHMMSS (-2, -3… within one second), 0600:
// never over a file that is there.
func writeBackup(path string, data []byte, now time.Time) (string, error) {
	base := path + backupMark + now.Format("20060102-150405")
	for n := 1; ; n++ {
		name := base
		if n > 1 {
			name = fmt.Sprintf("%s-%d", base, n)
		}
		if err := atomicfile.WriteNew(name, data); !errors.Is(err, fs.ErrExist) {
			return name, err
		}
	}
}

// change is one file to write or remove.
type change struct {
	f      *file
	data   []byte      // the new content
	remove bool        // remove the file instead
	mode   os.FileMode // a new file's permissions
	backup bool        // keep the file as it was in a hist backup first
	drop   string      // a hist backup to remove once done (the file is its bytes again)
	mkdir  string      // a folder to make first
	rmdir  string      // a folder to remove after, when it is empty
	did    string      // what was done, for the user: "added the … hook to PATH"
	would  string      // the same, in a dry run
}

// apply makes ch, and returns the name of the backup it kept ("" none).
// Each step is atomic; a failure leaves the file as it was (a backup
// already written stays).
func (ch *change) apply(now time.Time) (string, error) {
	if ch.mkdir != "" {
		if err := os.Mkdir(ch.mkdir, atomicfile.DirPerm); err != nil && !errors.Is(err, fs.ErrExist) {
			return "", err
		}
		if err := atomicfile.SyncDir(filepath.Dir(ch.mkdir)); err != nil {
			return "", err
		}
	}
	kept := ""
	if ch.backup && ch.f.data != nil {
		var err error
		if kept, err = writeBackup(ch.f.real, ch.f.data, now); err != nil {
			return "", err
		}
	}
	if err := ch.write(); err != nil {
		return kept, err
	}
	if ch.drop != "" {
		os.Remove(ch.drop)
	}
	if ch.rmdir != "" {
		os.Remove(ch.rmdir) // fails, as it should, when something is left in it
	}
	return kept, nil
}

func (ch *change) write() error {
	if ch.remove { // a link goes, not the file it names
		if err := os.Remove(ch.f.path); err != nil {
			return err
		}
		return atomicfile.SyncDir(filepath.Dir(ch.f.path))
	}
	mode := ch.mode
	if ch.f.data != nil {
		mode = ch.f.mode
	}
	p, err := atomicfile.Create(ch.f.real)
	if err != nil {
		return err
	}
	defer p.Cleanup()
	if _, err := p.Write(ch.data); err != nil {
		return err
	}
	if err := p.Chmod(mode); err != nil {
		return err
	}
	return p.Commit()
}
