package codex

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"strings"
	"time"

	"hist/lib/jsonscan"
	"hist/lib/transcript"
	"hist/lib/transcript/internal/filescan"
)

// bufSize is the line reader's buffer: the beginning of a long line from
// which the reader decides whether to read it whole.
const bufSize = 256 << 10

// Prompt event kinds: the two places a build stores a typed prompt.
const (
	kindEvent = iota + 1 // event_msg user_message (before 0.171)
	kindItem             // event_msg item_completed UserMessage (0.171)
)

// textSum identifies a prompt's text: its SHA-256.
type textSum = [sha256.Size]byte

// cand is one prompt as stored in a rollout, before the capturable filter.
type cand struct {
	p   transcript.Prompt
	sum textSum // of the text
}

// parser reads one rollout. It hands every prompt it finds, in file order,
// to out; a prompt stored twice in one turn (user_message and the
// UserMessage item of builds that write both) is handed over once.
type parser struct {
	name     string
	out      func(cand) error
	session  string
	metaSeen bool
	// A legacy fork copies its parent's items into its own file.
	forkedFrom string
	legacyFork bool
	metaCwd    string
	cwd        string // of the latest turn_context
	// envCwd is the cwd of the latest <environment_context> message, and
	// firstEnvCwd the first one's: the only cwd the oldest rollouts hold.
	envCwd, firstEnvCwd string
	// oldest is true for a rollout of the oldest format: a first line
	// {"id":…,"timestamp":…,"instructions":…} and then bare response
	// items, without timestamps.
	oldest   bool
	seenLine bool // a non-blank line was read
	lastTS   int64
	sawEvent bool // a user_message or UserMessage was seen
	// anyEvent: an event_msg line was seen. A build that writes events
	// writes the typed prompts' too: its rollout never falls back on its
	// response items, even before its first prompt event is written.
	anyEvent bool
	fallback []cand // response_item prompts, used if sawEvent stays false
	pending  []pendingLine

	// The latest prompt found (its kind, 0 for none, and its text), and
	// whether its pair was found.
	prevKind   int
	prevText   string
	prevPaired bool

	malformed int
	lr        *filescan.LineReader
}

// pendingLine is a response_item line kept for the fallback, with the
// parser's state when it was read.
type pendingLine struct {
	line   []byte
	cwd    string
	lastTS int64
	bare   bool // a bare response item (the oldest format)
}

// errStop ends a parse early (a subagent rollout).
var errStop = errors.New("subagent")

// run reads r to the end. It returns errStop when the rollout turned out to
// be a subagent's, an error from out, or a read error.
func (p *parser) run(r io.Reader) error {
	lr := p.lr
	lr.Reset(r)
	defer lr.Reset(nil)
	// A long line is first classified from its beginning: one the reader
	// has no use for is skipped chunk by chunk, so only the lines that are
	// decoded are ever held whole.
	lr.SkipLong(func(prefix []byte) bool {
		act, _ := p.classify(prefix, false)
		return act == actSkip
	})
	for {
		line, err := lr.Next()
		switch err {
		case nil:
		case io.EOF:
			return p.finish()
		default:
			return err
		}
		if err := p.handle(line); err != nil {
			return err
		}
	}
}

type action int

const (
	actSkip   action = iota // nothing the reader uses
	actDecode               // decode the whole line
	actMore                 // undecided from a partial line: read it whole
)

var (
	pfxTimestamp = []byte(`{"timestamp":"`)
	pfxOrdinal   = []byte(`,"ordinal":`)
	pfxType      = []byte(`,"type":"`)
	pfxPayload   = []byte(`,"payload":{"type":"`)
	pfxItem      = []byte(`"item":{"type":"`)
	pfxRole      = []byte(`"role":"`)
)

