package rosqlite

import (
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	_ "modernc.org/sqlite" // the driver that Open uses

	"hist/lib/transcript"
)

func create(t *testing.T, path string, pragmas ...string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", "file:"+uriPath(path))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	for _, q := range append(pragmas, `CREATE TABLE t (x text)`, `INSERT INTO t VALUES ('one')`) {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

func files(t *testing.T, dir string) string {
	t.Helper()
	var out []string
	filepath.Walk(dir, func(path string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			data, _ := os.ReadFile(path)
			out = append(out, fmt.Sprintf("%s %d %d %x", path, fi.Size(), fi.ModTime().UnixNano(), data))
		}
		return nil
	})
	return strings.Join(out, "\n")
}

func read(t *testing.T, db *DB) []string {
	t.Helper()
	rows, err := db.Query(`SELECT x FROM t ORDER BY rowid`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var x string
		if err := rows.Scan(&x); err != nil {
			t.Fatal(err)
		}
		out = append(out, x)
	}
	return out
}

// readAll reads path with Read, checking that what read sees is want and
// that nothing beside the database changed, and returns the DB it saw.
func readAll(t *testing.T, path string, want ...string) DB {
	t.Helper()
	dir := filepath.Dir(path)
	before := files(t, dir)
	var st transcript.Stats
	var seen DB
	ok, err := Read(path, &st, func(db *DB) error {
		seen = *db
		if got := read(t, db); strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("got %v, want %v", got, want)
		}
		if _, err := db.Query(`INSERT INTO t VALUES ('w')`); err == nil {
			t.Error("a write went through")
		}
		return nil
	})
	if !ok || err != nil || st.Files != 1 {
		t.Fatalf("ok %v, err %v, stats %+v", ok, err, st)
	}
	if after := files(t, dir); after != before {
		t.Errorf("files changed:\n%s\n---\n%s", before, after)
	}
	if seen.tmp != "" {
		if _, err := os.Stat(seen.tmp); !os.IsNotExist(err) {
			t.Errorf("the private copy %s is left: %v", seen.tmp, err)
		}
	}
	return seen
}

func TestQuietDatabasesInPlace(t *testing.T) {
	for _, mode := range []string{"DELETE", "WAL"} {
		// Characters that mean something in a URI are escaped.
		path := filepath.Join(t.TempDir(), "odd ?#% name", "a.db")
		create(t, path, `PRAGMA journal_mode=`+mode)
		if db := readAll(t, path, "one"); db.tmp != "" || db.immutable == "" {
			t.Errorf("%s: a database with nothing pending beside it is read in place", mode)
		}
	}
}

// writer opens path for writing, with automatic checkpoints off.
func writer(t *testing.T, path string) *sql.DB {
	t.Helper()
	w, err := sql.Open("sqlite", "file:"+uriPath(path)+"?_pragma=wal_autocheckpoint(0)")
	if err != nil {
		t.Fatal(err)
	}
	w.SetMaxOpenConns(1)
	t.Cleanup(func() { w.Close() })
	return w
}

func TestWALWithCommitsIsCopied(t *testing.T) {
	path := filepath.Join(t.TempDir(), "wal ?x", "a.db")
	create(t, path, `PRAGMA journal_mode=WAL`)
	if _, err := writer(t, path).Exec(`INSERT INTO t VALUES ('two')`); err != nil {
		t.Fatal(err)
	}
	if db := readAll(t, path, "one", "two"); db.tmp == "" {
		t.Error("a database whose WAL holds commits is read from a copy")
	}
}

func TestJournalIsCopied(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a.db")
	create(t, path)
	// A write in progress, spilled into the file: the journal beside it
	// holds what the file held.
	w := writer(t, path)
	for _, q := range []string{`PRAGMA cache_size=1`, `BEGIN`} {
		if _, err := w.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 200; i++ {
		if _, err := w.Exec(`INSERT INTO t VALUES (?)`, strings.Repeat("uncommitted ", 100)); err != nil {
			t.Fatal(err)
		}
	}
	if db := readAll(t, path, "one"); db.tmp == "" {
		t.Error("a database with a journal beside it is read from a copy")
	}
	if _, err := w.Exec(`ROLLBACK`); err != nil {
		t.Fatal(err)
	}
}

// A database read in place that changes meanwhile is an error that
// passes, not an undecodable file: what was read may be wrong.
func TestChangedWhileRead(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a.db")
	create(t, path, `PRAGMA journal_mode=WAL`)
	var st transcript.Stats
	ok, err := Read(path, &st, func(db *DB) error {
		if db.immutable == "" {
			t.Fatal("not read in place")
		}
		read(t, db)
		w := writer(t, path)
		if _, err := w.Exec(`INSERT INTO t VALUES ('two')`); err != nil {
			t.Fatal(err)
		}
		return w.Close() // checkpoints into the main file
	})
	var re *transcript.ReadError
	if ok || !errors.As(err, &re) || !errors.Is(err, errChanged) || len(st.Undecodable) != 0 || st.Files != 0 {
		t.Fatalf("ok %v, err %v, stats %+v", ok, err, st)
	}
	readAll(t, path, "one", "two")
}

func TestUnreadable(t *testing.T) {
	dir := t.TempDir()
	create(t, filepath.Join(dir, "good"))
	good, err := os.ReadFile(filepath.Join(dir, "good"))
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string]string{
		"magic only":       "SQLite format 3\x00",
		"truncated header": string(good[:50]),
		"truncated":        string(good[:len(good)/2]),
		"garbage":          strings.Repeat("x", 4096),
	} {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
		var st transcript.Stats
		ok, err := Read(path, &st, func(db *DB) error {
			var n int
			return db.QueryRow(`SELECT count(*) FROM t`).Scan(&n)
		})
		if ok || err != nil || len(st.Undecodable) != 1 || st.Undecodable[0].Path != path {
			t.Errorf("%s: ok %v, err %v, stats %+v", name, ok, err, st)
		}
	}
	var st transcript.Stats
	missing := filepath.Join(dir, "missing")
	if ok, err := Read(missing, &st, func(*DB) error { return nil }); ok || err == nil {
		t.Errorf("a missing file: ok %v, err %v", ok, err)
	}
	if _, err := os.Stat(missing); !os.IsNotExist(err) {
		t.Error("reading created the file")
	}
	if ok, err := Read(dir, &st, func(*DB) error { return nil }); ok || err != nil || st.Skipped != 1 {
		t.Errorf("a folder: ok %v, err %v, stats %+v", ok, err, st)
	}
}

func TestURIPath(t *testing.T) {
	if got := uriPath("/a b/c?d#e%f"); got != "/a b/c%3Fd%23e%25f" {
		t.Errorf("got %q", got)
	}
}
