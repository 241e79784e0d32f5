package main

import (
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

var (
	// opencode's ids: a prefix, 12 hex digits of time, 14 random characters.
	opencodeID = regexp.MustCompile(`\b(ses|msg|prt|evt)_([0-9a-f]{12})([0-9A-Za-z]{6})([0-9A-Za-z]{8})\b`)
	// A project's id is its repository's first commit.
	projectID = regexp.MustCompile(`\b[0-9a-f]{40}\b`)
	// opencode's epoch times (milliseconds) in its JSON.
	opencodeEpoch = regexp.MustCompile(`"(created|completed|updated|start|end|time|timestamp)":([0-9]{13})\b`)
)

// table is a fixture table's rows.
type table struct {
	name string
	cols []string
	rows [][]any
}

// fixtureDB is one fixture database: its schema and rows.
type fixtureDB struct {
	schema []string
	tables []table
}

func readFixtureDB(path string) (fixtureDB, error) {
	var f fixtureDB
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro&immutable=1")
	if err != nil {
		return f, err
	}
	defer db.Close()
	rows, err := db.Query(`SELECT type, name, sql FROM sqlite_master WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite_%' ORDER BY type = 'index', rowid`)
	if err != nil {
		return f, err
	}
	var names []string
	for rows.Next() {
		var typ, name, q string
		if err := rows.Scan(&typ, &name, &q); err != nil {
			return f, err
		}
		f.schema = append(f.schema, q)
		if typ == "table" {
			names = append(names, name)
		}
	}
	if err := rows.Close(); err != nil {
		return f, err
	}
	for _, name := range names {
		t, err := readTable(db, name)
		if err != nil {
			return f, err
		}
		f.tables = append(f.tables, t)
	}
	return f, nil
}

func readTable(db *sql.DB, name string) (table, error) {
	t := table{name: name}
	rows, err := db.Query(`SELECT * FROM "` + name + `"`)
	if err != nil {
		return t, err
	}
	defer rows.Close()
	if t.cols, err = rows.Columns(); err != nil {
		return t, err
	}
	for rows.Next() {
		vals := make([]any, len(t.cols))
		ptrs := make([]any, len(vals))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return t, err
		}
		t.rows = append(t.rows, vals)
	}
	return t, rows.Err()
}

// opencodeCopier makes copy i of an opencode database's values: its ids
// end with the copy's number, its project ids begin with the project
// slot's.
func (c copier) opencode(v any, col string) any {
	switch x := v.(type) {
	case string:
		return string(c.opencodeBytes([]byte(x)))
	case []byte:
		return c.opencodeBytes(x)
	case int64:
		if strings.HasPrefix(col, "time_") && x >= 1e12 && !c.sameTimes {
			return shiftEpoch(x, c.i)
		}
	}
	return v
}

func (c copier) opencodeBytes(b []byte) []byte {
	b = opencodeID.ReplaceAllFunc(b, func(m []byte) []byte {
		sub := opencodeID.FindSubmatch(m)
		return []byte(fmt.Sprintf("%s_%s%s%08x", sub[1], sub[2], sub[3], c.i))
	})
	b = projectID.ReplaceAllFunc(b, func(m []byte) []byte { return []byte(fmt.Sprintf("%08x%s", c.slot, m[8:])) })
	return c.common(b)
}

