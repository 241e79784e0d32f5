package agent

import (
	"path/filepath"
	"strings"
)

// Hook is what the agents' prompt hooks send to hist-capture --hook: every
// agent's fields in one shape (Claude Code's {prompt, cwd, session_id},
// Codex's the same plus turn_id, Cursor's {prompt, workspace_roots,
// conversation_id}, or a generic {prompt, cwd}).
type Hook struct {
	Prompt         *string  `json:"prompt"`
	Cwd            string   `json:"cwd"`
	SessionID      string   `json:"session_id"`
	WorkspaceRoots []string `json:"workspace_roots"`
	ConversationID string   `json:"conversation_id"`
	HookEventName  string   `json:"hook_event_name"`
	// Codex's UserPromptSubmit payload is Claude Code's shape plus these.
	TurnID         string `json:"turn_id"`
	TranscriptPath string `json:"transcript_path"`
}

// isCodex tells Codex's UserPromptSubmit payload from Claude Code's: only
// Codex sends "turn_id", and its transcript is a rollout-*.jsonl file.
func (h *Hook) isCodex() bool {
	return h.TurnID != "" || strings.HasPrefix(filepath.Base(h.TranscriptPath), "rollout-")
}

// FromHook names the agent that sent h and the session it names; both are
// empty for a generic payload.
func FromHook(h *Hook) (src, session string) {
	for _, a := range List {
		if a.Hook == nil {
			continue
		}
		if s := a.Hook(h); s != "" {
			return a.Name, s
		}
	}
	return "", ""
}
