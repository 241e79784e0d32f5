// Package cursor reads the prompts a person typed into Cursor's agent CLI
// (cursor-agent) from its chat stores, and from the JSONL transcripts it
// mirrors them to when a chat has no store.
//
// Where (relative to the root, ~/.cursor by default):
//   - chats/<md5 of the workspace>/<chat id>/store.db: SQLite. Table meta,
//     row key '0', holds hex-encoded JSON {"agentId", "latestRootBlobId",
//     "createdAt", …}; table blobs(id, data) is content-addressed. The root
//     blob is protobuf: field 1 repeats the 32-byte ids of the message blobs
//     in order, field 9 is the workspace path. A message blob is JSON
//     {"role", "content": string or [{"type":"text","text"}…]}.
//   - projects/<encoded workspace>/agent-transcripts/<chat id>.jsonl (or
//     <chat id>/<chat id>.jsonl): lines {"role","message":{"content":[…]}};
//     read only for a chat that no store.db holds. Subagent transcripts
//     (…/subagents/) and the older .txt transcripts are skipped.
//
// What counts as a typed prompt: a "user" message whose text holds
// <user_query>…</user_query> yields the inside of the tag (one newline the
// tag adds on each side removed); a user message without the tag that
// starts with "<" is injected context (<user_info>, attached files, rules)
// and is dropped; any other user text is the prompt as stored. A prompt hist
// would not capture (blank, or a command) is never emitted.
//
// There are no per-message times: every prompt of a chat gets the chat's
// createdAt (else the store's modification time; for a mirror, the file's),
// flagged Approx. The cwd is the root blob's workspace (for a mirror, the
// folder name decoded against the file system); the session is the chat id
// ("agent --resume" takes it). A chat forked from another starts with the
// same message blobs: prompts in the leading run of blobs that an earlier
// chat of the same workspace also starts with count once, in the earlier
// chat.
//
// These formats are undocumented and were built from public descriptions
// (cursor-agent cannot be installed here); they are unverified against a
// real store. Stores are read without writing (see
// hist/lib/transcript/internal/rosqlite); a store that cannot be read stops
// the scan with a *transcript.ReadError, so the import is retried later.
package cursor

import (
	"bytes"
	"cmp"
	"database/sql"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"hist/lib/identity"
	"hist/lib/transcript"
	"hist/lib/transcript/internal/filescan"
	"hist/lib/transcript/internal/rosqlite"
)

// DefaultRoot is where cursor-agent keeps its chats: $CURSOR_CONFIG_DIR,
// else $XDG_CONFIG_HOME/cursor when that folder exists, else ~/.cursor.
// (The mirror under projects/ follows $CURSOR_DATA_DIR; Scan looks for it
// under the same root.)
func DefaultRoot(env transcript.Env, home string) string {
	return Config(env, home)
}

// Scan reads the chat stores and mirror transcripts under root, oldest
// chat first, as transcript.Agent's Scan says. A chat whose store keep
// passes over stays the chat's source: its mirror is not read in its
// place.
func Scan(root string, keep transcript.Keep, emit func(transcript.Prompt) error) (transcript.Stats, error) {
	var st transcript.Stats
	stores, err := listStores(root)
	if err != nil {
		return st, err
	}
	have := map[string]bool{}
	var kept []string
	for _, path := range stores {
		have[filepath.Base(filepath.Dir(path))] = true
		if filescan.Kept(path, keep) {
			kept = append(kept, path)
		}
	}
	var chats []*chat
	for _, r := range readStores(kept) {
		st.Add(r.st)
		if r.err != nil {
			return st, r.err
		}
		if r.c != nil {
			chats = append(chats, r.c)
			have[r.c.id] = true
		}
	}
	mirrors, err := listMirrors(root, &st)
	if err != nil {
		return st, err
	}
	for _, m := range mirrors {
		if have[m.id] || !filescan.Kept(m.path, keep) {
			continue
		}
		c, err := readMirror(m, &st)
		if err != nil {
			return st, err
		}
		chats = append(chats, c)
	}
	return st, emitChats(chats, emit, &st)
}

