package cursor

import (
	"bytes"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	"hist/lib/transcript"
	"hist/lib/transcript/internal/ttest"
)

// The stores are built by hand from the documented layout (cursor-agent
// cannot be installed here): meta row '0' = hex(JSON), content-addressed
// blobs, a protobuf root blob listing the message blob ids (field 1) and
// the workspace (field 9).

func varint(v uint64) []byte {
	var b []byte
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}

func field(n int, payload []byte) []byte {
	b := varint(uint64(n<<3 | 2))
	b = append(b, varint(uint64(len(payload)))...)
	return append(b, payload...)
}

type store struct {
	path      string
	agentID   string
	createdAt any
	workspace string
	msgs      []any // JSON messages; []byte entries are stored as they are
	extraRoot []byte
	pragmas   []string
	keepOpen  bool
	db        *sql.DB
	ids       []string
}

func (s *store) build(t *testing.T) *store {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(s.path), 0o700); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", s.path)
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := db.Exec(q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	for _, p := range s.pragmas {
		exec(p)
	}
	exec(`CREATE TABLE blobs (id TEXT PRIMARY KEY, data BLOB)`)
	exec(`CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT)`)
	var root []byte
	for _, m := range s.msgs {
		data, ok := m.([]byte)
		if !ok {
			data, _ = json.Marshal(m)
		}
		sum := sha256.Sum256(data)
		id := hex.EncodeToString(sum[:])
		exec(`INSERT OR IGNORE INTO blobs (id, data) VALUES (?, ?)`, id, data)
		root = append(root, field(1, sum[:])...)
		s.ids = append(s.ids, id)
	}
	if s.workspace != "" {
		root = append(root, field(9, []byte(s.workspace))...)
	}
	root = append(root, s.extraRoot...)
	sum := sha256.Sum256(root)
	exec(`INSERT INTO blobs (id, data) VALUES (?, ?)`, hex.EncodeToString(sum[:]), root)
	exec(`INSERT INTO blobs (id, data) VALUES (?, ?)`, strings.Repeat("ab", 32), []byte{0x0a, 0x01, 0xff})
	m := map[string]any{"agentId": s.agentID, "latestRootBlobId": hex.EncodeToString(sum[:]), "name": "New Agent", "mode": "default", "lastUsedModel": "m"}
	if s.createdAt != nil {
		m["createdAt"] = s.createdAt
	}
	mj, _ := json.Marshal(m)
	exec(`INSERT INTO meta (key, value) VALUES ('0', ?)`, hex.EncodeToString(mj))
	if s.keepOpen {
		s.db = db
	} else if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	return s
}

func user(content any) map[string]any { return map[string]any{"role": "user", "content": content} }

func textParts(texts ...string) []any {
	var out []any
	for _, t := range texts {
		out = append(out, map[string]any{"type": "text", "text": t})
	}
	return out
}

var (
	sys       = map[string]any{"role": "system", "content": "You are a coding agent."}
	userInfo  = user("<user_info>\nOS Version: linux\nWorkspace Path: /x\n</user_info>")
	assistant = func(s string) map[string]any {
		return map[string]any{"role": "assistant", "id": "a-" + s, "content": textParts(s)}
	}
)

func query(q string) string { return "<user_query>\n" + q + "\n</user_query>" }

func chatPath(root, ws, id string) string {
	return filepath.Join(root, "chats", ws, id, "store.db")
}

func eq(t *testing.T, got []transcript.Prompt, want ...string) {
	t.Helper()
	var g []string
	for _, p := range got {
		g = append(g, p.Text)
	}
	if strings.Join(g, "\x00") != strings.Join(want, "\x00") || len(g) != len(want) {
		t.Errorf("prompts:\n got %q\nwant %q", g, want)
	}
}

func snapshot(t *testing.T, dir string) string {
	t.Helper()
	var out []string
	filepath.Walk(dir, func(path string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			data, _ := os.ReadFile(path)
			out = append(out, fmt.Sprintf("%s %d %d %x", path, fi.Size(), fi.ModTime().UnixNano(), sha256.Sum256(data)))
		}
		return nil
	})
	return strings.Join(out, "\n")
}

const chatA = "4a0c5b1e-2f0d-4c1b-9d7e-0c1a2b3c4d5e"

