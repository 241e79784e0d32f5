package claude

import (
	"bytes"
	"encoding/json"
	"io"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"unicode"

	"hist/lib/identity"
	"hist/lib/transcript"
	"hist/lib/transcript/internal/filescan"
)

// RecallPath is the path of Claude Code's prompt-recall file:
// $CLAUDE_CONFIG_DIR/history.jsonl, else home/.claude/history.jsonl.
func RecallPath(env transcript.Env, home string) string {
	return filepath.Join(Config(env, home), "history.jsonl")
}

// ScanRecall reads Claude Code's history.jsonl, one line per prompt
// submitted in its REPL:
//
//	{"display":"…","pastedContents":{…},"timestamp":<ms>,"project":"/cwd","sessionId":"…"}
//
// and emits each prompt: the display text with every "[Pasted text #N …]"
// placeholder replaced by the pasted text, taken from
// pastedContents[N].content or, in newer builds, from
// paste-cache/<contentHash>.txt beside the file (a placeholder whose text
// is gone stays as it is). project is the Cwd, sessionId the Session,
// timestamp the TS (Approx when missing). Slash commands ("/cmd …"), shell
// commands ("!cmd", the REPL's bash mode) and blank lines are not emitted.
// Key is empty: the file has no event ids. A paste file that cannot be
// read stops the scan as the file itself does (transcript.Agent's
// ScanRecall).
func ScanRecall(path string, emit func(transcript.Prompt) error) (transcript.Stats, error) {
	var st transcript.Stats
	f, fi, err := filescan.Open(path) // a folder's read fails, which reports it
	if f == nil {
		if fi != nil {
			st.Skipped++
		}
		return st, err
	}
	defer f.Close()
	pastes := claudePasteCache{dir: filepath.Join(filepath.Dir(path), "paste-cache")}
	err = filescan.Lines(f, path, &st, func(_ int, line []byte) error {
		p, ok, bad, err := claudeHistoryPrompt(line, pastes.read)
		switch {
		case err != nil:
			return err
		case bad:
			st.Malformed++
		case ok:
			if err := emit(p); err != nil {
				return err
			}
			st.Prompts++
		}
		return nil
	})
	if err != nil {
		return st, err
	}
	st.Files = 1
	return st, nil
}

type claudeHistoryLine struct {
	Display        string                     `json:"display"`
	PastedContents map[string]json.RawMessage `json:"pastedContents"`
	Timestamp      json.RawMessage            `json:"timestamp"`
	Project        string                     `json:"project"`
	SessionID      string                     `json:"sessionId"`
}

type claudePasted struct {
	ID          json.RawMessage `json:"id"`
	Type        string          `json:"type"`
	Content     *string         `json:"content"`
	ContentHash string          `json:"contentHash"`
}

// claudeHistoryPrompt decodes one line of history.jsonl. readPaste returns
// the text stored under a content hash (found false when it is gone). ok is
// true when the line is a prompt to emit, bad when it does not decode; err
// is an I/O error from readPaste.
func claudeHistoryPrompt(line []byte, readPaste func(hash string) (string, bool, error)) (p transcript.Prompt, ok, bad bool, err error) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return p, false, false, nil
	}
	var h claudeHistoryLine
	if json.Unmarshal(line, &h) != nil {
		return p, false, true, nil
	}
	text := h.Display
	if !identity.Capturable(text) || strings.HasPrefix(strings.TrimLeftFunc(text, unicode.IsSpace), "!") {
		return p, false, false, nil
	}
	if len(h.PastedContents) > 0 {
		if text, err = claudeResolvePastes(text, h.PastedContents, readPaste); err != nil {
			return p, false, false, err
		}
		if !identity.Capturable(text) { // a paste may be empty, or all there is
			return p, false, false, nil
		}
	}
	ts, tsOK := claudeMillis(h.Timestamp)
	p = transcript.Prompt{
		Text:    text,
		TS:      ts,
		Cwd:     h.Project,
		Session: h.SessionID,
		Src:     transcript.SrcClaude,
		Approx:  !tsOK,
	}
	return p, true, false, nil
}

// pastePlaceholder is a placeholder Claude Code puts in place of a paste:
// "[Pasted text #N]", "[Pasted text #N +K lines]" or "[...Truncated text
// #N +K lines...]".
var pastePlaceholder = regexp.MustCompile(`\[Pasted text #([0-9]+)(?: \+[0-9]+ lines)?\]|\[\.\.\.Truncated text #([0-9]+)(?: \+[0-9]+ lines)?\.\.\.\]`)

// claudeResolvePastes replaces each placeholder whose text is known by
// that text.
func claudeResolvePastes(text string, pasted map[string]json.RawMessage, readPaste func(string) (string, bool, error)) (string, error) {
	var err error
	out := pastePlaceholder.ReplaceAllStringFunc(text, func(m string) string {
		if err != nil {
			return m
		}
		n := pastePlaceholder.FindStringSubmatch(m)
		body, found, e := claudePasteText(n[1]+n[2], pasted, readPaste)
		if err = e; !found {
			return m
		}
		return body
	})
	return out, err
}

// claudePasteText returns the text of paste number n, inline or from the
// paste cache.
func claudePasteText(n string, pasted map[string]json.RawMessage, readPaste func(string) (string, bool, error)) (string, bool, error) {
	raw, found := pasted[n]
	if !found {
		for _, r := range pasted {
			var e claudePasted
			if json.Unmarshal(r, &e) == nil && strings.TrimSpace(string(e.ID)) == n {
				raw, found = r, true
				break
			}
		}
	}
	var e claudePasted
	if !found || json.Unmarshal(raw, &e) != nil || (e.Type != "" && e.Type != "text") {
		return "", false, nil
	}
	if e.Content != nil {
		return *e.Content, true, nil
	}
	if e.ContentHash == "" || !claudeSafeHash(e.ContentHash) {
		return "", false, nil
	}
	return readPaste(e.ContentHash)
}

func claudeSafeHash(h string) bool {
	for i := 0; i < len(h); i++ {
		c := h[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '-' || c == '_') {
			return false
		}
	}
	return len(h) <= 128
}

// claudePasteCache reads paste-cache/<hash>.txt files.
type claudePasteCache struct{ dir string }

func (c claudePasteCache) read(hash string) (string, bool, error) {
	path := filepath.Join(c.dir, hash+".txt")
	f, _, err := filescan.Open(path) // a FIFO or device is passed over: reading could block
	if f == nil {
		return "", false, err
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	if err != nil {
		return "", false, &transcript.ReadError{Path: path, Err: err}
	}
	return string(b), true, nil
}

// claudeMillis reads an epoch-milliseconds timestamp (a number).
func claudeMillis(raw json.RawMessage) (int64, bool) {
	s := strings.TrimSpace(string(raw))
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return n, n > 0
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil && f > 0 && f < 1<<62 {
		return int64(f), true
	}
	return 0, false
}