// chat is one conversation's prompts.
type chat struct {
	file    string // its store or mirror transcript
	id      string
	group   string // chats sharing a workspace folder (for forks)
	created int64
	cwd     string
	blobs   []string // the message blob ids, in order; nil in a mirror
	prompts []prompt
}

type prompt struct {
	text string
	n    int // its index in blobs; in a mirror, its line
}

// key is p's Prompt.Key.
func (c *chat) key(p prompt) string {
	if c.blobs == nil {
		return c.id + "/line" + strconv.Itoa(p.n)
	}
	return c.id + "/" + c.blobs[p.n] + "/" + strconv.Itoa(p.n)
}

func emitChats(chats []*chat, emit func(transcript.Prompt) error, st *transcript.Stats) error {
	slices.SortStableFunc(chats, func(a, b *chat) int {
		return cmp.Or(cmp.Compare(a.created, b.created), strings.Compare(a.id, b.id))
	})
	d := &filescan.Dedup{Emit: emit}
	defer func() { st.Prompts += d.N }()
	// A fork shares its first blob: chats are compared only with the
	// earlier ones of their workspace that start with the same blob.
	earlier := map[[2]string][]*chat{} // by group and first blob
	for _, c := range chats {
		shared := 0
		if len(c.blobs) > 0 {
			k := [2]string{c.group, c.blobs[0]}
			shared = forked(c, earlier[k])
			earlier[k] = append(earlier[k], c)
		}
		for _, p := range c.prompts {
			if p.n < shared || !identity.Capturable(p.text) {
				continue
			}
			err := d.Add(transcript.Prompt{
				Text:    p.text,
				TS:      c.created,
				Cwd:     c.cwd,
				Session: c.id,
				Src:     transcript.SrcCursor,
				Key:     c.key(p),
				Approx:  true,
				File:    c.file,
			})
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// forked returns how many of c's leading blobs are a fork's copy of one of
// the earlier chats of its workspace: the leading run shared with it.
// Where the run ends on a user message and the earlier chat goes on, that
// message may have been typed again (equal content makes an equal blob):
// it is not counted.
func forked(c *chat, earlier []*chat) int {
	shared := 0
	for _, e := range earlier {
		if e.id == c.id {
			continue
		}
		n := 0
		for n < len(c.blobs) && n < len(e.blobs) && c.blobs[n] == e.blobs[n] {
			n++
		}
		if n < len(e.blobs) && n > 0 {
			n--
		}
		shared = max(shared, n)
	}
	return shared
}

// meta is the chat metadata (meta row '0', hex-encoded JSON).
type meta struct {
	AgentID          string          `json:"agentId"`
	LatestRootBlobID string          `json:"latestRootBlobId"`
	CreatedAt        json.RawMessage `json:"createdAt"`
}

// storeRead is what reading one store gave.
type storeRead struct {
	c   *chat
	st  transcript.Stats
	err error
}

// readStores reads the stores two at a time: most of a store's read is
// SQLite's work, on a connection of its own.
func readStores(paths []string) []storeRead {
	out := make([]storeRead, len(paths))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			for i := next.Add(1) - 1; i < int64(len(paths)); i = next.Add(1) - 1 {
				r := &out[i]
				r.c, r.err = readStore(paths[i], &r.st)
			}
		})
	}
	wg.Wait()
	return out
}

// readStore reads one store.db. A store without usable metadata or root
// blob is counted as malformed and yields nil.
func readStore(path string, st *transcript.Stats) (*chat, error) {
	var c *chat
	ok, err := rosqlite.Read(path, st, func(db *rosqlite.DB) (err error) {
		c, err = readChat(db, path, st)
		return err
	})
	if !ok {
		return nil, err // nothing read is kept
	}
	return c, err
}