func TestStoreRules(t *testing.T) {
	root := t.TempDir()
	(&store{
		path: chatPath(root, "36e6f82a4f9ae16e16ce627c19e4b65f", chatA), agentID: chatA,
		createdAt: 1781256145540, workspace: "file:///Users/example/My%20Project",
		msgs: []any{
			sys,
			userInfo, // injected context only
			user(textParts("<user_info>\nOS: linux\n</user_info>\n" + query("fix the login bug\n  keep the tests"))),
			assistant("done"),
			map[string]any{"role": "tool", "content": []any{map[string]any{"type": "tool-result", "toolCallId": "c", "result": "<user_query>not this</user_query>"}}},
			user("plain typed text"),
			user(textParts("<attached_files>\n<file>x.go</file>\n</attached_files>")),
			user(query("/summarize")),
			user(query("   ")),
			user(textParts("part one", "part two")),
			[]byte(`{"role":"user","content":`), // broken
		},
	}).build(t)
	before := snapshot(t, root)
	got, st := ttest.Collect(t, scanAll, root)
	if after := snapshot(t, root); after != before {
		t.Errorf("the scan changed files:\n%s\n---\n%s", before, after)
	}
	eq(t, got, "fix the login bug\n  keep the tests", "plain typed text", "part one\npart two")
	for _, p := range got {
		if p.TS != 1781256145540 || !p.Approx || p.Cwd != "/Users/example/My Project" || p.Session != chatA || p.Src != transcript.SrcCursor || p.Key == "" {
			t.Errorf("got %+v", p)
		}
	}
	if st.Files != 1 || st.Malformed != 1 {
		t.Errorf("stats %+v", st)
	}
}

func TestCreatedAt(t *testing.T) {
	for name, c := range map[string]struct {
		v    any
		want int64
	}{
		"number":         {1781256145540, 1781256145540},
		"numeric string": {"1781256145540", 1781256145540},
		"seconds":        {1781256145, 1781256145000},
		"iso":            {"2026-06-12T10:02:25.540Z", 1781258545540},
	} {
		t.Run(name, func(t *testing.T) {
			root := t.TempDir()
			(&store{path: chatPath(root, "w", chatA), agentID: chatA, createdAt: c.v, workspace: "/w", msgs: []any{user(query("hi"))}}).build(t)
			got, _ := ttest.Collect(t, scanAll, root)
			if len(got) != 1 || got[0].TS != c.want {
				t.Errorf("got %+v, want TS %d", got, c.want)
			}
		})
	}
	t.Run("missing: the store's time", func(t *testing.T) {
		root := t.TempDir()
		s := (&store{path: chatPath(root, "w", chatA), agentID: chatA, workspace: "/w", msgs: []any{user(query("hi"))}}).build(t)
		mt := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
		os.Chtimes(s.path, mt, mt)
		got, _ := ttest.Collect(t, scanAll, root)
		if len(got) != 1 || got[0].TS != mt.UnixMilli() || !got[0].Approx {
			t.Errorf("got %+v", got)
		}
	})
}

func TestWALStoreWithLiveWriter(t *testing.T) {
	root := t.TempDir()
	s := (&store{path: chatPath(root, "w", chatA), agentID: chatA, createdAt: 5, workspace: "/w",
		pragmas: []string{`PRAGMA journal_mode=WAL`, `PRAGMA wal_autocheckpoint=0`},
		msgs:    []any{sys, user(query("in the WAL"))}, keepOpen: true}).build(t)
	defer s.db.Close()
	if fi, err := os.Stat(s.path + "-wal"); err != nil || fi.Size() == 0 {
		t.Fatalf("no WAL: %v", err)
	}
	before := snapshot(t, root)
	got, _ := ttest.Collect(t, scanAll, root)
	eq(t, got, "in the WAL")
	if after := snapshot(t, root); after != before {
		t.Errorf("the scan changed files:\n%s\n---\n%s", before, after)
	}
}

