// Package claude reads Claude Code's session transcripts
// (~/.claude/projects/<folder>/<session>.jsonl, flat or nested) and yields
// the prompts a person typed in them.
//
// A transcript is JSONL, one record per line. A typed prompt is a record
// with type "user" that is none of these: a sidechain (isSidechain) or
// subagent (agentId) record; injected context (isMeta); a compaction summary
// (isCompactSummary, isVisibleInTranscriptOnly, or the text Claude Code
// starts such a summary with); a tool result (toolUseResult, or a
// tool_result content block); a record whose origin is present and not
// {"kind":"human"}; a record with promptSource "system"; text made only of
// wrappers (<system-reminder>, <local-command-stdout>, <bash-input>,
// <task-notification>, …) or an interrupt marker ("[Request interrupted by
// user…]"); a text that starts with a <task-notification> element (a
// background task's completion, whatever follows it). A prompt typed while
// the agent was busy and handed over mid-turn is an attachment record of
// type queued_command (commandMode "prompt"): it counts too. The text is the string content, or the text blocks joined
// by "\n" (images are dropped, "[Image #N]" placeholders stay); leading IDE
// tags (<ide_opened_file>, <ide_selection>) are removed, and so are the
// <pasted_content id=…>…</pasted_content id=…> wrappers around a paste
// (keeping the pasted text). A slash command (<command-name>/x</command-name>
// <command-args>a</command-args>) becomes "/x a", which is command-like and,
// like every prompt that is not identity.Capturable, is not emitted.
//
// Records that repeat a prompt are never read as one: queue-operation,
// last-prompt and api-request-blob records have other types. The cwd and
// session of a prompt come from its own record (the folder name is lossy);
// a record without a cwd takes the one the file's other records carry (the
// latest before it, else the first after it). Its time is the record's ISO
// timestamp.
//
// --resume and --fork-session may copy earlier records, with the same uuid,
// into a new file: prompts are keyed by uuid, so a copy counts once. Scan
// reads files oldest first (by modification time), so the copy that counts
// is usually the original session's.
//
// A line is decoded only when a cheap byte search says it may hold a
// prompt (or, until the file's cwd is known, carry one); the rest are only
// split off. So Stats.Malformed counts the lines that are not JSON objects
// at all (garbage, a torn last line) and the candidate lines that do not
// decode, not broken lines of other kinds. Each file is read up to the
// size it had when it was opened.
package claude

import (
	"bytes"
	"cmp"
	"io"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode"

	"hist/lib/identity"
	"hist/lib/jsonscan"
	"hist/lib/transcript"
	"hist/lib/transcript/internal/filescan"
)

// DefaultRoot is where Claude Code keeps its transcripts:
// $CLAUDE_CONFIG_DIR/projects, else home/.claude/projects.
func DefaultRoot(env transcript.Env, home string) string {
	return filepath.Join(Config(env, home), "projects")
}

// Scan reads every *.jsonl transcript under root (recursively; root may
// also be a single file), as transcript.Agent's Scan says. Subagent
// transcripts (under "subagents" folders, or named agent-*.jsonl) are
// passed over and counted in Stats.Subagent.
func Scan(root string, keep transcript.Keep, emit func(transcript.Prompt) error) (transcript.Stats, error) {
	var st transcript.Stats
	files, err := filescan.List(root, keep, &st, func(path string, d fs.DirEntry) bool {
		switch name := d.Name(); {
		case d.IsDir() && name == "subagents":
			st.Subagent += countTranscripts(path)
		case !d.IsDir() && strings.HasPrefix(name, "agent-") && strings.HasSuffix(name, ".jsonl"):
			st.Subagent++
		default:
			return false
		}
		return true
	})
	if err != nil {
		return st, err
	}
	// Oldest first, then by path.
	slices.SortStableFunc(files, func(a, b filescan.File) int {
		return cmp.Or(cmp.Compare(a.MTime, b.MTime), strings.Compare(a.Path, b.Path))
	})
	return st, filescan.ScanPaths(files, scanTranscript, emit, &st)
}