func readChat(db *rosqlite.DB, path string, st *transcript.Stats) (*chat, error) {
	var value sql.NullString
	err := db.QueryRow(`SELECT CAST(value AS TEXT) FROM meta WHERE key = '0'`).Scan(&value)
	if errors.Is(err, sql.ErrNoRows) {
		st.Malformed++
		return nil, nil
	}
	if err != nil {
		return nil, lacking(db, err, st)
	}
	var m meta
	raw, herr := hex.DecodeString(strings.TrimSpace(value.String))
	if herr != nil {
		raw = []byte(value.String) // plain JSON, should a build store it so
	}
	if json.Unmarshal(raw, &m) != nil || m.LatestRootBlobID == "" {
		st.Malformed++
		return nil, nil
	}
	dir := filepath.Dir(path)
	c := &chat{file: path, id: m.AgentID, group: filepath.Dir(dir), created: parseCreated(m.CreatedAt)}
	if c.id == "" {
		c.id = filepath.Base(dir)
	}
	if c.created <= 0 {
		c.created = db.ModTime().UnixMilli()
	}
	b, err := readBlobs(db, strings.ToLower(m.LatestRootBlobID))
	if err != nil {
		return nil, lacking(db, err, st)
	}
	ids, workspace, ok := parseRoot(b.root)
	if !b.found || !ok {
		st.Malformed++
		return nil, nil
	}
	c.cwd = workspacePath(workspace)
	c.blobs = ids
	for i, id := range ids {
		if text, ok := b.prompts[id]; ok {
			c.prompts = append(c.prompts, prompt{text: text, n: i})
		} else if b.malformed[id] {
			st.Malformed++
		}
	}
	return c, nil
}

// lacking returns err, a query's error, unless the store lacks one of
// its tables: then it counts the store as malformed and returns nil.
func lacking(db *rosqlite.DB, err error, st *transcript.Stats) error {
	if tables, terr := db.Tables(); terr == nil && (!tables["meta"] || !tables["blobs"]) {
		st.Malformed++
		return nil
	}
	return err
}

// blobs is what a store's blobs hold: the root blob, and by id (in lower
// case) the prompts of the user messages and the messages that do not
// parse.
type blobs struct {
	root      []byte
	found     bool // the root blob is there
	prompts   map[string]string
	malformed map[string]bool
}

// readBlobs reads a store's blobs in one pass. Their ids are hex, in
// either case. Message blobs are JSON objects; the others (the root
// blobs, state) are not.
func readBlobs(db *rosqlite.DB, root string) (blobs, error) {
	b := blobs{prompts: map[string]string{}, malformed: map[string]bool{}}
	rows, err := db.Query(`SELECT id, data FROM blobs`)
	if err != nil {
		return b, err
	}
	defer rows.Close()
	for rows.Next() {
		var id, data sql.RawBytes
		if err := rows.Scan(&id, &data); err != nil {
			return b, err
		}
		lower := strings.ToLower(string(id))
		switch {
		case lower == root:
			b.root, b.found = bytes.Clone(data), true
		case len(data) > 0 && data[0] == '{':
			var msg struct {
				Role    string          `json:"role"`
				Content json.RawMessage `json:"content"`
			}
			if json.Unmarshal(data, &msg) != nil {
				b.malformed[lower] = true
			} else if msg.Role == "user" {
				if text, ok := userText(msg.Content); ok {
					b.prompts[lower] = text
				}
			}
		}
	}
	return b, rows.Err()
}

// parseCreated reads createdAt: unix milliseconds (a number or a numeric
// string; seconds are scaled) or an ISO 8601 time.
func parseCreated(raw json.RawMessage) int64 {
	var v any
	if len(raw) == 0 || json.Unmarshal(raw, &v) != nil {
		return 0
	}
	var f float64
	switch x := v.(type) {
	case float64:
		f = x
	case string:
		if n, err := strconv.ParseFloat(strings.TrimSpace(x), 64); err == nil {
			f = n
		} else if t, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(x)); err == nil {
			return t.UnixMilli()
		}
	}
	if f <= 0 || f > 1e15 {
		return 0
	}
	if f < 1e11 {
		f *= 1000 // seconds
	}
	return int64(f)
}

