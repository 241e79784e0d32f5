package opencode

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	"hist/lib/identity"
	"hist/lib/transcript"
	"hist/lib/transcript/internal/ttest"
)

type manifestRun struct {
	Seq   int             `json:"seq"`
	Cwd   string          `json:"cwd"`
	Argv  json.RawMessage `json:"prompt_argv"`
	Typed string          `json:"prompt_typed"`
}

func manifest(t *testing.T, harness string) (map[int]manifestRun, string) {
	t.Helper()
	b, err := os.ReadFile("testdata/manifest.json")
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Harnesses map[string]struct {
			Cwd  string        `json:"cwd"`
			Runs []manifestRun `json:"runs"`
		} `json:"harnesses"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	out := map[int]manifestRun{}
	for _, r := range m.Harnesses[harness].Runs {
		out[r.Seq] = r
	}
	return out, m.Harnesses[harness].Cwd
}

// snapshot records every file of a folder, to prove a scan wrote nothing.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.Walk(dir, func(path string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		if fi.IsDir() {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		out[path] = fmt.Sprintf("%d %d %x", fi.Size(), fi.ModTime().UnixNano(), data)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func unchanged(t *testing.T, before map[string]string, dir string) {
	t.Helper()
	after := snapshot(t, dir)
	for path, s := range before {
		if after[path] != s {
			t.Errorf("%s changed", path)
		}
	}
	for path := range after {
		if _, ok := before[path]; !ok {
			t.Errorf("%s appeared", path)
		}
	}
}

func TestRealOpencodeRun(t *testing.T) {
	runs, _ := manifest(t, "opencode")
	before := snapshot(t, "testdata/opencode")
	got, st := ttest.Collect(t, scanAll, "testdata/opencode")
	unchanged(t, before, "testdata/opencode")
	if len(got) != 11 {
		t.Fatalf("got %d prompts, want 11", len(got))
	}
	sessions := map[string]bool{}
	for i, p := range got {
		r := runs[i+1]
		var want string
		switch r.Seq {
		case 10: // a command, stored only expanded
			want = `Please greet "Ada Lovelace [oc-10]" warmly in exactly one sentence.`
		case 11: // separate argv words
			var words []string
			if err := json.Unmarshal(r.Argv, &words); err != nil {
				t.Fatal(err)
			}
			want = strings.Join(words, " ")
		default: // "opencode run" re-quotes a word holding spaces
			var argv string
			if err := json.Unmarshal(r.Argv, &argv); err != nil {
				t.Fatal(err)
			}
			want = `"` + strings.ReplaceAll(argv, `"`, `\"`) + `"`
		}
		if p.Text != want {
			t.Errorf("oc-%02d: got %q, want %q", r.Seq, p.Text, want)
		}
		if p.Cwd != r.Cwd || p.Src != transcript.SrcOpencode || p.Approx || !strings.HasPrefix(p.Key, "msg_") || !strings.HasPrefix(p.Session, "ses_") {
			t.Errorf("oc-%02d: %+v (cwd want %q)", r.Seq, p, r.Cwd)
		}
		sessions[p.Session] = true
	}
	if got[0].TS != 1796002041526 || got[0].Session != "ses_dd5efb18cffeiU6acOiivHDW0r" {
		t.Errorf("first = %+v", got[0])
	}
	if len(sessions) != 3 {
		t.Errorf("sessions %v", sessions)
	}
	if st.Files != 1 || st.Malformed != 0 || st.Bytes != 446464 {
		t.Errorf("stats %+v", st)
	}
}

func TestRealOpencodeTUI(t *testing.T) {
	runs, cwd := manifest(t, "opencode-tui")
	before := snapshot(t, "testdata/opencode-tui")
	got, _ := ttest.Collect(t, scanAll, "testdata/opencode-tui")
	unchanged(t, before, "testdata/opencode-tui")
	want := []string{runs[1].Typed, runs[2].Typed, runs[3].Typed, "Please greet Ada [oc-tui-04] warmly in exactly one sentence."}
	if len(got) != len(want) {
		t.Fatalf("got %d prompts: %+v", len(got), got)
	}
	for i, p := range got {
		if i != 2 && p.Text != want[i] {
			t.Errorf("prompt %d: got %q, want %q", i+1, p.Text, want[i])
		}
		if !identity.Same(p.Text, want[i]) {
			t.Errorf("prompt %d: not the same prompt: %q", i+1, p.Text)
		}
		if p.Cwd != cwd || p.Session != "ses_dd5ed3130ffey0BMAYkp1EZDMk" {
			t.Errorf("prompt %d: %+v", i+1, p)
		}
	}
}

// --- hand-made databases ---

const schema1 = `
CREATE TABLE project (id text PRIMARY KEY, worktree text NOT NULL);
CREATE TABLE session (id text PRIMARY KEY, project_id text NOT NULL, parent_id text, slug text NOT NULL DEFAULT '', directory text NOT NULL, title text NOT NULL DEFAULT '', version text NOT NULL DEFAULT '1.18.33', time_created integer NOT NULL, time_updated integer NOT NULL DEFAULT 0);
CREATE TABLE message (id text PRIMARY KEY, session_id text NOT NULL, time_created integer NOT NULL, time_updated integer NOT NULL DEFAULT 0, data text NOT NULL);
CREATE TABLE part (id text PRIMARY KEY, message_id text NOT NULL, session_id text NOT NULL, time_created integer NOT NULL DEFAULT 0, time_updated integer NOT NULL DEFAULT 0, data text NOT NULL);
CREATE INDEX part_message_id_id_idx ON part (message_id, id);
`

const schema2 = `
CREATE TABLE session_v2 (id text PRIMARY KEY, project_id text NOT NULL, parent_id text, fork_session_id text, directory text NOT NULL, title text NOT NULL DEFAULT '', version text NOT NULL DEFAULT '2.0.29', time_created integer NOT NULL, time_updated integer NOT NULL DEFAULT 0);
CREATE TABLE session_message (id text PRIMARY KEY, session_id text NOT NULL, type text NOT NULL, seq integer NOT NULL, time_created integer NOT NULL, time_updated integer NOT NULL DEFAULT 0, data text NOT NULL);
`

type dbb struct {
	t  testing.TB
	db *sql.DB
}

func newDB(t testing.TB, path, schema string) *dbb {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	if _, err := db.Exec(schema); err != nil {
		t.Fatal(err)
	}
	return &dbb{t, db}
}

func (b *dbb) exec(q string, args ...any) *dbb {
	b.t.Helper()
	if _, err := b.db.Exec(q, args...); err != nil {
		b.t.Fatalf("%s: %v", q, err)
	}
	return b
}

func (b *dbb) close() {
	b.t.Helper()
	if err := b.db.Close(); err != nil {
		b.t.Fatal(err)
	}
}

func (b *dbb) session(id, parent, dir string, created int64) *dbb {
	var p any
	if parent != "" {
		p = parent
	}
	return b.exec(`INSERT INTO session (id, project_id, parent_id, directory, time_created) VALUES (?, 'p', ?, ?, ?)`, id, p, dir, created)
}

func (b *dbb) msg(id, sess, role string, created int64) *dbb {
	data := fmt.Sprintf(`{"role":%q,"time":{"created":%d},"agent":"build","model":{"providerID":"mock","modelID":"m"}}`, role, created)
	return b.exec(`INSERT INTO message (id, session_id, time_created, data) VALUES (?, ?, ?, ?)`, id, sess, created, data)
}

func (b *dbb) part(id, msg, sess string, data any) *dbb {
	j, _ := json.Marshal(data)
	return b.exec(`INSERT INTO part (id, message_id, session_id, data) VALUES (?, ?, ?, ?)`, id, msg, sess, string(j))
}

func (b *dbb) text(id, msg, sess, text string) *dbb {
	return b.part(id, msg, sess, map[string]any{"type": "text", "text": text})
}

// prompt adds a user message with one text part.
func (b *dbb) prompt(id, sess, text string, created int64) *dbb {
	return b.msg(id, sess, "user", created).text("prt_"+id, id, sess, text)
}

func texts(ps []transcript.Prompt) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.Text)
	}
	return out
}

func eq(t *testing.T, got []transcript.Prompt, want ...string) {
	t.Helper()
	g := texts(got)
	if strings.Join(g, "\x00") != strings.Join(want, "\x00") || len(g) != len(want) {
		t.Errorf("prompts:\n got %q\nwant %q", g, want)
	}
}

func TestRules1x(t *testing.T) {
	root := t.TempDir()
	b := newDB(t, filepath.Join(root, "opencode.db"), schema1).
		session("ses_a", "", "/proj/a", 1000).
		session("ses_child", "ses_a", "/proj/a", 1100).
		prompt("msg_01", "ses_a", "first prompt", 1001).
		msg("msg_02", "ses_a", "assistant", 1002).text("prt_02", "msg_02", "ses_a", `a reply that quotes "user" words`).
		// Parts in id order, synthetic and ignored ones left out.
		msg("msg_03", "ses_a", "user", 1003).
		text("prt_03c", "msg_03", "ses_a", "third part").
		part("prt_03a", "msg_03", "ses_a", map[string]any{"type": "text", "text": "Called the Read tool with {...}", "synthetic": true}).
		text("prt_03b", "msg_03", "ses_a", "second part").
		part("prt_03d", "msg_03", "ses_a", map[string]any{"type": "file", "mime": "text/plain", "filename": "x.go", "url": "file:///x.go"}).
		part("prt_03e", "msg_03", "ses_a", map[string]any{"type": "text", "text": "ignored", "ignored": true}).
		// Only synthetic or non-text parts: not a prompt.
		msg("msg_04", "ses_a", "user", 1004).
		part("prt_04", "msg_04", "ses_a", map[string]any{"type": "text", "text": "synthetic only", "synthetic": true}).
		msg("msg_05", "ses_a", "user", 1005).
		part("prt_05", "msg_05", "ses_a", map[string]any{"type": "compaction", "auto": true}).
		prompt("msg_06", "ses_a", "/greet Ada", 1006).
		prompt("msg_07", "ses_a", "   ", 1007).
		prompt("msg_08", "ses_child", "a subagent's task", 1101).
		exec(`INSERT INTO message (id, session_id, time_created, data) VALUES ('msg_09', 'ses_a', 1009, '{"role":"user", broken')`).
		prompt("msg_10", "ses_gone", "a message without its session", 1010)
	b.close()
	got, st := ttest.Collect(t, scanAll, root)
	eq(t, got, "first prompt", "second part\nthird part")
	p := got[1]
	if p.TS != 1003 || p.Cwd != "/proj/a" || p.Session != "ses_a" || p.Key != "msg_03" || p.Approx {
		t.Errorf("got %+v", p)
	}
	if st.Malformed != 2 || st.Files != 1 {
		t.Errorf("stats %+v", st)
	}
}

func TestRules2xAndBothGenerations(t *testing.T) {
	root := t.TempDir()
	b := newDB(t, filepath.Join(root, "opencode.db"), schema1+schema2).
		session("ses_old", "", "/old", 500).
		prompt("msg_old", "ses_old", "a 1.x prompt", 501).
		// Migrated into 2.x with the same ids: counted once.
		prompt("msg_mig", "ses_old", "migrated prompt", 502).
		exec(`INSERT INTO session_v2 (id, project_id, directory, time_created) VALUES ('ses_old', 'p', '/old', 500)`).
		exec(`INSERT INTO session_v2 (id, project_id, directory, time_created) VALUES ('ses_new', 'p', '/new', 2000)`).
		exec(`INSERT INTO session_v2 (id, project_id, parent_id, directory, time_created) VALUES ('ses_sub', 'p', 'ses_new', '/new', 2100)`)
	add := func(id, sess, typ string, seq int, created int64, data string) {
		b.exec(`INSERT INTO session_message (id, session_id, type, seq, time_created, data) VALUES (?, ?, ?, ?, ?, ?)`, id, sess, typ, seq, created, data)
	}
	add("msg_mig", "ses_old", "user", 1, 502, `{"text":"migrated prompt","time":{"created":502}}`)
	add("msg_n1", "ses_new", "user", 1, 2001, `{"text":"a 2.x prompt","files":[],"agents":[],"references":[],"time":{"created":2001}}`)
	add("msg_n2", "ses_new", "synthetic", 2, 2002, `{"text":"synthetic text"}`)
	add("msg_n3", "ses_new", "shell", 3, 2003, `{"command":"ls"}`)
	add("msg_n4", "ses_new", "assistant", 4, 2004, `{"content":[{"type":"text","text":"reply"}]}`)
	add("msg_n5", "ses_new", "compaction", 5, 2005, `{"summary":"s"}`)
	add("msg_n6", "ses_new", "user", 6, 2006, `{"text":"no time in data"}`)
	add("msg_n7", "ses_sub", "user", 1, 2101, `{"text":"subagent prompt"}`)
	add("msg_n8", "ses_new", "user", 7, 2008, `{"files":[{"path":"x"}]}`)
	b.close()
	got, st := ttest.Collect(t, scanAll, root)
	eq(t, got, "a 1.x prompt", "migrated prompt", "a 2.x prompt", "no time in data")
	if got[3].TS != 2006 || got[3].Cwd != "/new" || got[2].Session != "ses_new" {
		t.Errorf("got %+v", got)
	}
	if st.Malformed != 1 {
		t.Errorf("stats %+v", st)
	}
}

func TestForkCopiesCountOnce(t *testing.T) {
	root := t.TempDir()
	newDB(t, filepath.Join(root, "opencode.db"), schema1).
		session("ses_fork", "", "/p", 3000). // created later, listed first
		prompt("msg_f1", "ses_fork", "typed once", 1001).
		prompt("msg_f2", "ses_fork", "typed in the fork", 3001).
		session("ses_orig", "", "/p", 1000).
		prompt("msg_o1", "ses_orig", "typed once", 1001).
		prompt("msg_o2", "ses_orig", "typed once", 1500). // typed again: a new event
		close()
	got, _ := ttest.Collect(t, scanAll, root)
	eq(t, got, "typed once", "typed once", "typed in the fork")
	if got[0].Session != "ses_orig" || got[1].TS != 1500 || got[2].Session != "ses_fork" {
		t.Errorf("got %+v", got)
	}
}

func TestSchemaDrift(t *testing.T) {
	t.Run("extra tables and columns", func(t *testing.T) {
		root := t.TempDir()
		newDB(t, filepath.Join(root, "opencode.db"), schema1+`
			ALTER TABLE session ADD COLUMN future_col text DEFAULT 'x';
			ALTER TABLE message ADD COLUMN seq integer;
			ALTER TABLE part ADD COLUMN weight real;
			CREATE TABLE future_table (id integer, blob blob);
			INSERT INTO future_table VALUES (1, x'00ff');`).
			session("ses_a", "", "/a", 1).prompt("msg_1", "ses_a", "still read", 2).close()
		got, _ := ttest.Collect(t, scanAll, root)
		eq(t, got, "still read")
	})
	t.Run("fewer columns", func(t *testing.T) {
		root := t.TempDir()
		newDB(t, filepath.Join(root, "opencode.db"), `
			CREATE TABLE session (id text PRIMARY KEY, directory text);
			CREATE TABLE message (id text PRIMARY KEY, session_id text, data text);
			CREATE TABLE part (id text PRIMARY KEY, message_id text, data text);
			INSERT INTO session VALUES ('ses_a', '/a');
			INSERT INTO message VALUES ('msg_1', 'ses_a', '{"role":"user","time":{"created":77}}');
			INSERT INTO message VALUES ('msg_2', 'ses_a', '{"role":"user"}');
			INSERT INTO part VALUES ('prt_1', 'msg_1', '{"type":"text","text":"old schema"}');
			INSERT INTO part VALUES ('prt_2', 'msg_2', '{"type":"text","text":"no time at all"}');`).close()
		got, _ := ttest.Collect(t, scanAll, root)
		eq(t, got, "no time at all", "old schema")
		if got[1].TS != 77 || got[1].Approx || !got[0].Approx {
			t.Errorf("got %+v", got)
		}
	})
	t.Run("not opencode tables", func(t *testing.T) {
		root := t.TempDir()
		newDB(t, filepath.Join(root, "opencode.db"), `CREATE TABLE other (x);`).close()
		got, st := ttest.Collect(t, scanAll, root)
		if len(got) != 0 || st.Files != 1 {
			t.Errorf("got %+v %+v", got, st)
		}
	})
}

func TestChannelDatabasesAndStorage(t *testing.T) {
	root := t.TempDir()
	newDB(t, filepath.Join(root, "opencode.db"), schema1).
		session("ses_a", "", "/a", 1).prompt("msg_1", "ses_a", "stable channel", 10).
		prompt("msg_shared", "ses_a", "in two databases", 11).close()
	newDB(t, filepath.Join(root, "opencode-next.db"), schema1).
		session("ses_a", "", "/a", 1).prompt("msg_shared", "ses_a", "in two databases", 11).
		session("ses_b", "", "/b", 2).prompt("msg_2", "ses_b", "next channel", 20).close()
	st := filepath.Join(root, "storage")
	js := func(path string, v any) {
		data, _ := json.Marshal(v)
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	js(filepath.Join(st, "session/proj1/ses_j.json"), map[string]any{"id": "ses_j", "projectID": "proj1", "directory": "/json", "title": "t", "version": "0.5", "time": map[string]any{"created": 3, "updated": 4}})
	js(filepath.Join(st, "session/proj1/ses_jchild.json"), map[string]any{"id": "ses_jchild", "parentID": "ses_j", "directory": "/json", "time": map[string]any{"created": 5}})
	js(filepath.Join(st, "message/ses_j/msg_j1.json"), map[string]any{"id": "msg_j1", "sessionID": "ses_j", "role": "user", "time": map[string]any{"created": 30}})
	js(filepath.Join(st, "part/msg_j1/prt_2.json"), map[string]any{"id": "prt_2", "messageID": "msg_j1", "type": "text", "text": "json part two"})
	js(filepath.Join(st, "part/msg_j1/prt_1.json"), map[string]any{"id": "prt_1", "messageID": "msg_j1", "type": "text", "text": "json part one"})
	js(filepath.Join(st, "part/msg_j1/prt_3.json"), map[string]any{"id": "prt_3", "messageID": "msg_j1", "type": "text", "text": "synthetic", "synthetic": true})
	js(filepath.Join(st, "message/ses_j/msg_j2.json"), map[string]any{"id": "msg_j2", "sessionID": "ses_j", "role": "assistant", "time": map[string]any{"created": 31}})
	js(filepath.Join(st, "part/msg_j2/prt_4.json"), map[string]any{"id": "prt_4", "type": "text", "text": "assistant text"})
	js(filepath.Join(st, "message/ses_jchild/msg_j3.json"), map[string]any{"id": "msg_j3", "role": "user", "time": map[string]any{"created": 32}})
	js(filepath.Join(st, "part/msg_j3/prt_5.json"), map[string]any{"id": "prt_5", "type": "text", "text": "child prompt"})
	// The same message as a database row: the row wins.
	js(filepath.Join(st, "session/proj1/ses_a.json"), map[string]any{"id": "ses_a", "directory": "/a", "time": map[string]any{"created": 1}})
	js(filepath.Join(st, "message/ses_a/msg_1.json"), map[string]any{"id": "msg_1", "role": "user", "time": map[string]any{"created": 10}})
	js(filepath.Join(st, "part/msg_1/prt_x.json"), map[string]any{"id": "prt_x", "type": "text", "text": "stable channel (json copy)"})
	if err := os.WriteFile(filepath.Join(st, "message/ses_j/msg_bad.json"), []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	got, stats := ttest.Collect(t, scanAll, root)
	eq(t, got, "stable channel", "in two databases", "next channel", "json part one\njson part two")
	if got[3].Cwd != "/json" || got[3].TS != 30 || got[3].Key != "msg_j1" {
		t.Errorf("got %+v", got[3])
	}
	if stats.Malformed != 1 {
		t.Errorf("stats %+v", stats)
	}

	// OPENCODE_DB names one database: only it is read.
	one, _ := ttest.Collect(t, scanAll, filepath.Join(root, "opencode-next.db"))
	eq(t, one, "in two databases", "next channel")
}

func TestWALDatabaseWithLiveWriter(t *testing.T) {
	root := t.TempDir()
	path := filepath.Join(root, "opencode.db")
	b := newDB(t, path, schema1)
	b.exec(`PRAGMA journal_mode=WAL`).exec(`PRAGMA wal_autocheckpoint=0`).
		session("ses_a", "", "/a", 1).prompt("msg_1", "ses_a", "checkpointed", 10).
		exec(`PRAGMA wal_checkpoint(TRUNCATE)`).
		prompt("msg_2", "ses_a", "only in the WAL", 11)
	// The writer stays open, as opencode would be.
	defer b.close()
	if fi, err := os.Stat(path + "-wal"); err != nil || fi.Size() == 0 {
		t.Fatalf("no WAL content: %v", err)
	}
	old := time.Now().Add(-time.Hour)
	for _, s := range []string{"", "-wal", "-shm"} {
		if err := os.Chtimes(path+s, old, old); err != nil {
			t.Fatal(err)
		}
	}
	before := snapshot(t, root)
	got, _ := ttest.Collect(t, scanAll, root)
	eq(t, got, "checkpointed", "only in the WAL")
	unchanged(t, before, root)
}

func TestLockedDatabase(t *testing.T) {
	root := t.TempDir()
	path := filepath.Join(root, "opencode.db")
	newDB(t, path, schema1).session("ses_a", "", "/a", 1).prompt("msg_1", "ses_a", "committed", 10).close()
	// Another connection holds the write lock with an uncommitted prompt.
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
	for _, q := range []string{
		`PRAGMA journal_mode=DELETE`,
		`PRAGMA cache_size=1`, // spill the change into the file now
		`BEGIN EXCLUSIVE`,
		`INSERT INTO message (id, session_id, time_created, data) VALUES ('msg_2', 'ses_a', 11, '{"role":"user","time":{"created":11}}')`,
		`INSERT INTO part (id, message_id, session_id, data) VALUES ('prt_2', 'msg_2', 'ses_a', '{"type":"text","text":"uncommitted"}')`,
	} {
		if _, err := conn.ExecContext(t.Context(), q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	before := snapshot(t, root)
	got, _ := ttest.Collect(t, scanAll, root)
	eq(t, got, "committed")
	unchanged(t, before, root)
	if _, err := conn.ExecContext(t.Context(), `ROLLBACK`); err != nil {
		t.Fatal(err)
	}
}

// A database whose content is at fault is passed over and named; the
// others are read.
func TestUnreadableDatabases(t *testing.T) {
	good := filepath.Join(t.TempDir(), "good.db")
	b := newDB(t, good, schema1).session("ses_a", "", "/a", 1).exec("BEGIN")
	for i := 0; i < 300; i++ {
		b.prompt(fmt.Sprintf("msg_%04d", i), "ses_a", strings.Repeat("a long prompt ", 50), int64(i+10))
	}
	b.exec("COMMIT").close()
	data, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	for name, content := range map[string][]byte{
		"truncated":        data[:len(data)/3],
		"truncated header": data[:50],
		"not sqlite":       bytes.Repeat([]byte("garbage!"), 100),
		"zeroed pages":     append(append([]byte{}, data[:4096]...), make([]byte, len(data)-4096)...),
	} {
		t.Run(name, func(t *testing.T) {
			root := t.TempDir()
			path := filepath.Join(root, "opencode.db")
			if err := os.WriteFile(path, content, 0o600); err != nil {
				t.Fatal(err)
			}
			newDB(t, filepath.Join(root, "opencode-dev.db"), schema1).session("ses_b", "", "/b", 1).
				prompt("msg_b", "ses_b", "from the good one", 5).close()
			got, st := ttest.Collect(t, scanAll, root)
			eq(t, got, "from the good one")
			if len(st.Undecodable) != 1 || st.Undecodable[0].Path != path {
				t.Fatalf("undecodable %+v, want %s named", st.Undecodable, path)
			}
		})
	}
	t.Run("empty file", func(t *testing.T) {
		root := t.TempDir()
		if err := os.WriteFile(filepath.Join(root, "opencode.db"), nil, 0o600); err != nil {
			t.Fatal(err)
		}
		got, _ := ttest.Collect(t, scanAll, root)
		eq(t, got)
	})
	t.Run("a folder named like a database", func(t *testing.T) {
		root := t.TempDir()
		if err := os.Mkdir(filepath.Join(root, "opencode.db"), 0o700); err != nil {
			t.Fatal(err)
		}
		_, st := ttest.Collect(t, scanAll, root)
		if st.Skipped != 1 {
			t.Errorf("stats %+v", st)
		}
	})
}

func TestEmitErrorStops(t *testing.T) {
	stop := errors.New("stop")
	n := 0
	_, err := scanAll("testdata/opencode", func(transcript.Prompt) error {
		n++
		return stop
	})
	if err != stop || n != 1 {
		t.Fatalf("err = %v after %d", err, n)
	}
}

func TestMissingRoot(t *testing.T) {
	st, err := scanAll(filepath.Join(t.TempDir(), "none"), func(transcript.Prompt) error { return nil })
	if err != nil || !reflect.DeepEqual(st, transcript.Stats{}) {
		t.Fatalf("%+v %v", st, err)
	}
}

func TestDefaultRoot(t *testing.T) {
	env := func(kv ...string) transcript.Env {
		m := map[string]string{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return func(k string) string { return m[k] }
	}
	for _, c := range []struct {
		env  transcript.Env
		want string
	}{
		{env(), "/h/.local/share/opencode"},
		{env("XDG_DATA_HOME", "/x"), "/x/opencode"},
		{env("XDG_DATA_HOME", "relative"), "/h/.local/share/opencode"},
		{env("OPENCODE_DB", "/db/custom.db"), "/db/custom.db"},
		{env("XDG_DATA_HOME", "/x", "OPENCODE_DB", "mine.db"), "/x/opencode/mine.db"},
		{env("OPENCODE_DB", ":memory:"), "/h/.local/share/opencode"},
	} {
		if got := DefaultRoot(c.env, "/h"); got != c.want {
			t.Errorf("got %q, want %q", got, c.want)
		}
	}
}

func TestOrderIsBySession(t *testing.T) {
	got, _ := ttest.Collect(t, scanAll, "testdata/opencode")
	ts := make([]int64, len(got))
	for i, p := range got {
		ts[i] = p.TS
	}
	if !sort.SliceIsSorted(ts, func(i, j int) bool { return ts[i] < ts[j] }) {
		t.Errorf("times %v", ts)
	}
}

// scanAll is Scan keeping every file.
func scanAll(root string, emit func(transcript.Prompt) error) (transcript.Stats, error) {
	return Scan(root, nil, emit)
}

// Texts wait in a temporary file while the prompts are sorted: each
// prompt comes out with its own text, in order, and the file is gone
// after the scan.
func TestTextsSpilled(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	root := t.TempDir()
	b := newDB(t, filepath.Join(root, "opencode.db"), schema1+schema2).session("ses_a", "", "/a", 1)
	var want []string
	for i := range 600 {
		text := fmt.Sprintf("prompt %04d", i)
		if i%2 == 0 {
			b.prompt(fmt.Sprintf("msg_%04d", i), "ses_a", text, int64(10+i))
		} else {
			b.exec(`INSERT INTO session_message (id, session_id, type, seq, time_created, data) VALUES (?, 'ses_a', 'user', ?, ?, ?)`,
				fmt.Sprintf("msg_%04d", i), i, 10+i, fmt.Sprintf(`{"text":%q}`, text))
		}
		want = append(want, text)
	}
	b.close()
	got, _ := ttest.Collect(t, scanAll, root)
	eq(t, got, want...)
	if left, _ := os.ReadDir(tmp); len(left) > 0 {
		t.Errorf("left in TMPDIR: %v", left)
	}
}

// parsePart decodes a part as encoding/json does.
func TestParsePartAsEncodingJSON(t *testing.T) {
	for _, data := range []string{
		`{"type":"text","text":"hello"}`,
		`{"id":"prt_1","type":"text","text":"a \"quoted\" \u00e9\n","synthetic":true}`,
		`{"type":"text","text":"x","ignored":true,"time":{"start":1}}`,
		`{"type":"text","text":null,"synthetic":null}`,
		`{"type":"file","text":"x","metadata":[1,{"a":"b"}]}`,
		`{"type":"text","text":"a","text":"b"}`,
		`{"type":1,"text":"x"}`,
		`{"type":"text","synthetic":"yes"}`,
		`{"type":"text","text":["x"]}`,
		`[]`, `"text"`, `{"type":"text"`, `{}`, ``,
	} {
		var want part
		wantOK := json.Unmarshal([]byte(data), &want) == nil
		got, ok := parsePart([]byte(data))
		if ok != wantOK || (ok && got != want) {
			t.Errorf("%s: got %+v, %v; encoding/json: %+v, %v", data, got, ok, want, wantOK)
		}
	}
}