// envelope reads a line written in the recorder's field order
// ({"timestamp":…,"ordinal":…,"type":…,"payload":{"type":…) and returns the
// line's type and its payload's type (nil when the payload does not start
// with one). ok is false for any other shape.
func envelope(b []byte) (typ, ptype, rest []byte, ok bool) {
	if !bytes.HasPrefix(b, pfxTimestamp) {
		return nil, nil, nil, false
	}
	b = b[len(pfxTimestamp):]
	i := bytes.IndexByte(b, '"')
	if i < 0 || bytes.IndexByte(b[:i], '\\') >= 0 {
		return nil, nil, nil, false
	}
	b = b[i+1:]
	if bytes.HasPrefix(b, pfxOrdinal) {
		b = b[len(pfxOrdinal):]
		j := 0
		for j < len(b) && b[j] >= '0' && b[j] <= '9' {
			j++
		}
		b = b[j:]
	}
	if !bytes.HasPrefix(b, pfxType) {
		return nil, nil, nil, false
	}
	b = b[len(pfxType):]
	typ, b, ok = plainString(b)
	if !ok {
		return nil, nil, nil, false
	}
	if bytes.HasPrefix(b, pfxPayload) {
		if pt, r, ok := plainString(b[len(pfxPayload):]); ok {
			return typ, pt, r, true
		}
	}
	return typ, nil, b, true
}

// plainString reads a JSON string body without escapes up to its closing
// quote.
func plainString(b []byte) (s, rest []byte, ok bool) {
	i := bytes.IndexByte(b, '"')
	if i < 0 || bytes.IndexByte(b[:i], '\\') >= 0 {
		return nil, nil, false
	}
	return b[:i], b[i+1:], true
}

// Line kinds the parser decodes.
const (
	lineOther = iota // not decoded
	lineMeta
	lineTurn
	lineEvent
	lineResp
	lineUnknown // an unexpected shape: decode the envelope first
)

// classify decides from a line, or from the beginning of a long one
// (complete false), whether it must be decoded, and as what.
func (p *parser) classify(b []byte, complete bool) (action, int) {
	undecided := actMore
	if complete {
		undecided = actDecode
	}
	typ, ptype, rest, ok := envelope(b)
	if !ok {
		return undecided, lineUnknown
	}
	switch string(typ) {
	case "session_meta":
		return actDecode, lineMeta
	case "turn_context":
		return actDecode, lineTurn
	case "event_msg":
		p.anyEvent = true
		switch {
		case ptype == nil:
			if complete && !bytes.Contains(b, []byte("user_message")) && !bytes.Contains(b, []byte("UserMessage")) {
				return actSkip, lineOther
			}
			return undecided, lineEvent
		case string(ptype) == "user_message":
			return actDecode, lineEvent
		case string(ptype) == "item_completed":
			return memberIs(rest, pfxItem, "UserMessage", lineEvent, undecided)
		default:
			return actSkip, lineOther
		}
	case "response_item":
		if p.sawEvent {
			return actSkip, lineOther
		}
		switch {
		case ptype == nil:
			if complete && !bytes.Contains(b, []byte(`"user"`)) {
				return actSkip, lineOther
			}
			return undecided, lineResp
		case string(ptype) == "message":
			return memberIs(rest, pfxRole, "user", lineResp, undecided)
		default:
			return actSkip, lineOther
		}
	default:
		return actSkip, lineOther
	}
}

// memberIs decides from the plain string after the first pfx in rest:
// want decodes the line as kind, another value skips it, none leaves it
// undecided.
func memberIs(rest, pfx []byte, want string, kind int, undecided action) (action, int) {
	if i := bytes.Index(rest, pfx); i >= 0 {
		if v, _, ok := plainString(rest[i+len(pfx):]); ok {
			if string(v) == want {
				return actDecode, kind
			}
			return actSkip, lineOther
		}
	}
	return undecided, kind
}

type metaPayload struct {
	ID           string          `json:"id"`
	SessionID    string          `json:"session_id"`
	Timestamp    string          `json:"timestamp"`
	Cwd          string          `json:"cwd"`
	Source       json.RawMessage `json:"source"`
	ForkedFromID string          `json:"forked_from_id"`
	HistoryMode  string          `json:"history_mode"`
}

type turnPayload struct {
	Cwd string `json:"cwd"`
}