// parseRoot reads the root blob's protobuf: field 1 (repeated message blob
// ids, 32 raw bytes or 64 hex characters) and field 9 (the workspace).
func parseRoot(b []byte) (ids []string, workspace string, ok bool) {
	for len(b) > 0 {
		key, n := binary.Uvarint(b)
		if n <= 0 {
			return nil, "", false
		}
		b = b[n:]
		field, wire := key>>3, key&7
		switch wire {
		case 0:
			_, n := binary.Uvarint(b)
			if n <= 0 {
				return nil, "", false
			}
			b = b[n:]
		case 1:
			if len(b) < 8 {
				return nil, "", false
			}
			b = b[8:]
		case 5:
			if len(b) < 4 {
				return nil, "", false
			}
			b = b[4:]
		case 2:
			l, n := binary.Uvarint(b)
			if n <= 0 || l > uint64(len(b)-n) {
				return nil, "", false
			}
			v := b[n : n+int(l)]
			b = b[n+int(l):]
			switch field {
			case 1: // 32 bytes, or their 64 hex digits
				if d, err := hex.DecodeString(string(v)); err == nil && len(v) == 64 {
					v = d
				}
				if len(v) == 32 {
					ids = append(ids, hex.EncodeToString(v))
				}
			case 9:
				workspace = string(v)
			}
		default:
			return nil, "", false
		}
	}
	return ids, workspace, true
}

// workspacePath turns the root blob's workspace (a path or a file:// URI)
// into a path.
func workspacePath(w string) string {
	if strings.HasPrefix(w, "file://") {
		if u, err := url.Parse(w); err == nil && u.Path != "" {
			return u.Path
		}
	}
	return w
}

// userText returns the prompt a user message's content holds, if any.
func userText(content json.RawMessage) (string, bool) {
	var text string
	if json.Unmarshal(content, &text) != nil {
		var parts []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		if json.Unmarshal(content, &parts) != nil {
			return "", false
		}
		var texts []string
		for _, p := range parts {
			if p.Type == "text" {
				texts = append(texts, p.Text)
			}
		}
		text = strings.Join(texts, "\n")
	}
	if i := strings.Index(text, "<user_query>"); i >= 0 {
		inner := text[i+len("<user_query>"):]
		if j := strings.Index(inner, "</user_query>"); j >= 0 {
			inner = inner[:j]
		}
		inner = strings.TrimPrefix(inner, "\r")
		inner = strings.TrimPrefix(inner, "\n")
		inner = strings.TrimSuffix(inner, "\n")
		inner = strings.TrimSuffix(inner, "\r")
		return inner, true
	}
	if strings.HasPrefix(strings.TrimLeft(text, " \t\r\n"), "<") {
		return "", false
	}
	return text, true
}

// listStores finds the chat stores, root/chats/*/*/store.db.
func listStores(root string) ([]string, error) {
	chats := filepath.Join(root, "chats")
	workspaces, err := readDir(chats)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, w := range workspaces {
		if !w.IsDir() {
			continue
		}
		ids, err := readDir(filepath.Join(chats, w.Name()))
		if err != nil {
			return nil, err
		}
		for _, id := range ids {
			if !id.IsDir() {
				continue
			}
			path := filepath.Join(chats, w.Name(), id.Name(), "store.db")
			if _, err := os.Lstat(path); err == nil {
				out = append(out, path)
			} else if !errors.Is(err, fs.ErrNotExist) {
				return nil, &transcript.ReadError{Path: path, Err: err}
			}
		}
	}
	return out, nil
}

// mirror is one mirror transcript.
type mirror struct {
	path, id, project string
	mtime             time.Time
}

