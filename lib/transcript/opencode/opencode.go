// Package opencode reads the prompts a person typed into opencode from its
// databases and its older JSON storage.
//
// Where: the data folder is $XDG_DATA_HOME/opencode (default
// ~/.local/share/opencode). It holds opencode.db, the channel builds'
// opencode-<channel>.db, and, from before the SQLite migration, storage/
// (session/<project>/<ses>.json, message/<ses>/<msg>.json,
// part/<msg>/<prt>.json). $OPENCODE_DB names the one database to read
// instead (a relative name is under the data folder).
//
// What counts as a typed prompt:
//   - only top-level sessions (no parent id: child sessions are subagents
//     and task tools);
//   - 2.x tables (session_v2 / session_message): a "user" row's data.text;
//   - 1.x tables (session / message / part) and JSON storage: a message
//     whose role is "user"; its text parts, in id order, that are neither
//     synthetic nor ignored, joined by "\n"; a message with none is not a
//     prompt;
//   - never a prompt hist would not capture (blank, or a command).
//
// A prompt's time is data.time.created (else the row's time_created), its
// cwd the session's directory, its session the session id (what
// "opencode -s" takes) and its Key the message id, so a message found in
// two generations of storage, or in two databases, counts once (database
// rows win). A fork copies its parent's messages under new ids but with
// their original times: a prompt with the same text and the same time as
// one of an earlier session is the same event and counts once, under the
// earliest session. The texts found wait in a private temporary file
// while the prompts are sorted, so that a large database's are not held
// in memory.
//
// Databases are only read: see hist/lib/transcript/internal/rosqlite (a
// database with a journal or a write-ahead log pending beside it is read
// from a private copy, another in place, immutable). Extra
// tables and columns are ignored. A database whose content is at fault
// (corrupt, truncated, not SQLite) is passed over and named in
// Stats.Undecodable; one that cannot be read for another reason (an I/O
// error, a lock) stops the scan with a *transcript.ReadError: the import
// is retried later instead of being done from part of the history.
package opencode

import (
	"cmp"
	"crypto/sha256"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"hist/lib/identity"
	"hist/lib/jsonscan"
	"hist/lib/transcript"
	"hist/lib/transcript/internal/rosqlite"
)

// DefaultRoot is where opencode keeps its transcripts: the data folder
// ($XDG_DATA_HOME/opencode, default ~/.local/share/opencode), or the
// database $OPENCODE_DB names (":memory:" keeps nothing on disk, so the data
// folder is read).
func DefaultRoot(env transcript.Env, home string) string {
	data := filepath.Join(home, ".local", "share", "opencode")
	if x := env("XDG_DATA_HOME"); x != "" && filepath.IsAbs(x) {
		data = filepath.Join(x, "opencode")
	}
	if db := env("OPENCODE_DB"); db != "" && db != ":memory:" {
		if !filepath.IsAbs(db) {
			db = filepath.Join(data, db)
		}
		return db
	}
	return data
}

// Scan reads the databases and JSON storage files under root (or the one
// database root names), in session order, as transcript.Agent's Scan
// says; equal text at the same time counts once too. A message is found
// in one database or in the storage, so opencode's files are read
// together: when keep keeps none of them (its databases, their
// write-ahead logs, its storage files; each is offered to keep), nothing
// is read.
func Scan(root string, keep transcript.Keep, emit func(transcript.Prompt) error) (transcript.Stats, error) {
	if keep != nil && !anyKept(root, keep) {
		return transcript.Stats{}, nil
	}
	var r reader
	defer r.texts.close()
	fi, err := os.Stat(root)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return r.stats, nil
	case err != nil:
		return r.stats, &transcript.ReadError{Path: root, Err: err}
	case fi.Mode().IsRegular():
		if err := r.db(root); err != nil {
			return r.stats, err
		}
	case fi.IsDir():
		if err := r.folder(root); err != nil {
			return r.stats, err
		}
	default:
		r.stats.Skipped++
		return r.stats, nil
	}
	return r.stats, r.emitAll(emit)
}

// folder reads the data folder: its databases, then its JSON storage.
func (r *reader) folder(root string) error {
	chans, _ := filepath.Glob(filepath.Join(root, "opencode-*.db")) // in name order
	for _, path := range append([]string{filepath.Join(root, "opencode.db")}, chans...) {
		fi, err := os.Stat(path)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			continue
		case err != nil:
			return &transcript.ReadError{Path: path, Err: err}
		case !fi.Mode().IsRegular():
			r.stats.Skipped++
			continue
		}
		if err := r.db(path); err != nil {
			return err
		}
	}
	return r.storage(filepath.Join(root, "storage"))
}