// countTranscripts counts the *.jsonl entries below dir (a subagents
// folder, passed over); errors only make the count smaller.
func countTranscripts(dir string) int {
	n := 0
	filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(d.Name(), ".jsonl") {
			n++
		}
		return nil
	})
	return n
}

// The line filter. A quoted token with its quotes can only be JSON
// structure (inside a string the quotes would be escaped), so a line with
// neither "user" nor "queued_command" is never a prompt and is never
// decoded; nor is a user record carrying a tool result block (as every one
// with a toolUseResult does), as Claude Code writes it. The filter only
// saves work: a line it lets through is decoded and judged in full.
var (
	quotedUser       = []byte(`"user"`)
	quotedQueued     = []byte(`"queued_command"`)
	toolResultMember = []byte(`"type":"tool_result"`)
)

// candidate reports whether line may hold a prompt.
func candidate(line []byte) bool {
	if bytes.Contains(line, quotedQueued) {
		return true
	}
	return bytes.Contains(line, quotedUser) && !bytes.Contains(line, toolResultMember)
}

// cwdKey is in every line whose record carries a cwd.
var cwdKey = []byte(`"cwd"`)

// scanTranscript reads one transcript (a scanFunc). A prompt whose record
// has no cwd of its own takes the file's: the latest cwd a record before
// it carried, or, when none did, the first one a later record carries.
// Only the prompts waiting for that later record are held.
func scanTranscript(lr *filescan.LineReader, name string, add func(transcript.Prompt) error) (st transcript.Stats, err error) {
	defer func() { st.Bytes = lr.Bytes() }()
	var cwd string                  // the file's latest known cwd
	var waiting []transcript.Prompt // prompts read before any cwd, in order
	for {
		line, rerr := lr.Next()
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			return st, &transcript.ReadError{Path: name, Err: rerr}
		}
		shaped, blank := jsonscan.ObjectShaped(line)
		if !shaped {
			if !blank {
				st.Malformed++
			}
			continue
		}
		var p transcript.Prompt
		ok, bad := false, false
		if candidate(line) {
			if p, ok, bad = parseRecord(line); bad {
				st.Malformed++
				continue
			}
		}
		// The cwd this record carries, while the file's is not known.
		c := p.Cwd
		if !ok && cwd == "" && bytes.Contains(line, cwdKey) {
			c = recordCwd(line)
		}
		if c != "" {
			if cwd == "" {
				if err := flush(waiting, c, add); err != nil {
					return st, err
				}
				waiting = nil
			}
			cwd = c
		}
		switch {
		case !ok:
		case cwd == "":
			waiting = append(waiting, p)
		default:
			if p.Cwd == "" {
				p.Cwd = cwd
			}
			if err := add(p); err != nil {
				return st, err
			}
		}
	}
	// No record carried a cwd: the prompts go without one.
	if err := flush(waiting, "", add); err != nil {
		return st, err
	}
	st.Files = 1
	return st, nil
}

// flush hands the prompts that waited for a cwd over, with cwd.
func flush(waiting []transcript.Prompt, cwd string, add func(transcript.Prompt) error) error {
	for _, p := range waiting {
		p.Cwd = cwd
		if err := add(p); err != nil {
			return err
		}
	}
	return nil
}

// recordCwd returns the cwd member of the record line, or "" when it has
// none (or the line does not decode).
func recordCwd(line []byte) string {
	var v []byte
	jsonscan.EachMember(line, func(k, val []byte) {
		if string(k) == "cwd" {
			v = val
		}
	})
	s, _ := jsonscan.OptString(v)
	return s
}