func TestForkCopiesCountOnce(t *testing.T) {
	root := t.TempDir()
	base := []any{sys, userInfo, user(query("first")), assistant("1"), user(query("second")), assistant("2")}
	(&store{path: chatPath(root, "ws1", "a"), agentID: "a", createdAt: 100, workspace: "/w", msgs: base}).build(t)
	// A fork of "a" after "first": same leading blobs, then its own.
	fork := append(append([]any{}, base[:4]...), user(query("second")), assistant("other"), user(query("third")))
	(&store{path: chatPath(root, "ws1", "b"), agentID: "b", createdAt: 200, workspace: "/w", msgs: fork}).build(t)
	// The same start in another workspace is another conversation.
	(&store{path: chatPath(root, "ws2", "c"), agentID: "c", createdAt: 300, workspace: "/v", msgs: base[:3]}).build(t)
	// A fork of all of "d", which ends on a prompt left unanswered.
	dm := []any{sys, user(query("unanswered"))}
	(&store{path: chatPath(root, "ws3", "d"), agentID: "d", createdAt: 400, workspace: "/u", msgs: dm}).build(t)
	(&store{path: chatPath(root, "ws3", "e"), agentID: "e", createdAt: 500, workspace: "/u", msgs: append(dm, assistant("late"), user(query("next")))}).build(t)
	got, _ := ttest.Collect(t, scanAll, root)
	// In "b", "second" was typed again after the fork point: kept.
	eq(t, got, "first", "second", "second", "third", "first", "unanswered", "next")
	want := []string{"a", "a", "b", "b", "c", "d", "e"}
	for i, p := range got {
		if p.Session != want[i] {
			t.Errorf("%d: %+v", i, p)
		}
	}
}

func TestMalformedStores(t *testing.T) {
	root := t.TempDir()
	mk := func(id string, setup func(db *sql.DB)) {
		path := chatPath(root, "w", id)
		os.MkdirAll(filepath.Dir(path), 0o700)
		db, err := sql.Open("sqlite", path)
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range []string{`CREATE TABLE blobs (id TEXT PRIMARY KEY, data BLOB)`, `CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT)`} {
			if _, err := db.Exec(q); err != nil {
				t.Fatal(err)
			}
		}
		setup(db)
		db.Close()
	}
	mk("no-meta", func(*sql.DB) {})
	mk("bad-meta", func(db *sql.DB) { db.Exec(`INSERT INTO meta VALUES ('0', 'zz not hex')`) })
	mk("no-root", func(db *sql.DB) {
		db.Exec(`INSERT INTO meta VALUES ('0', ?)`, hex.EncodeToString([]byte(`{"agentId":"x","latestRootBlobId":"`+strings.Repeat("0", 64)+`"}`)))
	})
	mk("bad-root", func(db *sql.DB) {
		db.Exec(`INSERT INTO blobs VALUES (?, ?)`, strings.Repeat("1", 64), []byte{0x0a, 0x40, 0x01})
		db.Exec(`INSERT INTO meta VALUES ('0', ?)`, hex.EncodeToString([]byte(`{"agentId":"y","latestRootBlobId":"`+strings.Repeat("1", 64)+`"}`)))
	})
	(&store{path: chatPath(root, "w", "good"), agentID: "good", createdAt: 1, workspace: "/w", msgs: []any{user(query("still read"))}}).build(t)
	got, st := ttest.Collect(t, scanAll, root)
	eq(t, got, "still read")
	if st.Malformed != 4 || st.Files != 5 {
		t.Errorf("stats %+v", st)
	}
}

// A store that is not SQLite is passed over and named.
func TestUnreadableStore(t *testing.T) {
	root := t.TempDir()
	path := chatPath(root, "w", chatA)
	os.MkdirAll(filepath.Dir(path), 0o700)
	os.WriteFile(path, bytes.Repeat([]byte("not sqlite"), 50), 0o600)
	_, st := ttest.Collect(t, scanAll, root)
	if len(st.Undecodable) != 1 || st.Undecodable[0].Path != path {
		t.Fatalf("undecodable %+v", st.Undecodable)
	}
}

func TestOddLayouts(t *testing.T) {
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, "chats", "w", "x", "store.db"), 0o700) // a folder
	os.WriteFile(filepath.Join(root, "chats", "file"), nil, 0o600)
	os.MkdirAll(filepath.Join(root, "projects"), 0o700)
	os.WriteFile(filepath.Join(root, "projects", "p"), nil, 0o600)
	got, st := ttest.Collect(t, scanAll, root)
	if len(got) != 0 || st.Skipped != 1 {
		t.Errorf("%v %+v", got, st)
	}
	file := filepath.Join(t.TempDir(), "f")
	os.WriteFile(file, nil, 0o600)
	if _, st := ttest.Collect(t, scanAll, file); !reflect.DeepEqual(st, transcript.Stats{}) {
		t.Errorf("a file as root: %+v", st)
	}
}

