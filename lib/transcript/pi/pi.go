// Package pi reads the session transcripts of the pi coding agent and
// yields the prompts a person typed in them.
//
// A session file is JSONL: a header line {"type":"session","id","cwd",
// "timestamp",…} (version 3; version 2 and the unversioned version 1 read
// the same), then one entry per line. A typed prompt is a "message" entry
// whose message has role "user"; its text is the message's string content or
// its text blocks concatenated (images are dropped). Entries of other types
// (custom_message, compaction, branch_summary, …) and other roles (custom,
// hookMessage, bashExecution, branchSummary, compactionSummary, toolResult)
// are never prompts. Every branch of the entry tree counts, not only the
// active path. A skill expansion (<skill name=… location=…>…</skill>) is
// turned back into what was typed, "/skill:name args", which is
// command-like and so, like every prompt that is not identity.Capturable, is
// not emitted.
//
// The project of a prompt is the header's cwd (never the folder name), its
// session the header's id, its time the message's timestamp (ms), else the
// entry's ISO timestamp, else the header's (then Approx is set).
//
// /fork, /clone and --fork copy entries verbatim (same ids and timestamps)
// into a new file. Prompts are keyed by their timestamp and a hash of their
// text, so a copy counts once; Scan reads files in the order of their names
// (which start with the session's creation time), so the copy that counts is
// the earliest session's.
//
// A line is decoded only when a cheap byte search says it may hold a
// prompt; the rest are only split off. So Stats.Malformed counts the lines
// that are not JSON objects at all (garbage, a torn last line) and the
// candidate lines that do not decode, not broken lines of other kinds.
// Each file is read up to the size it had when it was opened.
package pi

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"hist/lib/envdir"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"hist/lib/identity"
	"hist/lib/jsonscan"
	"hist/lib/transcript"
	"hist/lib/transcript/internal/filescan"
)

// DefaultRoot is where pi keeps its sessions: $PI_CODING_AGENT_SESSION_DIR,
// else $PI_CODING_AGENT_DIR/sessions, else home/.pi/agent/sessions (a
// leading "~" in the variables is expanded to home).
func DefaultRoot(env transcript.Env, home string) string {
	if d := envdir.Get(env, "PI_CODING_AGENT_SESSION_DIR", home); d != "" {
		return d
	}
	return filepath.Join(Config(env, home), "sessions")
}

// Scan reads every *.jsonl session under root (recursively; root may also
// be a single file), as transcript.Agent's Scan says. Files whose first
// line is valid JSON but not a session header are passed over and counted
// in Stats.Skipped.
func Scan(root string, keep transcript.Keep, emit func(transcript.Prompt) error) (transcript.Stats, error) {
	var st transcript.Stats
	files, err := filescan.List(root, keep, &st, nil)
	if err != nil {
		return st, err
	}
	// By name (which starts with the session's creation time), then path.
	byName := make([][2]string, len(files))
	for i, f := range files {
		byName[i] = [2]string{filepath.Base(f.Path), f.Path}
	}
	slices.SortFunc(byName, func(a, b [2]string) int {
		return cmp.Or(strings.Compare(a[0], b[0]), strings.Compare(a[1], b[1]))
	})
	for i, n := range byName {
		files[i] = filescan.File{Path: n[1]}
	}
	return st, filescan.ScanPaths(files, scanSession, emit, &st)
}

// userMarker is in every line that can hold a user message: a quoted
// "user" can only be JSON structure (inside a string the quotes would be
// escaped), so other lines are never decoded.
var userMarker = []byte(`"user"`)