// rec is a prompt found, with what orders it. Its text is not held: it
// is in r.texts, at text.
type rec struct {
	p           transcript.Prompt
	text        span
	sessCreated int64
	msgID       string
	rank        int // 0: a database row, 1: a JSON storage file
	sum         [sha256.Size]byte
}

type reader struct {
	stats transcript.Stats
	recs  []rec
	texts spill
	file  string // the database or storage file being read
}

type session struct {
	parent  string
	dir     string
	created int64
}

func (r *reader) add(s session, sessID, msgID, text string, created, fallback int64, rank int) error {
	if !identity.Capturable(text) {
		return nil
	}
	at, err := r.texts.put(text)
	if err != nil {
		return err
	}
	ts, approx := created, false
	if ts <= 0 {
		ts = fallback
	}
	if ts <= 0 {
		ts, approx = s.created, true
	}
	r.recs = append(r.recs, rec{
		p: transcript.Prompt{
			TS:      ts,
			Cwd:     s.dir,
			Session: sessID,
			Src:     transcript.SrcOpencode,
			Key:     msgID,
			Approx:  approx,
			File:    r.file,
		},
		text:        at,
		sessCreated: s.created,
		msgID:       msgID,
		rank:        rank,
		sum:         sha256.Sum256([]byte(text)),
	})
	return nil
}

// emitAll emits the prompts found, oldest session first.
func (r *reader) emitAll(emit func(transcript.Prompt) error) error {
	slices.SortStableFunc(r.recs, func(a, b rec) int {
		return cmp.Or(cmp.Compare(a.sessCreated, b.sessCreated), strings.Compare(a.p.Session, b.p.Session),
			cmp.Compare(a.p.TS, b.p.TS), strings.Compare(a.msgID, b.msgID), cmp.Compare(a.rank, b.rank))
	})
	keys := map[string]bool{}
	type event struct {
		ts  int64
		sum [sha256.Size]byte
	}
	events := map[event]bool{}
	for _, c := range r.recs {
		if keys[c.p.Key] {
			continue
		}
		keys[c.p.Key] = true
		if !c.p.Approx {
			ev := event{c.p.TS, c.sum}
			if events[ev] {
				continue // a fork's copy
			}
			events[ev] = true
		}
		p := c.p
		var err error
		if p.Text, err = r.texts.get(c.text); err != nil {
			return err
		}
		if err := emit(p); err != nil {
			return err
		}
		r.stats.Prompts++
	}
	return nil
}

// db reads one database.
func (r *reader) db(path string) error {
	n := len(r.recs)
	r.file = path
	ok, err := rosqlite.Read(path, &r.stats, r.readRows)
	if !ok {
		r.recs = r.recs[:n] // an undecodable database's rows are dropped
	}
	return err
}

func (r *reader) readRows(db *rosqlite.DB) error {
	tables, err := db.Tables()
	if err != nil {
		return err
	}
	sessions := map[string]session{}
	for _, t := range []string{"session_v2", "session"} {
		if tables[t] {
			if err := loadSessions(db, t, sessions); err != nil {
				return err
			}
		}
	}
	if tables["session_message"] {
		if err := r.read2x(db, sessions); err != nil {
			return err
		}
	}
	if tables["message"] && tables["part"] {
		if err := r.read1x(db, sessions); err != nil {
			return err
		}
	}
	return nil
}

// col returns the column's name when the table has it, else a NULL of the
// same role, so that an older or newer schema still reads.
func col(cols map[string]bool, name string) string {
	if cols[name] {
		return `"` + name + `"`
	}
	return "NULL"
}

func loadSessions(db *rosqlite.DB, table string, out map[string]session) error {
	cols, err := db.Columns(table)
	if err != nil {
		return err
	}
	if !cols["id"] {
		return nil
	}
	q := fmt.Sprintf(`SELECT id, %s, %s, %s FROM "%s"`, col(cols, "parent_id"), col(cols, "directory"), col(cols, "time_created"), table)
	rows, err := db.Query(q)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var id, parent, dir sql.NullString
		var created sql.NullInt64
		if err := rows.Scan(&id, &parent, &dir, &created); err != nil {
			return err
		}
		if !id.Valid || id.String == "" {
			continue
		}
		if _, ok := out[id.String]; ok {
			continue
		}
		out[id.String] = session{parent: parent.String, dir: dir.String, created: created.Int64}
	}
	return rows.Err()
}

// msgTime is the part of a message's data that holds its time.
type msgTime struct {
	Time struct {
		Created json.Number `json:"created"`
	} `json:"time"`
}

