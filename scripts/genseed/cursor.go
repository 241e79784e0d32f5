package main

import (
	"bytes"
	"crypto/md5"
	"crypto/sha256"
	"database/sql"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// cursorChat is one chat of the fixtures: cursor-agent's store (see
// hist/lib/transcript/cursor) holds its message blobs, content-addressed,
// and after each message a new protobuf root blob listing the messages so
// far (the older roots stay), with the latest one named by the meta row.
type cursorChat struct {
	id      string // agentId: the copy's number replaces its first 8 hex digits
	created any    // createdAt, in the forms the fixtures give it
	ws      string // the workspace, root blob field 9
	fork    int    // > 0: the chat starts with the first fork messages of the chat before it
	msgs    []string
	prompts int // what hist-seed imports from it
}

const (
	cursorSys      = `{"role":"system","content":"system prompt text"}`
	cursorUserInfo = `{"role":"user","content":"<user_info>OS: linux</user_info>"}`
	cursorAlpha    = "file:///tmp/lab/wd/cursor/alpha_proj.v2"
	cursorBeta     = "/tmp/lab/wd/cursor/beta proj ü"
)

// cursorChats are the chats of testscripts/seed_cursor.txtar and of
// lib/transcript/cursor's TestStoreRules and TestForkCopiesCountOnce, each
// prompt tagged [cu-NN].
var cursorChats = []cursorChat{{
	id: "4a0c5b1e-2f0d-4c1b-9d7e-0c1a2b3c4d01", created: int64(1767225600000), ws: cursorAlpha,
	msgs: []string{
		cursorSys, cursorUserInfo,
		`{"role":"user","content":[{"type":"text","text":"<user_query>\n[cu-01] first cursor prompt\n</user_query>"}]}`,
		`{"role":"assistant","content":"assistant says hi"}`,
		`{"role":"user","content":[{"type":"text","text":"<user_query>\n[cu-02] second\nline\n</user_query>"}]}`,
		`{"role":"assistant","content":"assistant answers"}`,
		`{"role":"user","content":"<user_query>\n[cu-03] third, a chat that went on\n</user_query>"}`,
	},
	prompts: 3,
}, {
	// A fork of the chat before it after its first prompt: that prompt
	// counts once; the second, typed again after the fork point, and the
	// third count.
	id: "4a0c5b1e-2f0d-4c1b-9d7e-0c1a2b3c4d02", created: int64(1767225700000), ws: cursorAlpha, fork: 4,
	msgs: []string{
		`{"role":"user","content":[{"type":"text","text":"<user_query>\n[cu-02] second\nline\n</user_query>"}]}`,
		`{"role":"assistant","id":"a-other","content":[{"type":"text","text":"other"}]}`,
		`{"role":"user","content":[{"type":"text","text":"<user_query>\n[cu-09] third, in the fork\n</user_query>"}]}`,
	},
	prompts: 2,
}, {
	id: "4a0c5b1e-2f0d-4c1b-9d7e-0c1a2b3c4d03", created: int64(1767312000), ws: cursorBeta,
	msgs:    []string{`{"role":"user","content":"<user_query>\n[cu-04] other project prompt\n</user_query>"}`},
	prompts: 1,
}, {
	id: "4a0c5b1e-2f0d-4c1b-9d7e-0c1a2b3c4d04", created: int64(1767398400000), ws: cursorBeta,
	msgs:    []string{`{"role":"user","content":"<user_query>\n[cu-05] another chat\n</user_query>"}`},
	prompts: 1,
}, {
	id: "4a0c5b1e-2f0d-4c1b-9d7e-0c1a2b3c4d05", created: "1767484800000", ws: "file:///tmp/lab/wd/cursor/My%20Project",
	msgs: []string{
		`{"role":"system","content":"You are a coding agent."}`,
		`{"role":"user","content":"<user_info>\nOS Version: linux\nWorkspace Path: /tmp/lab/wd/cursor/My Project\n</user_info>"}`,
		`{"role":"user","content":[{"type":"text","text":"<user_info>\nOS: linux\n</user_info>\n<user_query>\n[cu-06] fix the login bug\n  keep the tests\n</user_query>"}]}`,
		`{"role":"assistant","id":"a-done","content":[{"type":"text","text":"done"}]}`,
		`{"role":"tool","content":[{"type":"tool-result","toolCallId":"c","result":"<user_query>not this</user_query>"}]}`,
		`{"role":"user","content":"[cu-07] plain typed text"}`,
		`{"role":"user","content":[{"type":"text","text":"<attached_files>\n<file>x.go</file>\n</attached_files>"}]}`,
		`{"role":"user","content":"<user_query>\n/summarize\n</user_query>"}`,
		`{"role":"user","content":"<user_query>\n   \n</user_query>"}`,
		`{"role":"user","content":[{"type":"text","text":"[cu-08] part one"},{"type":"text","text":"part two"}]}`,
		`{"role":"user","content":`, // broken
	},
	prompts: 3,
}}

func protoField(n int, payload []byte) []byte {
	b := binary.AppendUvarint(nil, uint64(n<<3|2))
	b = binary.AppendUvarint(b, uint64(len(payload)))
	return append(b, payload...)
}

// workspaceDir is the chats/ folder of a workspace: the md5 of its path.
func workspaceDir(ws string) string {
	if u, err := url.Parse(ws); err == nil && u.Scheme == "file" {
		ws = u.Path
	}
	sum := md5.Sum([]byte(ws))
	return hex.EncodeToString(sum[:])
}

// genCursor writes the chats' stores, copy after copy.
func genCursor(o options, tag string) (written, error) {
	// The chats name three workspaces.
	slots := max(o.projects/3, 1)
	var w written
	for i := 0; w.bytes < o.mb<<20; i++ {
		c := copier{i: i, slot: i % slots, tag: tag, sameTimes: o.sameTimes, epoch: jsonlEpoch}
		var prev [][]byte
		for _, ch := range cursorChats {
			var msgs [][]byte
			if ch.fork > 0 {
				msgs = append(msgs, prev[:ch.fork]...)
			}
			for _, m := range ch.msgs {
				msgs = append(msgs, c.fix([]byte(m)))
			}
			prev = msgs
			ws := string(c.common([]byte(ch.ws)))
			id := string(c.fix([]byte(ch.id)))
			path := filepath.Join(o.out, "chats", workspaceDir(ws), id, "store.db")
			n, err := writeStore(path, id, c.created(ch.created), ws, msgs)
			if err != nil {
				return w, err
			}
			w.bytes += n
			w.files++
			w.prompts += ch.prompts
		}
	}
	return w, nil
}

// created moves a chat's createdAt by the copy's seconds, in its form.
func (c copier) created(v any) any {
	if c.sameTimes {
		return v
	}
	switch x := v.(type) {
	case int64:
		return shiftEpoch(x, c.i)
	case string:
		n, _ := strconv.ParseInt(x, 10, 64)
		return strconv.FormatInt(shiftEpoch(n, c.i), 10)
	}
	return v
}

// writeStore writes a chat store at path in WAL mode, as cursor-agent
// leaves it, and returns its size.
func writeStore(path, id string, created any, ws string, msgs [][]byte) (int64, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return 0, err
	}
	db, err := sql.Open("sqlite", path+"?_pragma=journal_mode(off)&_pragma=synchronous(off)")
	if err != nil {
		return 0, err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	for _, q := range []string{`CREATE TABLE blobs (id TEXT PRIMARY KEY, data BLOB)`, `CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT)`, `BEGIN`} {
		if _, err := db.Exec(q); err != nil {
			return 0, err
		}
	}
	put := func(data []byte) ([32]byte, error) {
		sum := sha256.Sum256(data)
		_, err := db.Exec(`INSERT OR IGNORE INTO blobs (id, data) VALUES (?, ?)`, hex.EncodeToString(sum[:]), data)
		return sum, err
	}
	// A state blob (protobuf), which no root lists.
	if _, err := db.Exec(`INSERT INTO blobs (id, data) VALUES (?, ?)`, strings.Repeat("ab", 32), []byte{0x0a, 0x01, 0xff}); err != nil {
		return 0, err
	}
	var ids []byte
	var root [32]byte
	for _, m := range msgs {
		sum, err := put(m)
		if err != nil {
			return 0, err
		}
		ids = append(ids, protoField(1, sum[:])...)
		if root, err = put(append(append([]byte{}, ids...), protoField(9, []byte(ws))...)); err != nil {
			return 0, err
		}
	}
	meta := jsonText(map[string]any{"agentId": id, "latestRootBlobId": hex.EncodeToString(root[:]),
		"name": "New Agent", "mode": "default", "createdAt": created, "lastUsedModel": "m"})
	for _, q := range []string{`INSERT INTO meta (key, value) VALUES ('0', '` + hex.EncodeToString(meta) + `')`, `COMMIT`, `PRAGMA journal_mode=WAL`} {
		if _, err := db.Exec(q); err != nil {
			return 0, err
		}
	}
	if err := db.Close(); err != nil {
		return 0, err
	}
	fi, err := os.Stat(path)
	if err != nil {
		return 0, err
	}
	return fi.Size(), nil
}

// appendCursor adds one typed prompt to the chat store at path (made, in
// workspace cwd, when missing), as cursor-agent does when a chat goes on:
// the message blob, a new root listing it, the meta row naming that root.
func appendCursor(path, text string, ms int64, cwd string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	db, err := sql.Open("sqlite", path+"?_pragma=busy_timeout(5000)&_pragma=journal_mode(wal)")
	if err != nil {
		return err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	for _, q := range []string{`CREATE TABLE IF NOT EXISTS blobs (id TEXT PRIMARY KEY, data BLOB)`, `CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT)`} {
		if _, err := db.Exec(q); err != nil {
			return err
		}
	}
	meta := map[string]any{"agentId": filepath.Base(filepath.Dir(path)), "name": "New Agent", "createdAt": ms}
	root := protoField(9, []byte(cwd))
	var value string
	switch err := db.QueryRow(`SELECT value FROM meta WHERE key = '0'`).Scan(&value); {
	case errors.Is(err, sql.ErrNoRows):
	case err != nil:
		return err
	default:
		raw, err := hex.DecodeString(value)
		if err != nil {
			return err
		}
		if err := json.Unmarshal(raw, &meta); err != nil {
			return err
		}
		if err := db.QueryRow(`SELECT data FROM blobs WHERE id = ?`, meta["latestRootBlobId"]).Scan(&root); err != nil {
			return err
		}
	}
	msg := jsonText(map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": "<user_query>\n" + text + "\n</user_query>"}}})
	sum := sha256.Sum256(msg)
	root = append(root, protoField(1, sum[:])...)
	rsum := sha256.Sum256(root)
	meta["latestRootBlobId"] = hex.EncodeToString(rsum[:])
	mj := jsonText(meta)
	tx, err := db.Begin()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	for _, q := range [][]any{
		{`INSERT OR IGNORE INTO blobs (id, data) VALUES (?, ?)`, hex.EncodeToString(sum[:]), msg},
		{`INSERT OR IGNORE INTO blobs (id, data) VALUES (?, ?)`, hex.EncodeToString(rsum[:]), root},
		{`INSERT OR REPLACE INTO meta (key, value) VALUES ('0', ?)`, hex.EncodeToString(mj)},
	} {
		if _, err := tx.Exec(q[0].(string), q[1:]...); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// jsonText is v in JSON as JavaScript writes it (no HTML escapes).
func jsonText(v any) []byte {
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(false)
	e.Encode(v)
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}