// scanSession reads one session (a scanFunc).
func scanSession(lr *filescan.LineReader, name string, add func(transcript.Prompt) error) (st transcript.Stats, err error) {
	defer func() { st.Bytes = lr.Bytes() }()
	var h header
	first := true
	for {
		line, rerr := lr.Next()
		if rerr == io.EOF {
			st.Files = 1
			return st, nil
		}
		if rerr != nil {
			return st, &transcript.ReadError{Path: name, Err: rerr}
		}
		shaped, blank := jsonscan.ObjectShaped(line)
		isFirst := first && !blank
		first = first && blank
		switch {
		case blank:
		case !shaped:
			st.Malformed++
		case isFirst:
			isSession, ok := parseHeader(line, &h)
			if ok && !isSession {
				st.Skipped++
				return st, nil
			}
			if !ok {
				st.Malformed++
			}
		case bytes.Contains(line, userMarker):
			p, ok, bad := parseEntry(line, &h)
			if bad {
				st.Malformed++
			}
			if ok {
				if err := add(p); err != nil {
					return st, err
				}
			}
		}
	}
}

// header is what a session's first line says about every prompt in it.
type header struct {
	ID  string
	Cwd string
	TS  int64 // ms, 0 when unknown
}

// parseHeader decodes a first line. ok is false for a line that does not
// decode; isSession is false for a valid line that is not a session header.
func parseHeader(line []byte, h *header) (isSession, ok bool) {
	var typ, id, cwd, ts []byte
	if !jsonscan.EachMember(line, func(k, v []byte) {
		switch string(k) {
		case "type":
			typ = v
		case "id":
			id = v
		case "cwd":
			cwd = v
		case "timestamp":
			ts = v
		}
	}) {
		return false, false
	}
	t, ok1 := jsonscan.OptString(typ)
	idS, ok2 := jsonscan.OptString(id)
	cwdS, ok3 := jsonscan.OptString(cwd)
	if !ok1 || !ok2 || !ok3 {
		return false, false
	}
	if t != "session" {
		return false, true
	}
	h.ID, h.Cwd = idS, cwdS
	h.TS, _ = parseTime(ts)
	return true, true
}

// parseEntry decodes one entry line of a session with header h. ok is true
// when the line is a typed prompt to emit; bad is true when it does not
// decode (or a field it needs has the wrong type).
func parseEntry(line []byte, h *header) (p transcript.Prompt, ok, bad bool) {
	// The message's members are read with the line (the last "message"
	// member wins, with its own members).
	var typ, id, ts, msg []byte
	var role, content, msgTS []byte
	var mRole, mContent, mTS []byte // of the "message" member being read
	if !jsonscan.EachMemberNested(line, "message", func(k, v []byte) {
		switch string(k) {
		case "type":
			typ = v
		case "id":
			id = v
		case "timestamp":
			ts = v
		case "message":
			msg = v
			role, content, msgTS = mRole, mContent, mTS
			mRole, mContent, mTS = nil, nil, nil
		}
	}, func(k, v []byte) {
		switch string(k) {
		case "role":
			mRole = v
		case "content":
			mContent = v
		case "timestamp":
			mTS = v
		}
	}) {
		return p, false, true
	}
	isMessage, ok1 := jsonscan.StrIs(typ, "message")
	if !ok1 || !jsonscan.StringOrNull(id) || !(jsonscan.IsNull(msg) || msg[0] == '{') {
		return p, false, true
	}
	if !isMessage || jsonscan.IsNull(msg) {
		return p, false, false
	}
	isUser, ok := jsonscan.StrIs(role, "user")
	if !ok {
		return p, false, true
	}
	if !isUser {
		return p, false, false
	}
	texts, _, bad := jsonscan.TextBlocks(content)
	if bad || texts == nil {
		return p, false, bad
	}
	text := strings.Join(texts, "")
	entryID, _ := jsonscan.OptString(id)
	p, ok = userPrompt(text, entryID, msgTS, ts, h)
	return p, ok, false
}

