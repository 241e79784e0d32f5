package codex

import (
	"bufio"
	"encoding/json"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"hist/lib/identity"
	"hist/lib/transcript"
	"hist/lib/transcript/internal/filescan"
)

// RecallPath is the path of Codex's prompt-recall file: $CODEX_HOME/history.jsonl,
// else ~/.codex/history.jsonl.
func RecallPath(env transcript.Env, home string) string {
	return filepath.Join(DefaultRoot(env, home), "history.jsonl")
}

// ScanRecall reads Codex's history.jsonl, one line per prompt submitted in
// its composer:
//
//	{"session_id":"…","ts":<unix seconds>,"text":"…"}
//
// (some builds wrote "conversation_id"), and emits each prompt: text as it
// is (a paste is inline), ts in milliseconds (Approx, the file's time, when
// missing), the session id, and the cwd of that session's rollout
// (session_meta) when one is found under the same CODEX_HOME. Commands
// ("/prompts:…"), shell commands ("!cmd", run by the composer, not sent
// as a prompt) and blank lines are not emitted. Key is empty: the file has
// no event ids.
func ScanRecall(path string, emit func(transcript.Prompt) error) (transcript.Stats, error) {
	var st transcript.Stats
	f, fi, err := filescan.OpenRecall(path, &st)
	if f == nil {
		return st, err
	}
	defer f.Close()
	var lines []codexLine
	err = parseCodexHistory(f, path, &st, func(l codexLine) error {
		lines = append(lines, l)
		return nil
	})
	if err != nil {
		return st, err
	}
	st.Files++
	ids := map[string]bool{}
	for _, l := range lines {
		ids[l.session] = true
	}
	cwds := codexCwds(filepath.Dir(path), ids)
	for _, l := range lines {
		p := transcript.Prompt{Text: l.text, TS: l.ts, Cwd: cwds[l.session], Session: l.session, Src: transcript.SrcCodex}
		if l.ts <= 0 {
			p.TS, p.Approx = fi.ModTime().UnixMilli(), true
		}
		if err := emit(p); err != nil {
			return st, err
		}
		st.Prompts++
	}
	return st, nil
}

// codexLine is one history.jsonl prompt to emit.
type codexLine struct {
	session, text string
	ts            int64 // ms; 0 when missing
}

// parseCodexHistory reads history.jsonl lines (name is for errors) and
// hands over the prompts to emit (capturable, not shell commands),
// counting in st.
func parseCodexHistory(r io.Reader, name string, st *transcript.Stats, out func(codexLine) error) error {
	return filescan.Lines(r, name, st, func(_ int, line []byte) error {
		var h struct {
			SessionID      string      `json:"session_id"`
			ConversationID string      `json:"conversation_id"`
			TS             json.Number `json:"ts"`
			Text           *string     `json:"text"`
		}
		if json.Unmarshal(line, &h) != nil || h.Text == nil {
			st.Malformed++
			return nil
		}
		text := *h.Text
		if !identity.Capturable(text) || strings.HasPrefix(text, "!") {
			return nil
		}
		session := h.SessionID
		if session == "" {
			session = h.ConversationID
		}
		var ts int64
		if f, err := h.TS.Float64(); err == nil && f > 0 && f < 1e15 {
			if f < 1e11 {
				f *= 1000 // seconds, as Codex writes them
			}
			ts = int64(f)
		}
		return out(codexLine{session: session, text: text, ts: ts})
	})
}

// codexCwds finds, for the given session ids, the cwd recorded in their
// rollouts' session_meta under root. It is best effort: a rollout that
// cannot be read leaves its session without a cwd.
func codexCwds(root string, ids map[string]bool) map[string]string {
	out := map[string]string{}
	if len(ids) == 0 {
		return out
	}
	for _, sub := range []string{"sessions", "archived_sessions"} {
		filepath.WalkDir(filepath.Join(root, sub), func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return nil
			}
			id := sessionFromName(d.Name())
			if id == "" || !isRollout(d.Name()) || !ids[id] || out[id] != "" {
				return nil
			}
			if cwd := codexRolloutCwd(path); cwd != "" {
				out[id] = cwd
			}
			return nil
		})
	}
	return out
}

// codexRolloutCwd reads the cwd from a rollout's first line (its session_meta).
func codexRolloutCwd(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(path, ".zst") {
		d, err := newZstd(f)
		if err != nil {
			return ""
		}
		defer d.Close()
		r = d
	}
	line, err := bufio.NewReaderSize(io.LimitReader(r, 64<<20), 64<<10).ReadBytes('\n')
	if err != nil && err != io.EOF {
		return ""
	}
	var m struct {
		Type    string `json:"type"`
		Payload struct {
			Cwd string `json:"cwd"`
		} `json:"payload"`
	}
	if json.Unmarshal(line, &m) != nil || m.Type != "session_meta" {
		return ""
	}
	return m.Payload.Cwd
}