func mirrorLine(role string, content any) string {
	b, _ := json.Marshal(map[string]any{"role": role, "message": map[string]any{"content": content}})
	return string(b)
}

func TestMirror(t *testing.T) {
	root := t.TempDir()
	// A project folder to find by decoding the mirror's folder name.
	proj := filepath.Join(t.TempDir(), "beta proj.v2")
	if err := os.MkdirAll(proj, 0o700); err != nil {
		t.Fatal(err)
	}
	enc := strings.Join(func() []string {
		var parts []string
		for _, p := range strings.Split(strings.TrimPrefix(proj, "/"), "/") {
			parts = append(parts, encodeName(p))
		}
		return parts
	}(), "-")
	tr := filepath.Join(root, "projects", enc, "agent-transcripts")
	lines := strings.Join([]string{
		mirrorLine("user", textParts("<user_info>x</user_info>\n"+query("from the mirror"))),
		mirrorLine("assistant", textParts("reply")),
		`{"type":"turn_ended","status":"success"}`,
		`{broken`,
		mirrorLine("user", textParts("<attached_files>f</attached_files>")),
		mirrorLine("user", "string content"),
	}, "\n")
	mirrorOnly := "11111111-2222-3333-4444-555555555555"
	os.MkdirAll(filepath.Join(tr, mirrorOnly, "subagents"), 0o700)
	os.WriteFile(filepath.Join(tr, mirrorOnly, mirrorOnly+".jsonl"), []byte(lines), 0o600)
	os.WriteFile(filepath.Join(tr, mirrorOnly, "subagents", "s.jsonl"), []byte(mirrorLine("user", textParts("subagent task"))), 0o600)
	mt := time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC)
	os.Chtimes(filepath.Join(tr, mirrorOnly, mirrorOnly+".jsonl"), mt, mt)
	// A chat that has a store: its mirror is not read.
	(&store{path: chatPath(root, "w", chatA), agentID: chatA, createdAt: 1, workspace: "/w", msgs: []any{user(query("from the store"))}}).build(t)
	os.WriteFile(filepath.Join(tr, chatA+".jsonl"), []byte(mirrorLine("user", textParts(query("from the store's mirror")))), 0o600)
	os.WriteFile(filepath.Join(tr, "old.txt"), []byte("user:\n<user_query>x</user_query>\n"), 0o600)

	got, st := ttest.Collect(t, scanAll, root)
	eq(t, got, "from the store", "from the mirror", "string content")
	m := got[1]
	if m.Session != mirrorOnly || m.TS != mt.UnixMilli() || !m.Approx || m.Cwd != proj {
		t.Errorf("got %+v (cwd want %q)", m, proj)
	}
	if st.Malformed != 1 || st.Skipped != 1 || st.Subagent != 1 {
		t.Errorf("stats %+v", st)
	}
}

func TestDecodeProject(t *testing.T) {
	base := t.TempDir()
	for _, d := range []string{"a-b/c", "a/b-c", "x y/ü", "x/y"} {
		os.MkdirAll(filepath.Join(base, d), 0o700)
	}
	for enc, want := range map[string]string{
		"a-b-c": filepath.Join(base, "a/b-c"), // ambiguous: the first match in name order
		"x-y--": filepath.Join(base, "x y/ü"),
		"x-y":   filepath.Join(base, "x/y"),
		"nope":  "",
		"":      "",
	} {
		if got := decodeProject(enc, base); got != want {
			t.Errorf("%q: got %q, want %q", enc, got, want)
		}
	}
}

