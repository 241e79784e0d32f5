package cursor

import (
	"encoding/json"
	"io"
	"path/filepath"
	"sort"

	"hist/lib/identity"
	"hist/lib/transcript"
	"hist/lib/transcript/internal/filescan"
)

// RecallPath is the path of cursor-agent's global prompt-recall file,
// <config>/prompt_history.json, where <config> is $CURSOR_CONFIG_DIR, else
// $XDG_CONFIG_HOME/cursor when that folder exists, else ~/.cursor.
// ScanCursor also reads the per-chat files beside it.
func RecallPath(env transcript.Env, home string) string {
	return filepath.Join(DefaultRoot(env, home), "prompt_history.json")
}

// ScanRecall reads cursor-agent's up-arrow history: the global
// prompt_history.json at path (older builds) and every chat's own
// chats/<workspace hash>/<chat id>/prompt_history.json beside it (builds
// since June 2026, up to 500 entries each).
//
// The files' shape is not documented and could not be checked here
// (cursor-agent cannot be installed): a JSON array whose entries are
// strings or objects with a "text", "prompt", "input", "content" or
// "display" string is read, and so is an object holding such an array
// under "entries", "history", "prompts" or "items". A file of any other
// shape is counted in Stats.Malformed.
//
// The files hold no time or cwd: TS is the file's modification time,
// flagged Approx; Session is the chat id for a per-chat file; Cwd and Key
// are empty. Commands and blank entries are not emitted.
func ScanRecall(path string, emit func(transcript.Prompt) error) (transcript.Stats, error) {
	var st transcript.Stats
	type file struct{ path, session string }
	files := []file{{path: path}}
	chats, _ := filepath.Glob(filepath.Join(filepath.Dir(path), "chats", "*", "*", "prompt_history.json"))
	sort.Strings(chats)
	for _, c := range chats {
		files = append(files, file{c, filepath.Base(filepath.Dir(c))})
	}
	for _, fl := range files {
		f, fi, err := filescan.OpenRecall(fl.path, &st)
		if err != nil {
			return st, err
		}
		if f == nil {
			continue
		}
		data, err := io.ReadAll(f)
		f.Close()
		st.Bytes += int64(len(data))
		if err != nil {
			return st, &transcript.ReadError{Path: fl.path, Err: err}
		}
		st.Files++
		texts, ok := parseCursorHistory(data)
		if !ok {
			st.Malformed++
			continue
		}
		for _, text := range texts {
			p := transcript.Prompt{Text: text, TS: fi.ModTime().UnixMilli(), Session: fl.session, Src: transcript.SrcCursor, Approx: true}
			if err := emit(p); err != nil {
				return st, err
			}
			st.Prompts++
		}
	}
	return st, nil
}

// parseCursorHistory returns the capturable prompts of a prompt_history.json.
func parseCursorHistory(data []byte) ([]string, bool) {
	var list []json.RawMessage
	if json.Unmarshal(data, &list) != nil {
		var wrap map[string]json.RawMessage
		if json.Unmarshal(data, &wrap) != nil {
			return nil, false
		}
		found := false
		for _, k := range []string{"entries", "history", "prompts", "items"} {
			if raw, ok := wrap[k]; ok && json.Unmarshal(raw, &list) == nil {
				found = true
				break
			}
		}
		if !found {
			return nil, false
		}
	}
	var out []string
	for _, raw := range list {
		text, ok := cursorEntry(raw)
		if ok && identity.Capturable(text) {
			out = append(out, text)
		}
	}
	return out, true
}

func cursorEntry(raw json.RawMessage) (string, bool) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, true
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return "", false
	}
	for _, k := range []string{"text", "prompt", "input", "content", "display"} {
		if v, ok := m[k]; ok && json.Unmarshal(v, &s) == nil {
			return s, true
		}
	}
	return "", false
}
