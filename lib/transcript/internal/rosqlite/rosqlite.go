// Package rosqlite opens an agent's SQLite database for reading without
// writing a byte to it or to the files beside it.
//
// A database in rollback-journal mode, with no journal beside it, is opened
// in place as a read-only URI (mode=ro) with query_only set. Every other
// database is read from a private copy: one in WAL mode (SQLite would create
// or update the -shm and -wal files beside it even for a read-only reader),
// one with a journal beside it (a hot journal needs a rollback, which is a
// write), and one another process holds locked. The copy takes the database
// and its -wal or -journal file, never -shm (SQLite rebuilds the WAL index
// from the WAL), into a fresh 0700 temporary folder that Close removes.
//
// A database that cannot be opened or read is an error. Undecodable tells
// the ones whose content is at fault (not SQLite, truncated, corrupt),
// which reading again does not mend until the file changes, from those
// that pass (an I/O error, a lock held, a database changing faster than
// it can be copied).
package rosqlite

import (
	"bytes"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"hist/lib/transcript"
)

// BusyTimeout is how long a reader of a database opened in place waits for
// another process's lock before it falls back to a private copy.
var BusyTimeout = 500 * time.Millisecond

// copyAttempts bounds the retries when a database changes while it is copied.
const copyAttempts = 4

// DB is a database opened for reading.
type DB struct {
	*sql.DB
	tmp string // private copy's folder, removed by Close; "" when read in place
}

// Close closes the database and removes the private copy, if any.
func (d *DB) Close() error {
	err := d.DB.Close()
	if d.tmp != "" {
		if rerr := os.RemoveAll(d.tmp); err == nil {
			err = rerr
		}
	}
	return err
}

var magic = []byte("SQLite format 3\x00")

// errNotSQLite: the file does not start as a SQLite database does.
var errNotSQLite = errors.New("not a SQLite database")

// Undecodable reports whether err says that a database's content is at
// fault: not SQLite, or corrupt (SQLite's SQLITE_CORRUPT and
// SQLITE_NOTADB).
func Undecodable(err error) bool {
	c := code(err)
	return c == sqliteCorrupt || c == sqliteNotADB || errors.Is(err, errNotSQLite)
}

// isBusy reports whether err is SQLite's "database is locked" or "table is
// locked".
func isBusy(err error) bool {
	c := code(err)
	return c == sqliteBusy || c == sqliteLocked
}

// code returns SQLite's primary result code in err, or 0.
func code(err error) int {
	var se interface{ Code() int } // the driver's error (modernc.org/sqlite's *Error)
	if errors.As(err, &se) {
		return se.Code() & 0xff
	}
	return 0
}

// Open opens the database at path for reading. An empty file is an empty
// database (no tables).
//
// The driver is modernc.org/sqlite's, registered as "sqlite" by the
// program that reads databases (a blank import): this package does not
// import it, so that the programs that link the readers without calling
// them (hist-capture) do not start SQLite up; without it, database/sql
// says "unknown driver".
func Open(path string) (*DB, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("not a regular file")
	}
	var hdr [100]byte
	if fi.Size() > 0 {
		f, err := os.Open(abs)
		if err != nil {
			return nil, err
		}
		n, err := io.ReadFull(f, hdr[:])
		f.Close()
		if err != nil && n < len(hdr) {
			if err == io.ErrUnexpectedEOF || err == io.EOF {
				return nil, fmt.Errorf("%w (truncated header)", errNotSQLite)
			}
			return nil, err
		}
		if !bytes.Equal(hdr[:len(magic)], magic) {
			return nil, errNotSQLite
		}
	}
	wal := hdr[18] == 2 || hdr[19] == 2
	if !wal && !exists(abs+"-wal") && !exists(abs+"-journal") {
		db, err := openInPlace(abs)
		if err == nil {
			return db, nil
		}
		if !isBusy(err) {
			return nil, err
		}
	}
	return openCopy(abs)
}

// openInPlace opens a rollback-journal database read-only and checks that
// it can be read now.
func openInPlace(abs string) (*DB, error) {
	db, err := sqlOpen("file:" + uriPath(abs) + "?mode=ro&_pragma=query_only(1)" +
		fmt.Sprintf("&_pragma=busy_timeout(%d)", BusyTimeout.Milliseconds()))
	if err != nil {
		return nil, err
	}
	return &DB{DB: db}, nil
}

