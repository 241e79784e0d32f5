package codex

import (
	"encoding/hex"
	"strconv"
	"strings"
)

// A plain rollout that only grew is read from where the last read stopped
// (transcript.Cursor) when what the parser knew there fits in a small
// context and reading on from it finds exactly what a whole read finds
// after that point. That holds once the rollout's session_meta is read
// (not a subagent's, not a legacy fork, whose prompts are compared with
// its parent's from the start) and a prompt event is seen (the rollout's
// response_item prompts are then passed over for good); the oldest
// format, which has neither, and a .zst rollout are read whole.

// resumeVersion starts the context: a context that starts otherwise (or
// is empty) is not understood, and the rollout is read whole.
const resumeVersion = "1"

// resumeContext returns the context to save with the cursor the parse
// stopped at (before a last line that was not complete), or ok false when
// the rollout is to be read whole next time. It is, separated by spaces:
// the version, the latest time seen (that of a prompt with none), the
// latest prompt's kind (0: none), whether its other copy was seen (p) or
// not (u), the pairSum of its text while not ("-" then), the session id's
// length (0: the one the file name ends with), and the session id and then
// the cwd a prompt found next would get. It has no quote or backslash unless the cwd does: the import state
// keeps it quoted, and reads it back fastest then.
func (p *parser) resumeContext() (ctx string, ok bool) {
	q := p
	if p.torn != nil {
		q = p.torn
	}
	if !q.metaSeen || q.subagent || q.legacyFork || q.oldest || !q.sawEvent || q.session == "" {
		return "", false
	}
	cwd := q.cwd
	if cwd == "" {
		cwd = q.metaCwd
	}
	paired, sum := "u", "-"
	if q.prevPaired {
		paired = "p"
	} else if q.prevKind != 0 {
		ps := q.prevSum
		if ps == nil {
			s := pairSum(q.prevText)
			ps = &s
		}
		sum = hex.EncodeToString(ps[:])
	}
	session := q.session
	if session == sessionFromName(q.name) {
		session = ""
	}
	return strings.Join([]string{resumeVersion, strconv.FormatInt(q.lastTS, 10), strconv.Itoa(q.prevKind), paired, sum,
		strconv.Itoa(len(session)), session + " " + cwd}, " "), true
}

// resume sets p's state from a context resumeContext made; false (p
// untouched) for one it does not understand.
func (p *parser) resume(ctx string) bool {
	var f [6]string
	rest := ctx
	for i := range f {
		var ok bool
		if f[i], rest, ok = strings.Cut(rest, " "); !ok {
			return false
		}
	}
	lastTS, err1 := strconv.ParseInt(f[1], 10, 64)
	kind, err2 := strconv.Atoi(f[2])
	n, err3 := strconv.Atoi(f[5])
	if f[0] != resumeVersion || err1 != nil || err2 != nil || err3 != nil || n < 0 || n >= len(rest) || rest[n] != ' ' {
		return false
	}
	session := rest[:n]
	if n == 0 {
		if session = sessionFromName(p.name); session == "" {
			return false
		}
	}
	var sum [16]byte
	switch {
	case kind != 0 && kind != kindEvent && kind != kindItem:
		return false
	case f[3] != "p" && f[3] != "u":
		return false
	case f[3] == "u" && kind != 0:
		if len(f[4]) != 2*len(sum) {
			return false
		}
		if _, err := hex.Decode(sum[:], []byte(f[4])); err != nil {
			return false
		}
	}
	p.seenLine, p.metaSeen, p.sawEvent = true, true, true
	p.session, p.cwd, p.lastTS = session, rest[n+1:], lastTS
	p.prevKind, p.prevText, p.prevSum, p.prevPaired = kind, "", &sum, f[3] == "p"
	return true
}
