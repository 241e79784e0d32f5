package opencode

import (
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"hist/lib/transcript"
	"hist/lib/transcript/internal/rosqlite"
)

// A database's cursor (transcript.Cursor.Context) says which rows a read
// took: in each table of messages and parts, those up to a rowid, and the
// latest time of a prompt found. SQLite gives a new row a rowid above
// every row's in its table, so the rows after the marks are the ones
// written since (a message, a 1.x part that came after its message); a
// mark holds while the row it names is still there under the same id
// (checked: a row deleted, or rowids renumbered by VACUUM, has the
// database read whole).
//
// A prompt read from its cursor is emitted only when it cannot be the
// copy of one read before: its time is after the latest time read and not
// before its session's start (a fork's copies keep their original times,
// from before the fork). Otherwise the database is read whole, so that a
// prompt goes, as in every whole read, to the earliest session that holds
// it.

// cursorVersion starts a Context this reader wrote; any other is not
// understood, and the database is read whole.
const cursorVersion = "oc1"

// The tables with marks.
const (
	markMessage = iota
	markPart
	markSessionMessage
	nMarks
)

var markTables = [nMarks]string{"message", "part", "session_message"}

// mark is the last row of a table a read took: its rowid, and the hash
// of its id (0, 0: the table was empty or missing).
type mark struct {
	rowid  int64
	anchor uint64
}

type marks [nMarks]mark

type cursor struct {
	marks
	latest int64 // the latest prompt time read (unix ms)
}

func (c cursor) String() string {
	b := []byte(cursorVersion)
	b = append(b, ' ')
	b = strconv.AppendInt(b, c.latest, 10)
	for _, m := range c.marks {
		b = append(b, ' ')
		b = strconv.AppendInt(b, m.rowid, 10)
		b = append(b, ' ')
		b = strconv.AppendUint(b, m.anchor, 10)
	}
	return string(b)
}

// parseCursor returns the cursor s holds, or nil when it holds none this
// reader understands.
func parseCursor(s string) *cursor {
	f := strings.Fields(s)
	if len(f) != 2+2*nMarks || f[0] != cursorVersion {
		return nil
	}
	var c cursor
	var err error
	if c.latest, err = strconv.ParseInt(f[1], 10, 64); err != nil {
		return nil
	}
	for i := range c.marks {
		if c.marks[i].rowid, err = strconv.ParseInt(f[2+2*i], 10, 64); err != nil {
			return nil
		}
		if c.marks[i].anchor, err = strconv.ParseUint(f[3+2*i], 10, 64); err != nil {
			return nil
		}
	}
	return &c
}

// markRows returns the database's marks now; ok is false when a table
// has no rowids (then it is read whole, with no cursor).
func markRows(db *rosqlite.DB, tables map[string]bool) (m marks, ok bool) {
	for i, t := range markTables {
		if !tables[t] {
			continue
		}
		var rowid sql.NullInt64
		var id sql.NullString
		err := db.QueryRow(fmt.Sprintf(`SELECT rowid, id FROM "%s" ORDER BY rowid DESC LIMIT 1`, t)).Scan(&rowid, &id)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			continue
		case err != nil:
			// No rowid or no id column: nothing to mark rows by (a read
			// error is the whole read's to report).
			return marks{}, false
		}
		m[i] = mark{rowid.Int64, transcript.HeadSum([]byte(id.String)) | 1}
	}
	return m, true
}

// hold reports whether each marked row is still there under its id.
func (m *marks) hold(db *rosqlite.DB) bool {
	for i, mk := range m {
		if mk.anchor == 0 {
			continue
		}
		var id sql.NullString
		err := db.QueryRow(fmt.Sprintf(`SELECT id FROM "%s" WHERE rowid = ?`, markTables[i]), mk.rowid).Scan(&id)
		if err != nil || transcript.HeadSum([]byte(id.String))|1 != mk.anchor {
			// Gone, renumbered, or the table itself (no such table: read
			// whole, which says what is wrong with it).
			return false
		}
	}
	return true
}

// sure reports whether none of recs, read from the cursor, can be the
// copy of a prompt read before it.
func (c *cursor) sure(recs []rec) bool {
	for _, x := range recs {
		if !x.p.Approx && (x.p.TS <= c.latest || x.p.TS < x.sessCreated) {
			return false
		}
	}
	return true
}

// span returns the condition on table t's rowids that picks the rows to
// read, with its arguments: the rows after the cursor's mark, up to the
// marks taken as the read began ("" when the read takes every row).
func (r *reader) span(t int) (string, []any) {
	switch {
	case r.upto == nil:
		return "", nil
	case r.upto[t].anchor == 0:
		return " AND 0", nil // the table was empty: its rows are later
	case r.from == nil || r.from[t].anchor == 0:
		return " AND rowid <= ?", []any{r.upto[t].rowid}
	}
	return " AND rowid > ? AND rowid <= ?", []any{r.from[t].rowid, r.upto[t].rowid}
}