// sqlOpen opens dsn on one connection and reads the schema, which needs a
// shared lock and page 1.
func sqlOpen(dsn string) (*sql.DB, error) {
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	var n int
	if err := db.QueryRow("SELECT count(*) FROM sqlite_master").Scan(&n); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

// openCopy copies the database (and its -wal or -journal) into a private
// folder and opens the copy.
func openCopy(abs string) (*DB, error) {
	tmp, err := os.MkdirTemp("", "hist-sqlite-")
	if err != nil {
		return nil, err
	}
	ok := false
	defer func() {
		if !ok {
			os.RemoveAll(tmp)
		}
	}()
	dst := filepath.Join(tmp, "db")
	for attempt := 1; ; attempt++ {
		stable, err := copySet(abs, dst)
		if err != nil {
			return nil, err
		}
		if stable {
			break
		}
		if attempt == copyAttempts {
			return nil, errors.New("the database changed while it was copied; try again when the agent is idle")
		}
		time.Sleep(time.Duration(attempt) * 50 * time.Millisecond)
	}
	// The copy is ours: opened read-write so that SQLite can replay its WAL
	// or roll back its journal, and query_only so that nothing else changes.
	db, err := sqlOpen("file:" + uriPath(dst) + "?_pragma=query_only(1)")
	if err != nil {
		return nil, err
	}
	ok = true
	return &DB{DB: db, tmp: tmp}, nil
}

type stamp struct {
	exists bool
	size   int64
	mtime  time.Time
}

func stat(path string) (stamp, error) {
	fi, err := os.Stat(path)
	if errors.Is(err, os.ErrNotExist) {
		return stamp{}, nil
	}
	if err != nil {
		return stamp{}, err
	}
	return stamp{true, fi.Size(), fi.ModTime()}, nil
}

// copySet copies abs, abs-wal and abs-journal to dst, dst-wal and
// dst-journal, and reports whether none of them changed meanwhile.
func copySet(abs, dst string) (stable bool, err error) {
	suffixes := []string{"", "-wal", "-journal"}
	var before [3]stamp
	for i, s := range suffixes {
		if before[i], err = stat(abs + s); err != nil {
			return false, err
		}
	}
	for i, s := range suffixes {
		os.Remove(dst + s)
		if !before[i].exists {
			continue
		}
		if err := copyFile(abs+s, dst+s); err != nil {
			if i > 0 && errors.Is(err, os.ErrNotExist) {
				// The WAL or journal went away (checkpoint, commit): copy again.
				return false, nil
			}
			return false, err
		}
	}
	for i, s := range suffixes {
		after, err := stat(abs + s)
		if err != nil {
			return false, err
		}
		if after != before[i] {
			return false, nil
		}
	}
	return true, nil
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// uriPath escapes an absolute path for a SQLite "file:" URI.
func uriPath(abs string) string {
	return uriEscaper.Replace(filepath.ToSlash(filepath.Clean(abs)))
}

var uriEscaper = strings.NewReplacer("%", "%25", "?", "%3F", "#", "%23")

// SQLite's primary result codes: a lock held by another connection, and
// a file whose content is at fault.
const (
	sqliteBusy    = 5
	sqliteLocked  = 6
	sqliteCorrupt = 11
	sqliteNotADB  = 26
)

// Tables returns the names of the database's tables.
func (d *DB) Tables() (map[string]bool, error) {
	return d.names("SELECT name FROM sqlite_master WHERE type = 'table'")
}

// Columns returns the names of a table's columns.
func (d *DB) Columns(table string) (map[string]bool, error) {
	return d.names("SELECT name FROM pragma_table_info(?)", table)
}

func (d *DB) names(query string, args ...any) (map[string]bool, error) {
	rows, err := d.Query(query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]bool{}
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return nil, err
		}
		out[name] = true
	}
	return out, rows.Err()
}

// Read opens the database at path, hands it to read and closes it. A
// database whose content is at fault is named in st.Undecodable, and ok
// is false; another error is returned as a *transcript.ReadError. A
// database read is counted in st, with its write-ahead log's bytes.
func Read(path string, st *transcript.Stats, read func(*DB) error) (ok bool, err error) {
	db, err := Open(path)
	if err == nil {
		err = read(db)
		db.Close()
	}
	if Undecodable(err) {
		st.Undecodable = append(st.Undecodable, transcript.Undecodable{Path: path, Err: err})
		return false, nil
	}
	if err != nil {
		return false, &transcript.ReadError{Path: path, Err: err}
	}
	st.Files++
	for _, s := range []string{"", "-wal"} {
		if fi, err := os.Stat(path + s); err == nil {
			st.Bytes += fi.Size()
		}
	}
	return true, nil
}