func (m msgTime) created() int64 {
	if n, err := m.Time.Created.Int64(); err == nil {
		return n
	}
	if f, err := m.Time.Created.Float64(); err == nil {
		return int64(f)
	}
	return 0
}

func (r *reader) read2x(db *rosqlite.DB, sessions map[string]session) error {
	cols, err := db.Columns("session_message")
	if err != nil {
		return err
	}
	for _, c := range []string{"id", "session_id", "type", "data"} {
		if !cols[c] {
			return nil
		}
	}
	rows, err := db.Query(fmt.Sprintf(`SELECT id, session_id, %s, data FROM session_message WHERE type = 'user'`, col(cols, "time_created")))
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var id, sess sql.NullString
		var created sql.NullInt64
		var data []byte
		if err := rows.Scan(&id, &sess, &created, &data); err != nil {
			return err
		}
		s, ok := sessions[sess.String]
		if !ok || !id.Valid {
			r.stats.Malformed++
			continue
		}
		if s.parent != "" {
			continue
		}
		var d struct {
			msgTime
			Text *string `json:"text"`
		}
		if json.Unmarshal(data, &d) != nil || d.Text == nil {
			r.stats.Malformed++
			continue
		}
		if err := r.add(s, sess.String, id.String, *d.Text, d.created(), created.Int64, 0); err != nil {
			return err
		}
	}
	return rows.Err()
}

// part is a 1.x message part.
type part struct {
	Type      string `json:"type"`
	Text      string `json:"text"`
	Synthetic bool   `json:"synthetic"`
	Ignored   bool   `json:"ignored"`
}

// parsePart decodes a part's data in one pass, as encoding/json decodes
// it into a part (keys match exactly); ok is false when it is not a JSON
// object of that shape.
func parsePart(data []byte) (p part, ok bool) {
	ok = true
	flag := func(v []byte) bool {
		switch string(v) {
		case "true":
			return true
		case "false", "null":
		default:
			ok = false
		}
		return false
	}
	str := func(v []byte) string {
		s, sok := jsonscan.OptString(v)
		ok = ok && sok
		return s
	}
	if !jsonscan.EachMember(data, func(k, v []byte) {
		switch string(k) {
		case "type":
			p.Type = str(v)
		case "text":
			p.Text = str(v)
		case "synthetic":
			p.Synthetic = flag(v)
		case "ignored":
			p.Ignored = flag(v)
		}
	}) {
		return part{}, false
	}
	return p, ok
}

// typed reports whether a part is text the person typed.
func (p *part) typed() bool { return p.Type == "text" && !p.Synthetic && !p.Ignored }

// prompt1x is a 1.x user message being read.
type prompt1x struct {
	s                 session
	id, sess          string
	created, fallback int64 // data.time.created, and the time_created column
	texts             []string
}

// read1x reads the user messages of the 1.x tables, each with its parts
// in id order.
func (r *reader) read1x(db *rosqlite.DB, sessions map[string]session) error {
	mcols, err := db.Columns("message")
	if err != nil {
		return err
	}
	pcols, err := db.Columns("part")
	if err != nil {
		return err
	}
	if !mcols["id"] || !mcols["session_id"] || !mcols["data"] || !pcols["id"] || !pcols["message_id"] || !pcols["data"] {
		return nil
	}
	created := "NULL"
	if mcols["time_created"] {
		created = "m.time_created"
	}
	// instr() only narrows the rows; the role is checked on the decoded data.
	// Messages in table order (their order does not matter: emitAll
	// sorts), which reads the table once instead of seeking each row from
	// the id index; a table without rowids is read in id order.
	q := `SELECT m.id, m.session_id, ` + created + `, m.data, p.message_id, p.data
		FROM message m LEFT JOIN part p ON p.message_id = m.id
		WHERE instr(m.data, '"user"') > 0 ORDER BY `
	rows, err := db.Query(q + `m.rowid, p.id`)
	if err != nil {
		rows, err = db.Query(q + `m.id, p.id`)
	}
	if err != nil {
		return err
	}
	defer rows.Close()
	var last sql.NullString // the message of the previous row
	var msg *prompt1x       // the prompt being read, nil when the message is none
	done := func() error {
		m := msg
		if msg = nil; m == nil {
			return nil
		}
		return r.add(m.s, m.sess, m.id, strings.Join(m.texts, "\n"), m.created, m.fallback, 0)
	}
	for rows.Next() {
		var id, sess, partOf sql.NullString
		var column sql.NullInt64
		var data, pdata []byte
		if err := rows.Scan(&id, &sess, &column, &data, &partOf, &pdata); err != nil {
			return err
		}
		if !id.Valid || id != last {
			if err := done(); err != nil {
				return err
			}
			last = id
			var d struct {
				msgTime
				Role string `json:"role"`
			}
			if json.Unmarshal(data, &d) != nil || !id.Valid {
				r.stats.Malformed++
				continue
			}
			s, ok := sessions[sess.String]
			switch {
			case d.Role != "user" || s.parent != "":
				continue
			case !ok:
				r.stats.Malformed++
				continue
			}
			msg = &prompt1x{s: s, id: id.String, sess: sess.String, created: d.created(), fallback: column.Int64}
		}
		if msg == nil || !partOf.Valid {
			continue
		}
		if p, ok := parsePart(pdata); !ok {
			r.stats.Malformed++
		} else if p.typed() {
			msg.texts = append(msg.texts, p.Text)
		}
	}
	if err := done(); err != nil {
		return err
	}
	return rows.Err()
}