type textItem struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type eventPayload struct {
	Type    string          `json:"type"`
	Message json.RawMessage `json:"message"`
	Kind    json.RawMessage `json:"kind"`
	Item    *itemPayload    `json:"item"`
}

type itemPayload struct {
	Type    string     `json:"type"`
	ID      string     `json:"id"`
	Content []textItem `json:"content"`
}

type respPayload struct {
	Type    string     `json:"type"`
	Role    string     `json:"role"`
	ID      string     `json:"id"`
	Content []textItem `json:"content"`
}

// typedLine is a whole line whose type is known, decoded in one pass.
type typedLine[T any] struct {
	Timestamp string `json:"timestamp"`
	Payload   T      `json:"payload"`
}

// handle processes one complete line.
func (p *parser) handle(b []byte) error {
	if len(bytes.TrimSpace(b)) == 0 {
		return nil
	}
	first := !p.seenLine
	p.seenLine = true
	act, kind := p.classify(b, true)
	if act == actSkip {
		return nil
	}
	if kind == lineUnknown {
		if kind = p.unknown(b, first); kind == lineOther {
			return nil
		}
	}
	switch kind {
	case lineMeta:
		if m, ts, ok := metaLine(b); ok {
			return p.meta(&m, ts)
		}
		p.malformed++
	case lineTurn:
		var l typedLine[turnPayload]
		if p.decode(b, &l) {
			if l.Payload.Cwd != "" {
				p.cwd = l.Payload.Cwd
			}
			p.noteTS(l.Timestamp)
		}
	case lineEvent:
		var l typedLine[eventPayload]
		if p.decode(b, &l) {
			return p.event(&l.Payload, l.Timestamp)
		}
	case lineResp:
		// Needed only if the rollout turns out to hold no prompt event:
		// kept raw, and decoded at its end.
		p.pending = append(p.pending, pendingLine{
			line:   append([]byte(nil), b...),
			cwd:    p.cwd,
			lastTS: p.lastTS,
		})
	}
	return nil
}

// unknown decodes the envelope of a line of an unexpected shape and
// returns the kind of line it is (lineOther: nothing more to do with it).
func (p *parser) unknown(b []byte, first bool) int {
	var env struct {
		Type      string          `json:"type"`
		Role      string          `json:"role"`
		ID        string          `json:"id"`
		Timestamp string          `json:"timestamp"`
		Payload   json.RawMessage `json:"payload"`
	}
	if err := json.Unmarshal(b, &env); err != nil {
		p.malformed++
		return lineOther
	}
	switch {
	case first && env.Type == "" && env.Payload == nil && env.ID != "" && env.Timestamp != "":
		// The oldest format's header.
		p.oldest = true
		p.session = env.ID
		p.noteTS(env.Timestamp)
		return lineOther
	case p.oldest && env.Payload == nil:
		if env.Type == "message" && env.Role == "user" && !p.sawEvent {
			p.pending = append(p.pending, pendingLine{line: append([]byte(nil), b...), lastTS: p.lastTS, bare: true})
		}
		return lineOther
	}
	switch env.Type {
	case "session_meta":
		return lineMeta
	case "turn_context":
		return lineTurn
	case "event_msg":
		p.anyEvent = true
		return lineEvent
	case "response_item":
		if !p.sawEvent {
			return lineResp
		}
	}
	return lineOther
}

// decode decodes the whole line b into l, counting a failure as malformed.
func (p *parser) decode(b []byte, l any) bool {
	if err := json.Unmarshal(b, l); err != nil {
		p.malformed++
		return false
	}
	return true
}

func (p *parser) noteTS(raw string) {
	if ts, ok := parseTS(raw); ok {
		p.lastTS = ts
	}
}

func (p *parser) meta(m *metaPayload, rawTS string) error {
	if p.metaSeen {
		// A legacy fork's copy of its parent's header.
		return nil
	}
	p.metaSeen = true
	if isSubagent(m.Source) {
		return errStop
	}
	if m.ID != "" {
		p.session = m.ID
	} else if m.SessionID != "" {
		p.session = m.SessionID
	}
	p.metaCwd = m.Cwd
	p.forkedFrom = m.ForkedFromID
	p.legacyFork = m.ForkedFromID != "" && m.HistoryMode != "paginated"
	p.noteTS(m.Timestamp)
	p.noteTS(rawTS)
	return nil
}

