package codex

import (
	"encoding/hex"
	"encoding/json"
)

// A plain rollout that only grew is read from where the last read stopped
// (transcript.Cursor) when what the parser knew there fits in a small
// context and reading on from it finds exactly what a whole read finds
// after that point. That holds once the rollout's session_meta is read
// (not a subagent's, not a legacy fork, whose prompts are compared with
// its parent's from the start) and a prompt event is seen (the rollout's
// response_item prompts are then passed over for good); the oldest
// format, which has neither, and a .zst rollout are read whole.

// resumeVersion names the context's layout: a context of another (or
// none) is not understood, and the rollout is read whole.
const resumeVersion = 1

// resumeState is what a parser needs to go on from a cursor.
type resumeState struct {
	V       int    `json:"v"`
	Session string `json:"s"`
	Cwd     string `json:"c,omitempty"` // the cwd a prompt found next would get
	LastTS  int64  `json:"t,omitempty"` // the time of a prompt with none
	// The latest prompt, for the pairing of its two copies.
	PrevKind   int    `json:"k,omitempty"`
	PrevSum    string `json:"h,omitempty"`
	PrevPaired bool   `json:"p,omitempty"`
}

// resumeContext returns the context to save with the cursor the parse
// stopped at (before a last line that was not complete), or ok false when
// the rollout is to be read whole next time.
func (p *parser) resumeContext() (ctx string, ok bool) {
	q := p
	if p.torn != nil {
		q = p.torn
	}
	if !q.metaSeen || q.subagent || q.legacyFork || q.oldest || !q.sawEvent || q.session == "" {
		return "", false
	}
	st := resumeState{V: resumeVersion, Session: q.session, Cwd: q.cwd, LastTS: q.lastTS,
		PrevKind: q.prevKind, PrevPaired: q.prevPaired}
	if st.Cwd == "" {
		st.Cwd = q.metaCwd
	}
	if q.prevKind != 0 {
		st.PrevSum = hex.EncodeToString(q.prevSum[:])
	}
	b, err := json.Marshal(st)
	if err != nil {
		return "", false
	}
	return string(b), true
}

// resume sets p's state from a context resumeContext made; false (p
// untouched) for one it does not understand.
func (p *parser) resume(ctx string) bool {
	var st resumeState
	if json.Unmarshal([]byte(ctx), &st) != nil || st.V != resumeVersion || st.Session == "" {
		return false
	}
	var sum [16]byte
	switch st.PrevKind {
	case 0:
	case kindEvent, kindItem:
		if len(st.PrevSum) != 2*len(sum) {
			return false
		}
		if _, err := hex.Decode(sum[:], []byte(st.PrevSum)); err != nil {
			return false
		}
	default:
		return false
	}
	p.seenLine, p.metaSeen, p.sawEvent = true, true, true
	p.session, p.cwd, p.lastTS = st.Session, st.Cwd, st.LastTS
	p.prevKind, p.prevSum, p.prevPaired = st.PrevKind, sum, st.PrevPaired
	return true
}
