// Package rosqlite reads an agent's SQLite database without writing a byte
// to it or to the files beside it.
//
// A database with nothing pending beside it (no journal, and a write-ahead
// log that is missing or empty) holds every commit in its main file: it is
// read in place, immutable (no locks taken, no -shm or -wal made). Its
// files' sizes and times are compared before and after the read, and a
// change is an error that passes: an immutable reader may have seen it
// half done. Every other database is read from a private copy: one whose
// WAL holds commits, and one with a journal beside it (a hot journal needs
// a rollback, which is a write). The copy takes the database and its -wal
// or -journal file, never -shm (SQLite rebuilds the WAL index from the
// WAL), into a fresh 0700 temporary folder removed after the read.
//
// A database is read on a pooled in-memory SQLite connection, attached
// to it (opening a connection costs more than reading a small database):
// its tables are named without a schema, as the connection has no other.
//
// A database that cannot be opened or read is an error. Undecodable tells
// the ones whose content is at fault (not SQLite, truncated, corrupt),
// which reading again does not mend until the file changes, from those
// that pass (an I/O error, a database changing as it is read).
package rosqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"hist/lib/transcript"
)

// copyAttempts bounds the retries when a database changes while it is copied.
const copyAttempts = 4

// DB is a database opened for reading.
type DB struct {
	conn      *sql.Conn
	tmp       string   // private copy's folder, removed by close; "" when read in place
	immutable string   // the database read in place, else ""
	stamps    [3]stamp // its files' stamps when opened
}

var (
	// errChanged: a database read in place changed while it was read.
	errChanged    = errors.New("the database changed while it was read; try again when the agent is idle")
	errNotRegular = errors.New("not a regular file")
)

// ModTime is the database file's modification time when it was opened.
func (d *DB) ModTime() time.Time { return d.stamps[0].mtime }

// Query runs a query on the database.
func (d *DB) Query(query string, args ...any) (*sql.Rows, error) {
	return d.conn.QueryContext(context.Background(), query, args...)
}

// QueryRow runs a query that returns one row on the database.
func (d *DB) QueryRow(query string, args ...any) *sql.Row {
	return d.conn.QueryRowContext(context.Background(), query, args...)
}

// close detaches the database, gives the connection back and removes the
// private copy, if any. For a database read in place, it reports
// errChanged when its files changed since open: what was read may be
// wrong.
func (d *DB) close() error {
	_, err := d.conn.ExecContext(context.Background(), "DETACH DATABASE src")
	if err != nil {
		// The connection still holds the database: it is not reused.
		d.conn.Raw(func(any) error { return driver.ErrBadConn })
	}
	d.conn.Close()
	if d.tmp != "" {
		if rerr := os.RemoveAll(d.tmp); err == nil {
			err = rerr
		}
	}
	if d.immutable != "" {
		if now, serr := stamps(d.immutable); serr != nil || now != d.stamps {
			err = errChanged
		}
	}
	return err
}

// Undecodable reports whether err says that a database's content is at
// fault: not SQLite, or corrupt (SQLite's SQLITE_CORRUPT and
// SQLITE_NOTADB).
func Undecodable(err error) bool {
	var se interface{ Code() int } // the driver's error (modernc.org/sqlite's *Error)
	if !errors.As(err, &se) {
		return false
	}
	c := se.Code() & 0xff // the primary result code
	return c == sqliteCorrupt || c == sqliteNotADB
}

// undecodable says what is wrong with a database whose content is at
// fault, in a user's words.
func undecodable(err error) error {
	var se interface{ Code() int }
	if errors.As(err, &se) && se.Code()&0xff == sqliteNotADB {
		return errors.New("not a SQLite database")
	}
	return fmt.Errorf("a corrupt SQLite database: %w", err)
}

// pool holds the in-memory connections databases are attached to.
//
// The driver is modernc.org/sqlite's, registered as "sqlite" by the
// program that reads databases (a blank import): this package does not
// import it, so that the programs that link the readers without calling
// them (hist-capture) do not start SQLite up; without it, database/sql
// says "unknown driver".
var pool = sync.OnceValues(func() (*sql.DB, error) {
	return sql.Open("sqlite", ":memory:?_pragma=query_only(1)")
})