// metaLine reads a session_meta line: its timestamp and the payload's
// members the reader uses. The payload carries the session's whole base
// instructions: its members are located, not decoded, and only these are
// decoded. ok is false when the line is not such an object (or one of
// these members has the wrong type).
func metaLine(b []byte) (m metaPayload, ts string, ok bool) {
	// The line's timestamp, then the payload's members.
	names := [...]string{"timestamp", "id", "session_id", "timestamp", "cwd", "forked_from_id", "history_mode", "source"}
	var raw [len(names)][]byte
	if !jsonscan.EachMemberNested(b, "payload", func(k, v []byte) {
		if string(k) == names[0] {
			raw[0] = v
		}
	}, func(k, v []byte) {
		for i, n := range names[1:] {
			if string(k) == n {
				raw[i+1] = v
			}
		}
	}) {
		return m, "", false
	}
	var strs [len(names) - 1]string
	for i := range strs {
		if strs[i], ok = jsonscan.OptString(raw[i]); !ok {
			return m, "", false
		}
	}
	m = metaPayload{ID: strs[1], SessionID: strs[2], Timestamp: strs[3], Cwd: strs[4],
		ForkedFromID: strs[5], HistoryMode: strs[6], Source: json.RawMessage(raw[7])}
	return m, strs[0], true
}

// isSubagent reports whether a session_meta source names a subagent
// ({"subagent": …}: review, compact, thread_spawn, …).
func isSubagent(src json.RawMessage) bool {
	var m map[string]json.RawMessage
	if json.Unmarshal(src, &m) != nil {
		return false
	}
	_, ok := m["subagent"]
	return ok
}

func (p *parser) event(e *eventPayload, rawTS string) error {
	switch {
	case e.Type == "user_message":
		var text string
		if err := json.Unmarshal(e.Message, &text); err != nil {
			p.malformed++
			return nil
		}
		p.sawEvent = true
		p.fallback, p.pending = nil, nil
		if len(e.Kind) > 0 && string(e.Kind) != "null" {
			var kind string
			if json.Unmarshal(e.Kind, &kind) != nil || kind != "plain" {
				p.noteTS(rawTS)
				return nil // injected context of 0.3x–0.4x builds
			}
		}
		return p.found(text, "", rawTS, kindEvent)
	case e.Type == "item_completed" && e.Item != nil && e.Item.Type == "UserMessage":
		p.sawEvent = true
		p.fallback, p.pending = nil, nil
		return p.found(joinText(e.Item.Content, "text"), e.Item.ID, rawTS, kindItem)
	}
	p.noteTS(rawTS)
	return nil
}

func (p *parser) response(m *respPayload, rawTS string) {
	if m.Type != "message" || m.Role != "user" {
		p.noteTS(rawTS)
		return
	}
	text := joinText(m.Content, "input_text")
	if cwd, ok := environmentCwd(text); ok {
		p.envCwd = cwd
		if p.firstEnvCwd == "" {
			p.firstEnvCwd = cwd
		}
	}
	id := m.ID
	if id == "" && rawTS == "" {
		// An item of the oldest format: its place in the rollout tells
		// two equal prompts apart.
		id = "#" + strconv.Itoa(len(p.fallback))
	}
	if injected(text, true) {
		p.noteTS(rawTS)
		return
	}
	p.fallback = append(p.fallback, p.cand(text, id, rawTS))
}