// parseRecord decodes one transcript line. ok is true when it is a typed
// prompt to emit; bad is true when it does not decode (or a field it needs
// has the wrong type).
func parseRecord(line []byte) (p transcript.Prompt, ok, bad bool) {
	var r rawRecord
	// The message's members are read with the line's (its content is
	// most of a prompt's line: read once, not twice).
	if !jsonscan.EachMemberNested(line, "message", r.set, r.setMessage) {
		return p, false, true
	}
	isUser, ok1 := jsonscan.StrIs(r.typ, "user")
	isAttachment, _ := jsonscan.StrIs(r.typ, "attachment")
	isSystem, ok2 := jsonscan.StrIs(r.promptSource, "system")
	human, ok3 := originHuman(r.origin)
	if !ok1 || !ok2 || !ok3 || !jsonscan.StringOrNull(r.uuid) || !jsonscan.StringOrNull(r.timestamp) ||
		!jsonscan.StringOrNull(r.sessionID) || !jsonscan.StringOrNull(r.cwd) ||
		!objectOrNull(r.message) || !objectOrNull(r.attachment) {
		return p, false, true
	}
	var content []byte
	switch {
	case isUser:
		if jsonscan.IsNull(r.message) || isTrue(r.isMeta) || isTrue(r.isCompactSummary) ||
			isTrue(r.isVisibleInTranscriptOnly) || present(r.toolUseResult) || isSystem {
			return p, false, false
		}
		content = r.content
	case isAttachment:
		if jsonscan.IsNull(r.attachment) {
			return p, false, false
		}
		var aType, mode, aOrigin []byte
		jsonscan.EachMember(r.attachment, func(k, v []byte) {
			switch string(k) {
			case "type":
				aType = v
			case "commandMode":
				mode = v
			case "origin":
				aOrigin = v
			case "prompt":
				content = v
			}
		})
		queued, ok1 := jsonscan.StrIs(aType, "queued_command")
		noMode, ok2 := jsonscan.StrIs(mode, "")
		promptMode, _ := jsonscan.StrIs(mode, "prompt")
		aHuman, ok3 := originHuman(aOrigin)
		if !ok1 || !ok2 || !ok3 {
			return p, false, true
		}
		if !queued || !(noMode || promptMode) || !aHuman {
			return p, false, false
		}
	default:
		return p, false, false
	}
	if isTrue(r.isSidechain) || present(r.agentID) || !human {
		return p, false, false
	}
	parts, toolResult, bad := jsonscan.TextBlocks(content)
	if bad || toolResult || len(parts) == 0 {
		return p, false, bad
	}
	text, ok := promptText(parts)
	if !ok || !identity.Capturable(text) {
		return p, false, false
	}
	// Decoded only now: most candidate lines are not prompts.
	uuid, _ := jsonscan.OptString(r.uuid)
	ts, _ := jsonscan.OptString(r.timestamp)
	session, _ := jsonscan.OptString(r.sessionID)
	cwd, _ := jsonscan.OptString(r.cwd)
	tms, tsOK := parseISO(ts)
	p = transcript.Prompt{
		Text:    text,
		TS:      tms,
		Cwd:     cwd,
		Session: session,
		Src:     transcript.SrcClaude,
		Key:     uuid,
		Approx:  !tsOK,
	}
	return p, true, false
}

// rawRecord holds the raw values of the members parseRecord looks at.
type rawRecord struct {
	typ, uuid, timestamp, sessionID, cwd, promptSource, origin       []byte
	isSidechain, isMeta, isCompactSummary, isVisibleInTranscriptOnly []byte
	agentID, toolUseResult, message, attachment                      []byte
	// The content of the last message member that is an object, and of
	// the one being read.
	content, nextContent []byte
}

// setMessage takes a member of a message object, before set takes the
// message.
func (r *rawRecord) setMessage(k, v []byte) {
	if string(k) == "content" {
		r.nextContent = v
	}
}