// listMirrors finds the mirror transcripts under root/projects.
func listMirrors(root string, st *transcript.Stats) ([]mirror, error) {
	projects, err := readDir(filepath.Join(root, "projects"))
	if err != nil {
		return nil, err
	}
	var out []mirror
	for _, p := range projects {
		if !p.IsDir() {
			continue
		}
		dir := filepath.Join(root, "projects", p.Name(), "agent-transcripts")
		ents, err := readDir(dir)
		if err != nil {
			return nil, err
		}
		for _, e := range ents {
			name := e.Name()
			var path, id string
			switch {
			case e.IsDir():
				id = name
				path = filepath.Join(dir, name, name+".jsonl")
				if _, err := os.Stat(path); err != nil {
					continue
				}
				subs, _ := os.ReadDir(filepath.Join(dir, name, "subagents"))
				st.Subagent += len(subs)
			case strings.HasSuffix(name, ".jsonl"):
				id, path = strings.TrimSuffix(name, ".jsonl"), filepath.Join(dir, name)
			default:
				st.Skipped++ // .txt transcripts of older builds
				continue
			}
			fi, err := os.Stat(path)
			if err != nil {
				return nil, &transcript.ReadError{Path: path, Err: err}
			}
			out = append(out, mirror{path: path, id: id, project: p.Name(), mtime: fi.ModTime()})
		}
	}
	return out, nil
}

func readDir(dir string) ([]os.DirEntry, error) {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrInvalid) || errors.Is(err, syscall.ENOTDIR) {
		return nil, nil
	}
	if err != nil {
		return nil, &transcript.ReadError{Path: dir, Err: err}
	}
	return ents, nil
}

func readMirror(m mirror, st *transcript.Stats) (*chat, error) {
	f, err := os.Open(m.path)
	if err != nil {
		return nil, &transcript.ReadError{Path: m.path, Err: err}
	}
	defer f.Close()
	c := &chat{file: m.path, id: m.id, group: "mirror:" + m.project, created: m.mtime.UnixMilli(), cwd: decodeProject(m.project, "/")}
	if err := mirrorPrompts(f, c, st); err != nil {
		return nil, err
	}
	return c, nil
}

// mirrorPrompts reads a mirror transcript's user lines into c, counting
// in st.
func mirrorPrompts(r io.Reader, c *chat, st *transcript.Stats) error {
	err := filescan.Lines(r, c.file, st, func(i int, line []byte) error {
		var l struct {
			Role    string `json:"role"`
			Message *struct {
				Content json.RawMessage `json:"content"`
			} `json:"message"`
			Content json.RawMessage `json:"content"`
		}
		if json.Unmarshal(line, &l) != nil {
			st.Malformed++
			return nil
		}
		if l.Role != "user" {
			return nil
		}
		content := l.Content
		if l.Message != nil {
			content = l.Message.Content
		}
		if text, ok := userText(content); ok {
			c.prompts = append(c.prompts, prompt{text: text, n: i})
		}
		return nil
	})
	if err == nil {
		st.Files++
	}
	return err
}

// encodeName is the mirror's folder-name encoding of one path element:
// every character but an ASCII letter or digit becomes "-".
func encodeName(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r < 128 && ('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9') {
			b.WriteRune(r)
		} else {
			b.WriteByte('-')
		}
	}
	return b.String()
}

// maxDecodeReads bounds the folders decodeProject lists.
const maxDecodeReads = 2000

// decodeProject finds the folder under base whose path, encoded the
// mirror's way (without the leading "/"), is enc: a depth-first search of
// the file system, since the encoding is lossy. It returns "" when no
// existing folder matches.
func decodeProject(enc, base string) string {
	reads := 0
	var walk func(dir, rest string) string
	walk = func(dir, rest string) string {
		if reads >= maxDecodeReads {
			return ""
		}
		reads++
		ents, err := os.ReadDir(dir)
		if err != nil {
			return ""
		}
		for _, e := range ents {
			if !e.IsDir() && e.Type()&fs.ModeSymlink == 0 {
				continue
			}
			name := encodeName(e.Name())
			next := filepath.Join(dir, e.Name())
			if name == rest {
				if fi, err := os.Stat(next); err == nil && fi.IsDir() {
					return next
				}
			}
			if strings.HasPrefix(rest, name+"-") && name != "" {
				if found := walk(next, rest[len(name)+1:]); found != "" {
					return found
				}
			}
		}
		return ""
	}
	if enc == "" {
		return ""
	}
	return walk(base, enc)
}