// storage reads the JSON storage of opencode before its SQLite migration.
func (r *reader) storage(dir string) error {
	projects, err := readDir(filepath.Join(dir, "session"))
	if err != nil {
		return err
	}
	for _, proj := range projects {
		if !proj.IsDir() {
			continue
		}
		files, err := jsonFiles(filepath.Join(dir, "session", proj.Name()))
		if err != nil {
			return err
		}
		for _, path := range files {
			var s struct {
				ID        string `json:"id"`
				ParentID  string `json:"parentID"`
				Directory string `json:"directory"`
				Time      struct {
					Created json.Number `json:"created"`
				} `json:"time"`
			}
			ok, err := r.readJSON(path, &s)
			if err != nil {
				return err
			}
			if ok && s.ID == "" {
				r.stats.Malformed++
			}
			if !ok || s.ID == "" || s.ParentID != "" {
				continue
			}
			created, _ := s.Time.Created.Int64()
			if err := r.storageSession(dir, s.ID, session{dir: s.Directory, created: created}); err != nil {
				return err
			}
		}
	}
	return nil
}

func (r *reader) storageSession(dir, id string, s session) error {
	msgs, err := jsonFiles(filepath.Join(dir, "message", id))
	if err != nil {
		return err
	}
	for _, path := range msgs {
		var m struct {
			msgTime
			ID   string `json:"id"`
			Role string `json:"role"`
		}
		r.file = path
		ok, err := r.readJSON(path, &m)
		if err != nil {
			return err
		}
		if !ok || m.Role != "user" {
			continue
		}
		if m.ID == "" {
			m.ID = strings.TrimSuffix(filepath.Base(path), ".json")
		}
		// File names are the part ids, so their order is id order.
		parts, err := jsonFiles(filepath.Join(dir, "part", m.ID))
		if err != nil {
			return err
		}
		var texts []string
		for _, pp := range parts {
			var p part
			ok, err := r.readJSON(pp, &p)
			if err != nil {
				return err
			}
			if ok && p.typed() {
				texts = append(texts, p.Text)
			}
		}
		if len(texts) > 0 {
			if err := r.add(s, id, m.ID, strings.Join(texts, "\n"), m.created(), 0, 1); err != nil {
				return err
			}
		}
	}
	return nil
}

// jsonFiles returns the *.json files in dir, in name order (none when
// dir is missing).
func jsonFiles(dir string) ([]string, error) {
	ents, err := readDir(dir)
	var out []string
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".json") && !e.IsDir() {
			out = append(out, filepath.Join(dir, e.Name()))
		}
	}
	return out, err
}

// readDir lists a folder; a missing one is empty.
func readDir(dir string) ([]os.DirEntry, error) {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, &transcript.ReadError{Path: dir, Err: err}
	}
	return ents, nil
}

// readJSON reads one JSON file into v. ok is false (and the file counted as
// malformed) when it is not valid JSON of that shape.
func (r *reader) readJSON(path string, v any) (ok bool, err error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return false, &transcript.ReadError{Path: path, Err: err}
	}
	r.stats.Files++
	r.stats.Bytes += int64(len(data))
	if json.Unmarshal(data, v) != nil {
		r.stats.Malformed++
		return false, nil
	}
	return true, nil
}

// anyKept offers every file under root to keep (each one, so that keep
// sees them all) and reports whether it kept any. A folder that cannot be
// read counts as kept: reading it reports the error.
func anyKept(root string, keep transcript.Keep) bool {
	found := false
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if path == root && errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		// SQLite's shared-memory file changes as the database is read.
		if d.Type().IsRegular() && !strings.HasSuffix(path, "-shm") {
			if fi, err := d.Info(); err != nil || keep(path, fi) {
				found = true
			}
		}
		return nil
	})
	return found || err != nil
}