func TestScanReader(t *testing.T) {
	data := mirrorLine("user", textParts(query("q1"))) + "\n\n" + `{"role":"user","message":{"content":7}}` + "\n" + mirrorLine("user", textParts("q2"))
	var got []transcript.Prompt
	st, err := ScanReader(strings.NewReader(data), "/x/agent-transcripts/abc.jsonl", func(p transcript.Prompt) error {
		got = append(got, p)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	eq(t, got, "q1", "q2")
	if got[0].Session != "abc" || got[0].TS != 0 || !got[0].Approx || got[0].Key == got[1].Key {
		t.Errorf("got %+v", got)
	}
	if st.Files != 1 || st.Bytes != int64(len(data)) || st.Prompts != 2 {
		t.Errorf("stats %+v", st)
	}
}

func TestEmitErrorStops(t *testing.T) {
	root := t.TempDir()
	(&store{path: chatPath(root, "w", chatA), agentID: chatA, createdAt: 1, workspace: "/w", msgs: []any{user(query("a")), user(query("b"))}}).build(t)
	stop := errors.New("stop")
	n := 0
	_, err := scanAll(root, func(transcript.Prompt) error { n++; return stop })
	if err != stop || n != 1 {
		t.Fatalf("err %v after %d", err, n)
	}
}

func TestDefaultRoot(t *testing.T) {
	xdg := t.TempDir()
	env := func(kv ...string) transcript.Env {
		m := map[string]string{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return func(k string) string { return m[k] }
	}
	if got := DefaultRoot(env(), "/h"); got != "/h/.cursor" {
		t.Errorf("got %q", got)
	}
	if got := DefaultRoot(env("CURSOR_CONFIG_DIR", "/c"), "/h"); got != "/c" {
		t.Errorf("got %q", got)
	}
	if got := DefaultRoot(env("XDG_CONFIG_HOME", xdg), "/h"); got != "/h/.cursor" {
		t.Errorf("without the folder: %q", got)
	}
	os.Mkdir(filepath.Join(xdg, "cursor"), 0o700)
	if got := DefaultRoot(env("XDG_CONFIG_HOME", xdg), "/h"); got != filepath.Join(xdg, "cursor") {
		t.Errorf("got %q", got)
	}
}

func TestUserText(t *testing.T) {
	for in, want := range map[string]string{
		`"<user_query>\nx\n</user_query>"`:              "x",
		`"<user_query>x</user_query>"`:                  "x",
		`"<user_query>\n\n  x  \n\n</user_query>"`:      "\n  x  \n",
		`"<user_query>unterminated"`:                    "unterminated",
		`"plain"`:                                       "plain",
		`[{"type":"text","text":"a"},{"type":"image"}]`: "a",
	} {
		got, ok := userText(json.RawMessage(in))
		if !ok || got != want {
			t.Errorf("%s: %q %v, want %q", in, got, ok, want)
		}
	}
	for _, in := range []string{`"<user_info>x</user_info>"`, `7`, `{"a":1}`, `"  <rules>r</rules>"`} {
		if got, ok := userText(json.RawMessage(in)); ok {
			t.Errorf("%s: %q", in, got)
		}
	}
}

func TestParseRoot(t *testing.T) {
	id := sha256.Sum256([]byte("x"))
	hexID := hex.EncodeToString(id[:])
	b := append(field(1, id[:]), field(1, []byte(strings.ToUpper(hexID)))...)
	b = append(b, varint(2<<3)...) // field 2, wire type 0 (varint)
	b = append(b, varint(300)...)
	b = append(b, field(9, []byte("/w s"))...)
	b = append(b, varint(3<<3|5)...)
	b = append(b, 1, 2, 3, 4)
	b = append(b, varint(4<<3|1)...)
	b = append(b, 1, 2, 3, 4, 5, 6, 7, 8)
	b = append(b, field(1, []byte("short"))...)
	ids, ws, ok := parseRoot(b)
	if !ok || len(ids) != 2 || ids[0] != hexID || ids[1] != hexID || ws != "/w s" {
		t.Errorf("got %v %q %v", ids, ws, ok)
	}
	for _, bad := range [][]byte{{0x0a}, {0x0a, 0x05, 1}, {0x0b}, {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}} {
		if _, _, ok := parseRoot(bad); ok {
			t.Errorf("%x parsed", bad)
		}
	}
}

// scanAll is Scan keeping every file.
func scanAll(root string, emit func(transcript.Prompt) error) (transcript.Stats, error) {
	return Scan(root, nil, emit)
}

// ScanReader reads one mirror transcript (JSONL) from r; name is its path:
// its base name gives the session. The mirror has no times: TS is 0 and
// Approx is set (Scan uses the file's modification time), and Cwd is empty.
func ScanReader(r io.Reader, name string, emit func(transcript.Prompt) error) (transcript.Stats, error) {
	var st transcript.Stats
	id := strings.TrimSuffix(filepath.Base(name), ".jsonl")
	c := &chat{file: name, id: id, group: name}
	if err := mirrorPrompts(r, c, &st); err != nil {
		return st, err
	}
	return st, emitChats([]*chat{c}, emit, &st)
}