// userPrompt makes the prompt of a user message with this text, entry id
// and timestamps (raw JSON) in a session with header h. ok is false when
// the text is not capturable.
func userPrompt(text, entryID string, msgTS, entryTS []byte, h *header) (p transcript.Prompt, ok bool) {
	if name, args, isSkill := parseSkill(text); isSkill {
		text = "/skill:" + name
		if args != "" {
			text += " " + args
		}
	}
	if !identity.Capturable(text) {
		return p, false
	}
	tms, tsOK := parseTime(msgTS)
	if !tsOK {
		tms, tsOK = parseTime(entryTS)
	}
	approx := !tsOK
	if approx {
		tms = h.TS
	}
	return transcript.Prompt{
		Text:    text,
		TS:      tms,
		Cwd:     h.Cwd,
		Session: h.ID,
		Src:     transcript.SrcPi,
		Key:     promptKey(tms, approx, entryID, text),
		Approx:  approx,
	}, true
}

// parseSkill recognises pi's expansion of "/skill:name args", as its
// parseSkillBlock does:
// ^<skill name="N" location="L">\n(body)\n</skill>(\n\n(args))?$
// with the shortest body. args comes back trimmed.
func parseSkill(text string) (name, args string, ok bool) {
	const open, loc, closeTag = `<skill name="`, `" location="`, "\n</skill>"
	rest, found := strings.CutPrefix(text, open)
	if !found {
		return "", "", false
	}
	i := strings.IndexByte(rest, '"')
	if i <= 0 {
		return "", "", false
	}
	name, rest = rest[:i], rest[i:]
	if rest, found = strings.CutPrefix(rest, loc); !found {
		return "", "", false
	}
	if i = strings.IndexByte(rest, '"'); i <= 0 {
		return "", "", false
	}
	body, found := strings.CutPrefix(rest[i:], "\">\n")
	if !found {
		return "", "", false
	}
	for off := 0; off <= len(body); {
		j := strings.Index(body[off:], closeTag)
		if j < 0 {
			return "", "", false
		}
		tail := body[off+j+len(closeTag):]
		if tail == "" {
			return name, "", true
		}
		if len(tail) > 2 && strings.HasPrefix(tail, "\n\n") {
			return name, strings.TrimSpace(tail[2:]), true
		}
		off += j + 1
	}
	return "", "", false
}

// parseTime reads a timestamp given as epoch milliseconds (a number, or a
// string of digits) or as an ISO 8601 string. ok is false for anything
// else, and for times at or before the epoch.
func parseTime(raw []byte) (ms int64, ok bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return 0, false
	}
	if raw[0] == '"' {
		s, ok := jsonscan.StringValue(raw)
		if !ok {
			return 0, false
		}
		if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
			ms = t.UnixMilli()
			return ms, ms > 0
		}
		raw = []byte(s)
	}
	if n, err := strconv.ParseInt(string(raw), 10, 64); err == nil {
		return n, n > 0
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	if err != nil || math.IsNaN(f) || f <= 0 || f >= math.MaxInt64 {
		return 0, false
	}
	return int64(f), true
}

// promptKey identifies a prompt event, the same in every scan (the import
// ledger keeps it): its own timestamp and the length and a hash of its
// text (what a fork copy shares with its original; two different prompts
// would need the same millisecond, length and 64-bit SHA-256 prefix to
// collide). Without a timestamp of its own, the entry id stands in; with
// neither there is no key.
func promptKey(ts int64, approx bool, id, text string) string {
	var b []byte
	switch {
	case !approx:
		b = strconv.AppendInt(make([]byte, 0, 48), ts, 10)
	case id != "":
		b = append(append(make([]byte, 0, 48), "id:"...), id...)
	default:
		return ""
	}
	b = append(b, ':')
	b = strconv.AppendInt(b, int64(len(text)), 10)
	b = append(b, ':')
	// The text is hashed in place: a []byte copy of it would be the
	// largest allocation of a scan (sha256 only reads it).
	sum := sha256.Sum256(unsafe.Slice(unsafe.StringData(text), len(text)))
	return string(hex.AppendEncode(b, sum[:8]))
}
