package rosqlite

import (
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	_ "modernc.org/sqlite" // the driver that Open uses
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

func TestInPlaceReadOnly(t *testing.T) {
	// Characters that mean something in a URI are escaped.
	dir := filepath.Join(t.TempDir(), "odd ?#% name")
	path := filepath.Join(dir, "a.db")
	create(t, path)
	before := files(t, dir)
	db, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if db.tmp != "" {
		t.Error("a quiet rollback-journal database is read in place")
	}
	if got := read(t, db); len(got) != 1 || got[0] != "one" {
		t.Errorf("got %v", got)
	}
	if _, err := db.Exec(`INSERT INTO t VALUES ('two')`); err == nil {
		t.Error("a write went through")
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if after := files(t, dir); after != before {
		t.Errorf("files changed:\n%s\n---\n%s", before, after)
	}
}

func TestWALIsCopied(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "wal ?x")
	path := filepath.Join(dir, "a.db")
	create(t, path, `PRAGMA journal_mode=WAL`)
	before := files(t, dir)
	db, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if db.tmp == "" {
		t.Error("a WAL database is read from a copy")
	}
	if got := read(t, db); len(got) != 1 {
		t.Errorf("got %v", got)
	}
	tmp := db.tmp
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(tmp); !os.IsNotExist(err) {
		t.Errorf("the private copy %s is left: %v", tmp, err)
	}
	if after := files(t, dir); after != before {
		t.Errorf("files changed:\n%s\n---\n%s", before, after)
	}
}

func TestLockedFallsBackToCopy(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a.db")
	create(t, path)
	w, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	conn, err := w.Conn(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(t.Context(), `BEGIN EXCLUSIVE`); err != nil {
		t.Fatal(err)
	}
	journal := !os.IsNotExist(func() error { _, err := os.Stat(path + "-journal"); return err }())
	start := time.Now()
	db, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if db.tmp == "" {
		t.Error("a locked database is read from a copy")
	}
	if !journal && time.Since(start) < BusyTimeout {
		t.Errorf("fell back after %v without waiting for the lock", time.Since(start))
	}
	if got := read(t, db); len(got) != 1 {
		t.Errorf("got %v", got)
	}
	conn.ExecContext(t.Context(), `ROLLBACK`)
}

func TestNotADatabase(t *testing.T) {
	dir := t.TempDir()
	for name, data := range map[string]string{
		"short":   "SQLite format 3\x00",
		"garbage": strings.Repeat("x", 4096),
	} {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
		if db, err := Open(path); err == nil {
			db.Close()
			t.Errorf("%s: opened", name)
		}
	}
	if _, err := Open(filepath.Join(dir, "missing")); err == nil {
		t.Error("a missing file opened")
	}
	if _, err := os.Stat(filepath.Join(dir, "missing")); !os.IsNotExist(err) {
		t.Error("opening created the file")
	}
}

func TestURIPath(t *testing.T) {
	if got := uriPath("/a b/c?d#e%f"); got != "/a b/c%3Fd%23e%25f" {
		t.Errorf("got %q", got)
	}
}
