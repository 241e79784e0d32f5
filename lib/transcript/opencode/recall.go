package opencode

import (
	"encoding/json"
	"io"
	"path/filepath"
	"sort"
	"strings"
	"unicode/utf16"

	"hist/lib/identity"
	"hist/lib/transcript"
	"hist/lib/transcript/internal/filescan"
)

// RecallPath is the path of opencode's prompt-recall file:
// $XDG_STATE_HOME/opencode/prompt-history.jsonl, else
// ~/.local/state/opencode/prompt-history.jsonl.
func RecallPath(env transcript.Env, home string) string {
	state := filepath.Join(home, ".local", "state")
	if env != nil {
		if x := env("XDG_STATE_HOME"); x != "" && filepath.IsAbs(x) {
			state = x
		}
	}
	return filepath.Join(state, "opencode", "prompt-history.jsonl")
}

// ScanRecall reads opencode's prompt-history.jsonl (the TUI's last 50
// prompts), one line per prompt:
//
//	{"input":"[Pasted ~31 lines] ","parts":[{"type":"text","text":"…","source":{"text":{"start":0,"end":18,"value":"[Pasted ~31 lines]"}}}],"mode":"normal"}
//
// and emits each prompt: input with every pasted placeholder (a text
// part's source.text, offsets in UTF-16 units) replaced by the part's text.
// The file holds no time, cwd or session: TS is the file's modification
// time, flagged Approx, and Cwd, Session and Key are empty. Shell-mode
// lines ("mode":"shell", the TUI's !cmd), commands ("/greet …") and blank
// prompts are not emitted.
func ScanRecall(path string, emit func(transcript.Prompt) error) (transcript.Stats, error) {
	var st transcript.Stats
	f, fi, err := filescan.OpenRecall(path, &st)
	if f == nil {
		return st, err
	}
	defer f.Close()
	ts := fi.ModTime().UnixMilli()
	err = parseOpencodeHistory(f, path, &st, func(text string) error {
		if err := emit(transcript.Prompt{Text: text, TS: ts, Src: transcript.SrcOpencode, Approx: true}); err != nil {
			return err
		}
		st.Prompts++
		return nil
	})
	if err != nil {
		return st, err
	}
	st.Files++
	return st, nil
}

type opencodePart struct {
	Type   string `json:"type"`
	Text   string `json:"text"`
	Source *struct {
		Text *struct {
			Start int    `json:"start"`
			End   int    `json:"end"`
			Value string `json:"value"`
		} `json:"text"`
	} `json:"source"`
}

// parseOpencodeHistory reads prompt-history.jsonl lines (name is for
// errors) and hands the prompts to out, counting in st.
func parseOpencodeHistory(r io.Reader, name string, st *transcript.Stats, out func(string) error) error {
	return filescan.Lines(r, name, st, func(_ int, line []byte) error {
		var h struct {
			Input *string        `json:"input"`
			Parts []opencodePart `json:"parts"`
			Mode  string         `json:"mode"`
		}
		if json.Unmarshal(line, &h) != nil || h.Input == nil {
			st.Malformed++
			return nil
		}
		if h.Mode == "shell" {
			return nil
		}
		text := opencodeExpand(*h.Input, h.Parts)
		if !identity.Capturable(text) {
			return nil
		}
		return out(text)
	})
}

// opencodeExpand replaces the pasted placeholders in input by the pasted
// text. A placeholder is found at its recorded UTF-16 offsets, else as the
// first occurrence of its value; one that is not found leaves input as it
// is.
func opencodeExpand(input string, parts []opencodePart) string {
	type repl struct {
		start, end int // UTF-16 offsets
		text       string
	}
	units := utf16.Encode([]rune(input))
	var at []repl
	var unplaced []opencodePart
	var bare []string
	for _, p := range parts {
		if p.Type != "text" {
			continue // files and agents are mentioned in the input already
		}
		if p.Source == nil || p.Source.Text == nil {
			bare = append(bare, p.Text)
			continue
		}
		s := p.Source.Text
		if s.Start >= 0 && s.Start <= s.End && s.End <= len(units) &&
			string(utf16.Decode(units[s.Start:s.End])) == s.Value {
			at = append(at, repl{s.Start, s.End, p.Text})
		} else {
			unplaced = append(unplaced, p)
		}
	}
	sort.Slice(at, func(i, j int) bool { return at[i].start > at[j].start })
	last := len(units) + 1
	for _, r := range at {
		if r.end > last {
			continue // overlapping placeholders: keep the later one
		}
		units = append(units[:r.start], append(utf16.Encode([]rune(r.text)), units[r.end:]...)...)
		last = r.start
	}
	text := string(utf16.Decode(units))
	if len(at) == 0 {
		text = input
	}
	for _, p := range unplaced {
		v := p.Source.Text.Value
		if v != "" {
			if i := strings.Index(text, v); i >= 0 {
				text = text[:i] + p.Text + text[i+len(v):]
			}
		}
	}
	if identity.IsBlank(text) && len(bare) > 0 {
		text = strings.Join(bare, "\n")
	}
	return text
}