// open opens the database at path for reading. An empty file is an empty
// database (no tables).
func open(path string) (*DB, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	st, err := stamps(abs)
	switch {
	case err != nil:
		return nil, err
	case !st[0].exists:
		return nil, &fs.PathError{Op: "open", Path: abs, Err: fs.ErrNotExist}
	case !st[0].mode.IsRegular():
		return nil, errNotRegular
	}
	d := &DB{stamps: st}
	uri := "file:" + uriPath(abs)
	if wal, journal := st[1], st[2]; wal.size == 0 && !journal.exists {
		d.immutable = abs
		uri += "?mode=ro&immutable=1"
	} else {
		if d.tmp, err = copyDB(abs); err != nil {
			return nil, err
		}
		// The copy is ours: attached read-write so that SQLite can replay
		// its WAL or roll back its journal (the connection is query_only).
		uri = "file:" + uriPath(filepath.Join(d.tmp, "db"))
	}
	if err := d.attach(uri); err != nil {
		if d.tmp != "" {
			os.RemoveAll(d.tmp)
		}
		return nil, err
	}
	return d, nil
}

// attach attaches uri to a pooled connection as src.
func (d *DB) attach(uri string) error {
	db, err := pool()
	if err != nil {
		return err
	}
	if d.conn, err = db.Conn(context.Background()); err != nil {
		return err
	}
	if _, err = d.conn.ExecContext(context.Background(), "ATTACH DATABASE ? AS src", uri); err != nil {
		d.conn.Close()
	}
	return err
}

// copyDB copies the database (and its -wal or -journal) into a private
// folder and returns the folder.
func copyDB(abs string) (string, error) {
	tmp, err := os.MkdirTemp("", "hist-sqlite-")
	if err != nil {
		return "", err
	}
	dst := filepath.Join(tmp, "db")
	for attempt := 1; ; attempt++ {
		stable, err := copySet(abs, dst)
		if err != nil || stable {
			if err != nil {
				os.RemoveAll(tmp)
			}
			return tmp, err
		}
		if attempt == copyAttempts {
			os.RemoveAll(tmp)
			return "", errors.New("the database changed while it was copied; try again when the agent is idle")
		}
		time.Sleep(time.Duration(attempt) * 50 * time.Millisecond)
	}
}

type stamp struct {
	exists bool
	mode   fs.FileMode
	size   int64
	mtime  time.Time
}

func stat(path string) (stamp, error) {
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return stamp{}, nil
	}
	if err != nil {
		return stamp{}, err
	}
	return stamp{true, fi.Mode(), fi.Size(), fi.ModTime()}, nil
}

// suffixes name a database's files: itself, its WAL and its journal.
var suffixes = [3]string{"", "-wal", "-journal"}

// stamps returns the stamps of abs's files (see suffixes).
func stamps(abs string) (st [3]stamp, err error) {
	for i, s := range suffixes {
		if st[i], err = stat(abs + s); err != nil {
			return st, err
		}
	}
	return st, nil
}

// copySet copies abs, abs-wal and abs-journal to dst, dst-wal and
// dst-journal, and reports whether none of them changed meanwhile.
func copySet(abs, dst string) (stable bool, err error) {
	before, err := stamps(abs)
	if err != nil {
		return false, err
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
	after, err := stamps(abs)
	return after == before, err
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

// uriPath escapes an absolute path for a SQLite "file:" URI.
func uriPath(abs string) string {
	return uriEscaper.Replace(filepath.ToSlash(filepath.Clean(abs)))
}

var uriEscaper = strings.NewReplacer("%", "%25", "?", "%3F", "#", "%23")

// SQLite's primary result codes for a file whose content is at fault.
const (
	sqliteCorrupt = 11
	sqliteNotADB  = 26
)

// Tables returns the names of the database's tables.
func (d *DB) Tables() (map[string]bool, error) {
	return d.names("SELECT name FROM src.sqlite_master WHERE type = 'table'")
}

// Columns returns the names of a table's columns.
func (d *DB) Columns(table string) (map[string]bool, error) {
	return d.names("SELECT name FROM pragma_table_info(?, 'src')", table)
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

// Read opens the database at path, hands it to read and closes it. A path
// that is not a regular file is counted in st.Skipped, and ok is false. A
// database whose content is at fault is named in st.Undecodable, and ok
// is false; another error is returned as a *transcript.ReadError. A
// database read is counted in st, with its write-ahead log's bytes.
func Read(path string, st *transcript.Stats, read func(*DB) error) (ok bool, err error) {
	db, err := open(path)
	if err == nil {
		err = read(db)
		if cerr := db.close(); errors.Is(cerr, errChanged) || err == nil {
			err = cerr // a change: what was read may be wrong, an error with it too
		}
	}
	if errors.Is(err, errNotRegular) {
		st.Skipped++
		return false, nil
	}
	if Undecodable(err) {
		st.Undecodable = append(st.Undecodable, transcript.Undecodable{Path: path, Err: undecodable(err)})
		return false, nil
	}
	if err != nil {
		return false, &transcript.ReadError{Path: path, Err: err}
	}
	st.Files++
	st.Bytes += db.stamps[0].size + db.stamps[1].size
	return true, nil
}