func (r *rawRecord) set(k, v []byte) {
	switch string(k) {
	case "type":
		r.typ = v
	case "uuid":
		r.uuid = v
	case "timestamp":
		r.timestamp = v
	case "sessionId":
		r.sessionID = v
	case "cwd":
		r.cwd = v
	case "promptSource":
		r.promptSource = v
	case "origin":
		r.origin = v
	case "isSidechain":
		r.isSidechain = v
	case "isMeta":
		r.isMeta = v
	case "isCompactSummary":
		r.isCompactSummary = v
	case "isVisibleInTranscriptOnly":
		r.isVisibleInTranscriptOnly = v
	case "agentId":
		r.agentID = v
	case "toolUseResult":
		r.toolUseResult = v
	case "message":
		r.message = v
		r.content, r.nextContent = r.nextContent, nil
	case "attachment":
		r.attachment = v
	}
}

func isTrue(v []byte) bool { return string(v) == "true" }

// present is true for any value but null and "".
func present(v []byte) bool { return !jsonscan.IsNull(v) && string(v) != `""` }

func objectOrNull(v []byte) bool { return jsonscan.IsNull(v) || v[0] == '{' }

// originHuman reads an optional origin member: human is false when it is
// present and its kind is not "human"; ok is false for a malformed one.
func originHuman(v []byte) (human, ok bool) {
	if jsonscan.IsNull(v) {
		return true, true
	}
	if v[0] != '{' {
		return false, false
	}
	var kind []byte
	jsonscan.EachMember(v, func(k, v []byte) {
		if string(k) == "kind" {
			kind = v
		}
	})
	return jsonscan.StrIs(kind, "human")
}

// compactPrefix starts the summary Claude Code writes when it compacts a
// conversation (older builds did not flag it).
const compactPrefix = "This session is being continued from a previous conversation that ran out of context"

// promptText turns the text parts of a user record into the prompt, or
// reports that they are no prompt at all.
func promptText(parts []string) (string, bool) {
	kept := parts[:0:0]
	for _, s := range parts {
		s = stripIDE(s)
		if identity.IsBlank(s) || wrapperOnly(s) || isInterrupt(s) || isNotification(s) {
			continue
		}
		kept = append(kept, s)
	}
	if len(kept) == 0 {
		return "", false
	}
	text := strings.Join(kept, "\n")
	if cmd, ok := commandForm(text); ok {
		return cmd, true
	}
	if strings.HasPrefix(strings.TrimLeftFunc(text, unicode.IsSpace), compactPrefix) {
		return "", false
	}
	return unwrapPastes(text), true
}

// wrapperTags name the elements Claude Code wraps injected or non-prompt
// text in; a text made only of these is not a prompt.
var wrapperTags = []string{
	"local-command-stdout", "local-command-stderr", "local-command-caveat",
	"bash-input", "bash-stdout", "bash-stderr",
	"task-notification", "system-reminder", "teammate-message", "user-memory-input",
	"ide_opened_file", "ide_selection",
}

// A background task's completion is a user record whose text starts with
// a <task-notification> element, often followed by a line telling the
// model where the task's output is; Claude Code 2.1.39 writes no origin
// for it.
var notificationTag = []string{"task-notification"}

// isNotification reports whether s starts with a task notification.
func isNotification(s string) bool {
	_, ok := cutElement(strings.TrimLeftFunc(s, unicode.IsSpace), notificationTag)
	return ok
}

// ideTags name the elements an IDE prepends to a typed prompt.
var ideTags = []string{"ide_opened_file", "ide_selection"}

// cutElement removes the element s starts with (<tag …>…</tag>) when tag is
// one of tags, and returns the rest.
func cutElement(s string, tags []string) (rest string, ok bool) {
	if !strings.HasPrefix(s, "<") {
		return s, false
	}
	for _, tag := range tags {
		t, found := strings.CutPrefix(s[1:], tag)
		if !found || t == "" || (t[0] != '>' && t[0] != ' ') {
			continue
		}
		end := strings.Index(t, "</"+tag+">")
		if end < 0 {
			return s, false
		}
		return t[end+len(tag)+3:], true
	}
	return s, false
}