// genOpencode writes DIR/opencode/opencode.db: the fixture databases'
// schema, then their rows copy after copy (rows that are the same in every
// copy, such as the migrations and a project's, once).
func genOpencode(o options, tag string) (written, error) {
	var fixtures []fixtureDB
	for _, in := range o.in {
		err := filepath.WalkDir(in, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.Name() != "opencode.db" {
				return err
			}
			f, err := readFixtureDB(p)
			fixtures = append(fixtures, f)
			return err
		})
		if err != nil {
			return written{}, err
		}
	}
	if len(fixtures) == 0 {
		return written{}, fmt.Errorf("no opencode.db in %v", o.in)
	}
	path := filepath.Join(o.out, "opencode", "opencode.db")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return written{}, err
	}
	db, err := sql.Open("sqlite", path+"?_pragma=journal_mode(off)&_pragma=synchronous(off)")
	if err != nil {
		return written{}, err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	for _, q := range fixtures[0].schema {
		if _, err := db.Exec(q); err != nil {
			return written{}, err
		}
	}
	// Each fixture database names three projects: opencode's two, the TUI's.
	slots := max(o.projects/3, 1)
	var w written
	for i := 0; w.bytes < o.mb<<20; {
		tx, err := db.Begin()
		if err != nil {
			return w, err
		}
		for end := i + 20; i < end; i++ {
			c := copier{i: i, slot: i % slots, tag: tag, sameTimes: o.sameTimes, epoch: opencodeEpoch}
			for _, f := range fixtures {
				if err := insertCopy(tx, f, c); err != nil {
					tx.Rollback()
					return w, err
				}
			}
			w.prompts += o.want
		}
		if err := tx.Commit(); err != nil {
			return w, err
		}
		fi, err := os.Stat(path)
		if err != nil {
			return w, err
		}
		w.bytes = fi.Size()
	}
	// The journal mode opencode leaves in the file's header.
	if _, err := db.Exec(`PRAGMA journal_mode=WAL`); err != nil {
		return w, err
	}
	w.files = 1
	return w, db.Close()
}

func insertCopy(tx *sql.Tx, f fixtureDB, c copier) error {
	for _, t := range f.tables {
		if len(t.rows) == 0 {
			continue
		}
		q := fmt.Sprintf(`INSERT OR IGNORE INTO "%s" ("%s") VALUES (?%s)`, t.name,
			strings.Join(t.cols, `", "`), strings.Repeat(", ?", len(t.cols)-1))
		stmt, err := tx.Prepare(q)
		if err != nil {
			return err
		}
		for _, row := range t.rows {
			vals := make([]any, len(row))
			for j, v := range row {
				vals[j] = c.opencode(v, t.cols[j])
			}
			if _, err := stmt.Exec(vals...); err != nil {
				stmt.Close()
				return err
			}
		}
		stmt.Close()
	}
	return nil
}

// appendOpencode adds one typed prompt to the database at path: to the
// session of cwd (made when missing), or without -cwd to its first
// top-level session.
func appendOpencode(path, text string, ms int64, cwd string) error {
	db, err := sql.Open("sqlite", path+"?_pragma=busy_timeout(5000)")
	if err != nil {
		return err
	}
	defer db.Close()
	sum := sha256.Sum256([]byte(text))
	tail := hex.EncodeToString(sum[:7])
	var sess string
	if cwd != "" {
		s := sha256.Sum256([]byte(cwd))
		sess = "ses_" + hex.EncodeToString(s[:6]) + hex.EncodeToString(s[6:13])
		_, err = db.Exec(`INSERT OR IGNORE INTO session (id, project_id, slug, directory, title, version, time_created, time_updated)
			VALUES (?, 'global', 'bench-watch', ?, 'bench', '1.18.33', ?, ?)`, sess, cwd, ms, ms)
	} else {
		err = db.QueryRow(`SELECT id FROM session WHERE parent_id IS NULL ORDER BY id LIMIT 1`).Scan(&sess)
	}
	if err != nil {
		return err
	}
	msg := fmt.Sprintf("msg_%012x%s", ms<<12&(1<<48-1), tail)
	prt := fmt.Sprintf("prt_%012x%s", ms<<12&(1<<48-1)|1, tail)
	data := fmt.Sprintf(`{"role":"user","time":{"created":%d},"agent":"build","model":{"providerID":"mock","modelID":"mock-model"}}`, ms)
	quoted := jsonText(text)
	part := fmt.Sprintf(`{"type":"text","text":%s}`, quoted)
	tx, err := db.Begin()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.Exec(`INSERT INTO message (id, session_id, time_created, time_updated, data) VALUES (?, ?, ?, ?, ?)`, msg, sess, ms, ms, data); err != nil {
		return err
	}
	if _, err := tx.Exec(`INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) VALUES (?, ?, ?, ?, ?, ?)`, prt, msg, sess, ms, ms, part); err != nil {
		return err
	}
	return tx.Commit()
}