// joinText joins the text of the content items of the given type.
func joinText(items []textItem, typ string) string {
	var parts []string
	for _, it := range items {
		if strings.EqualFold(it.Type, typ) {
			parts = append(parts, it.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// found takes a prompt from an event.
func (p *parser) found(text, id, rawTS string, kind int) error {
	if injected(text, false) {
		p.noteTS(rawTS)
		return nil
	}
	c := p.cand(text, id, rawTS)
	if p.prevKind != 0 && !p.prevPaired && p.prevKind != kind && text == p.prevText {
		// The same prompt stored as both user_message and UserMessage.
		p.prevPaired = true
		return nil
	}
	p.prevKind, p.prevText, p.prevPaired = kind, text, false
	return p.out(c)
}

// cand builds a prompt. Its time is its line's, or (flagged approximate)
// the last time seen before it in the file.
func (p *parser) cand(text, id, rawTS string) cand {
	ts, ok := parseTS(rawTS)
	if ok {
		p.lastTS = ts
	} else {
		ts = p.lastTS
	}
	sum := sha256.Sum256([]byte(text))
	cwd := p.cwd
	if cwd == "" {
		cwd = p.metaCwd
	}
	if cwd == "" {
		cwd = p.envCwd
	}
	var key string
	if id != "" {
		key = p.session + "/" + id
	} else {
		// The text's hash: the same in every run (the import ledger keeps
		// the key).
		key = p.session + "/" + rawTS + "/" + hex.EncodeToString(sum[:8])
	}
	return cand{
		p: transcript.Prompt{
			Text:    text,
			TS:      ts,
			Cwd:     cwd,
			Session: p.session,
			Src:     transcript.SrcCodex,
			Key:     key,
			Approx:  !ok,
			File:    p.name,
		},
		sum: sum,
	}
}

// finish hands over the response_item prompts of a rollout that stored no
// prompt event at all.
func (p *parser) finish() error {
	if p.sawEvent || p.anyEvent {
		return nil
	}
	for _, pl := range p.pending {
		p.cwd, p.lastTS = pl.cwd, pl.lastTS
		if pl.bare {
			var m respPayload
			if p.decode(pl.line, &m) {
				p.response(&m, "")
			}
			continue
		}
		var l typedLine[respPayload]
		if p.decode(pl.line, &l) {
			p.response(&l.Payload, l.Timestamp)
		}
	}
	p.pending = nil
	for _, c := range p.fallback {
		if c.p.Cwd == "" {
			// Typed before the session's first <environment_context>.
			c.p.Cwd = p.firstEnvCwd
		}
		if err := p.out(c); err != nil {
			return err
		}
	}
	p.fallback = nil
	return nil
}

// Prefixes of injected context that Codex stores as a user message. All
// prompts are checked (a safety net); the response_item fallback also
// drops the model-only context of newer builds.
var (
	injectedAll = []string{
		"<environment_context>",
		"<user_instructions>",
		"# agents.md instructions",
		"<instructions>",
		"<turn_aborted>",
		"<user_shell_command>",
		"<subagent_notification>",
		"<context_update>",
	}
	injectedResp = []string{
		"<tool_context>",
		"<reasoning_context>",
		"<pinned_notes>",
		"<skill",
		"you were originally given instructions from a user over one or more turns",
	}
)

// environmentCwd returns the <cwd> of an <environment_context> message
// (ok is false for any other text, or one without a cwd).
func environmentCwd(text string) (string, bool) {
	t := strings.TrimLeft(text, " \t\r\n")
	if !strings.HasPrefix(t, "<environment_context>") {
		return "", false
	}
	_, rest, ok := strings.Cut(t, "<cwd>")
	if !ok {
		return "", false
	}
	cwd, _, ok := strings.Cut(rest, "</cwd>")
	cwd = strings.TrimSpace(cwd)
	if !ok || cwd == "" {
		return "", false
	}
	return cwd, true
}

func injected(text string, resp bool) bool {
	t := strings.TrimLeft(text, " \t\r\n")
	has := func(list []string) bool {
		for _, pfx := range list {
			if len(t) >= len(pfx) && strings.EqualFold(t[:len(pfx)], pfx) {
				return true
			}
		}
		return false
	}
	return has(injectedAll) || (resp && has(injectedResp))
}

// parseTS parses an ISO 8601 time to unix milliseconds.
func parseTS(s string) (int64, bool) {
	if s == "" {
		return 0, false
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return 0, false
	}
	return t.UnixMilli(), true
}