// wrapperOnly reports whether s is one or more wrapper elements and white
// space, nothing else.
func wrapperOnly(s string) bool {
	n := 0
	for {
		s = strings.TrimLeftFunc(s, unicode.IsSpace)
		if s == "" {
			return n > 0
		}
		var ok bool
		if s, ok = cutElement(s, wrapperTags); !ok {
			return false
		}
		n++
	}
}

// stripIDE removes the IDE elements s starts with; s is returned unchanged
// when there are none.
func stripIDE(s string) string {
	t, cut := s, false
	for {
		rest, ok := cutElement(strings.TrimLeftFunc(t, unicode.IsSpace), ideTags)
		if !ok {
			break
		}
		t, cut = rest, true
	}
	if !cut {
		return s
	}
	return strings.TrimLeftFunc(t, unicode.IsSpace)
}

// isInterrupt reports whether s is only an interrupt marker, such as
// "[Request interrupted by user]" or "[Request interrupted by user for tool use]".
func isInterrupt(s string) bool {
	t := strings.TrimSpace(s)
	return strings.HasPrefix(t, "[Request interrupted by user") && strings.HasSuffix(t, "]") &&
		!strings.ContainsRune(t, '\n')
}

// commandForm turns a slash-command record
// (<command-message>x</command-message><command-name>/x</command-name><command-args>a</command-args>)
// into what was typed, "/x a". ok is false when s is not such a record.
func commandForm(s string) (string, bool) {
	t := strings.TrimLeftFunc(s, unicode.IsSpace)
	if !strings.HasPrefix(t, "<command-message>") && !strings.HasPrefix(t, "<command-name>") {
		return "", false
	}
	name := strings.TrimSpace(between(t, "<command-name>", "</command-name>"))
	if name == "" {
		return "", true
	}
	cmd := "/" + strings.TrimPrefix(name, "/")
	if args := strings.TrimSpace(between(t, "<command-args>", "</command-args>")); args != "" {
		cmd += " " + args
	}
	return cmd, true
}

func between(s, open, close string) string {
	_, rest, _ := strings.Cut(s, open) // "" when open is not found
	in, _, ok := strings.Cut(rest, close)
	if !ok {
		return ""
	}
	return in
}

const (
	pasteOpen    = `<pasted_content id="`
	maxPasteTags = 64
)

// unwrapPastes removes the <pasted_content id="N">\n…</pasted_content id="N">
// wrappers the TUI puts around a paste, keeping the pasted text, and then
// the newlines it added around them at the ends. Unpaired tags stay.
func unwrapPastes(s string) string {
	if !strings.Contains(s, pasteOpen) {
		return s
	}
	var b strings.Builder
	rest, changed := s, false
	// Each tag costs a search to the end of the text: a text of many
	// unpaired tags would take quadratic time, so only so many are tried.
	for tries := 0; tries < maxPasteTags; tries++ {
		i := strings.Index(rest, pasteOpen)
		if i < 0 {
			break
		}
		after := rest[i+len(pasteOpen):]
		q := strings.Index(after, `">`)
		if q < 0 {
			break
		}
		if strings.ContainsAny(after[:q], "\"<>\n") {
			b.WriteString(rest[:i+len(pasteOpen)])
			rest = after
			continue
		}
		closeTag := `</pasted_content id="` + after[:q] + `">`
		body := after[q+2:]
		j := strings.Index(body, closeTag)
		if j < 0 {
			b.WriteString(rest[:i+len(pasteOpen)])
			rest = after
			continue
		}
		b.WriteString(rest[:i])
		b.WriteString(strings.TrimPrefix(body[:j], "\n"))
		rest = body[j+len(closeTag):]
		changed = true
	}
	if !changed {
		return s
	}
	b.WriteString(rest)
	return strings.Trim(b.String(), "\n")
}

// parseISO reads an ISO 8601 time as epoch milliseconds.
func parseISO(s string) (int64, bool) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return 0, false
	}
	ms := t.UnixMilli()
	return ms, ms > 0
}
