package opencode

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"hist/lib/transcript"
	"hist/lib/transcript/internal/ttest"
)

// keys runs a scan and returns the keys of the prompts it emitted.
func keys(t *testing.T, root string, keep transcript.Keep) ([]string, transcript.Stats) {
	t.Helper()
	var out []string
	st, err := ScanKept(root, keep, func(p transcript.Prompt) error {
		out = append(out, p.Key)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out, st
}

// minus returns a without b's elements.
func minus(a, b []string) []string {
	var out []string
	for _, x := range a {
		if !slices.Contains(b, x) {
			out = append(out, x)
		}
	}
	return out
}

// gen writes sessions and prompts in one schema generation.
type gen struct {
	*dbb
	v2  bool
	seq int
}

func (g *gen) session(id string, created int64) {
	if g.v2 {
		g.exec(`INSERT INTO session_v2 (id, project_id, directory, time_created) VALUES (?, 'p', '/p', ?)`, id, created)
	} else {
		g.dbb.session(id, "", "/p", created)
	}
}

func (g *gen) prompt(id, sess, text string, created int64) {
	if g.v2 {
		g.seq++
		g.exec(`INSERT INTO session_message (id, session_id, type, seq, time_created, data) VALUES (?, ?, 'user', ?, ?, ?)`,
			id, sess, g.seq, created, fmt.Sprintf(`{"text":%q,"time":{"created":%d}}`, text, created))
	} else {
		g.dbb.prompt(id, sess, text, created)
	}
}

// TestResumeYieldsWhatIsNew: a database read before, then written to, is
// read from its cursor: the prompts are those a whole read of it yields
// less those the earlier reads yielded (never fewer), and a fork's copies
// of prompts read before are not taken for new ones.
func TestResumeYieldsWhatIsNew(t *testing.T) {
	for _, v2 := range []bool{false, true} {
		t.Run(map[bool]string{false: "1.x", true: "2.x"}[v2], func(t *testing.T) {
			root := t.TempDir()
			schema := schema1
			if v2 {
				schema = schema2
			}
			g := &gen{dbb: newDB(t, filepath.Join(root, "opencode.db"), schema), v2: v2}
			// As opencode keeps it: in WAL mode, the writer open.
			g.exec(`PRAGMA journal_mode=WAL`)
			defer g.close()
			g.session("ses_a", 1000)
			g.prompt("msg_a1", "ses_a", "first", 1001)
			g.prompt("msg_a2", "ses_a", "second", 1002)
			g.session("ses_b", 1100)
			g.prompt("msg_b1", "ses_b", "in b", 1101)
			if !v2 {
				// A message whose parts are not written yet.
				g.msg("msg_b2", "ses_b", "user", 1102)
			}
			cur := ttest.Cursors{}
			var seen []string
			round := func(name string, exact bool) {
				t.Helper()
				got, st := keys(t, root, cur)
				whole, _ := keys(t, root, nil)
				if extra := minus(got, whole); len(extra) > 0 {
					t.Errorf("%s: %v emitted, not in a whole read %v", name, extra, whole)
				}
				if lost := minus(minus(whole, seen), got); len(lost) > 0 {
					t.Errorf("%s: %v lost (got %v)", name, lost, got)
				}
				if want := minus(whole, seen); exact && !slices.Equal(got, want) {
					t.Errorf("%s: got %v, want just %v", name, got, want)
				}
				if st.Files != 1 {
					t.Errorf("%s: stats %+v", name, st)
				}
				seen = append(seen, got...)
			}
			round("first read", true)
			if c := cur[filepath.Join(root, "opencode.db")]; parseCursor(c.Context) == nil || c.Offset == 0 {
				t.Fatalf("cursor %+v", c)
			}
			round("nothing new", true)

			// Appended to a session, a new session, parts come.
			g.prompt("msg_a3", "ses_a", "third", 2001)
			g.session("ses_c", 2100)
			g.prompt("msg_c1", "ses_c", "in c", 2101)
			if !v2 {
				g.text("prt_b2", "msg_b2", "ses_b", "parts written late")
			}
			round("grown", true)

			// A fork: its first prompts copied under new ids, with their
			// times, and one typed in it.
			g.session("ses_fork", 3000)
			g.prompt("msg_f1", "ses_fork", "first", 1001)
			g.prompt("msg_f2", "ses_fork", "second", 1002)
			g.prompt("msg_f3", "ses_fork", "third", 2001)
			g.prompt("msg_f4", "ses_fork", "typed in the fork", 3001)
			round("forked", false)
			for _, k := range seen {
				if k == "msg_f1" || k == "msg_f2" || k == "msg_f3" {
					t.Errorf("a fork's copy emitted: %s", k)
				}
			}

			// Then only new prompts again, read from the cursor.
			g.prompt("msg_f5", "ses_fork", "later in the fork", 4001)
			round("grown after the fork", true)
		})
	}
}

// TestResumeReadsWholeWhenUnsure: a cursor that is not understood, or
// whose marked row is gone, has the database read whole; a database keep
// does not keep is not read.
func TestResumeReadsWholeWhenUnsure(t *testing.T) {
	root := t.TempDir()
	path := filepath.Join(root, "opencode.db")
	b := newDB(t, path, schema1).
		session("ses_a", "", "/a", 1).
		prompt("msg_1", "ses_a", "one", 10).
		prompt("msg_2", "ses_a", "two", 20)
	cur := ttest.Cursors{}
	all, _ := keys(t, root, cur)
	if !slices.Equal(all, []string{"msg_1", "msg_2"}) {
		t.Fatalf("got %v", all)
	}
	if got, _ := keys(t, root, cur); len(got) != 0 {
		t.Errorf("nothing new: got %v", got)
	}
	// The latest rows deleted, a prompt written in their place: rowids
	// are taken again.
	b.exec(`DELETE FROM part WHERE message_id = 'msg_2'`).exec(`DELETE FROM message WHERE id = 'msg_2'`).
		prompt("msg_3", "ses_a", "three", 5)
	if got, _ := keys(t, root, cur); !slices.Equal(got, []string{"msg_1", "msg_3"}) {
		t.Errorf("after a delete: got %v", got)
	}
	for _, ctx := range []string{"", "oc0 1 2 3", "oc1 x", "oc1 1 1 1 1 1 1 1 extra"} {
		cur[path] = transcript.Cursor{Offset: 1, Context: ctx}
		if got, _ := keys(t, root, cur); !slices.Equal(got, []string{"msg_1", "msg_3"}) {
			t.Errorf("context %q: got %v", ctx, got)
		}
	}
	b.close()

	// Only another file of the data folder changed: the database is not
	// read; with JSON storage beside it, everything is, as without a
	// cursor.
	write := func(path string) {
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte("{}"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(root, "log", "x.log"))
	notDB := keepOnly{cur, func(path string) bool { return filepath.Base(path) != "opencode.db" }}
	if got, st := keys(t, root, notDB); len(got) != 0 || st.Files != 0 {
		t.Errorf("database not kept: got %v %+v", got, st)
	}
	write(filepath.Join(root, "storage", "session", "p", "x.json"))
	if got, st := keys(t, root, notDB); !slices.Equal(got, []string{"msg_1", "msg_3"}) || st.Files != 2 {
		t.Errorf("with storage: got %v %+v", got, st)
	}
}

// keepOnly is a transcript.Resumer that keeps the files keep says.
type keepOnly struct {
	ttest.Cursors
	keep func(path string) bool
}

func (k keepOnly) Keep(path string, _ fs.FileInfo) bool { return k.keep(path) }

// TestResumeFirstParts: a message read before any part was written, and
// tables without rowids (read whole, with no cursor).
func TestResumeFirstParts(t *testing.T) {
	root := t.TempDir()
	b := newDB(t, filepath.Join(root, "opencode.db"), schema1).
		session("ses_a", "", "/a", 1).msg("msg_1", "ses_a", "user", 10)
	cur := ttest.Cursors{}
	if got, _ := keys(t, root, cur); len(got) != 0 {
		t.Errorf("no parts yet: got %v", got)
	}
	b.text("prt_1", "msg_1", "ses_a", "parts now").close()
	if got, _ := keys(t, root, cur); !slices.Equal(got, []string{"msg_1"}) {
		t.Errorf("got %v", got)
	}

	root = t.TempDir()
	newDB(t, filepath.Join(root, "opencode.db"), `
		CREATE TABLE session (id text PRIMARY KEY, directory text) WITHOUT ROWID;
		CREATE TABLE message (id text PRIMARY KEY, session_id text, data text) WITHOUT ROWID;
		CREATE TABLE part (id text PRIMARY KEY, message_id text, data text) WITHOUT ROWID;
		INSERT INTO session VALUES ('ses_a', '/a');
		INSERT INTO message VALUES ('msg_1', 'ses_a', '{"role":"user","time":{"created":77}}');
		INSERT INTO part VALUES ('prt_1', 'msg_1', '{"type":"text","text":"no rowids"}');`).close()
	cur = ttest.Cursors{}
	for range 2 {
		if got, _ := keys(t, root, cur); !slices.Equal(got, []string{"msg_1"}) {
			t.Errorf("got %v", got)
		}
	}
	if len(cur) != 0 {
		t.Errorf("cursors %v", cur)
	}
}
