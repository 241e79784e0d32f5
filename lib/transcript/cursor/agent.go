package cursor

import (
	"path/filepath"

	"hist/lib/transcript"
)

// Agent is Cursor's agent CLI.
var Agent = transcript.Agent{
	Name:    transcript.SrcCursor,
	Display: "cursor-agent",
	Where: "$CURSOR_CONFIG_DIR, $XDG_CONFIG_HOME/cursor, ~/.cursor: chats/*/*/store.db " +
		"and projects/*/agent-transcripts (prompt_history.json); times are the chat's start, approximate",
	Recall: "prompt_history.json",
	Hook: func(h *transcript.Hook) string {
		if h.SessionID != "" {
			return ""
		}
		return h.ConversationID
	},
	Resume: []string{"cursor-agent", "--resume"},
	Root:   DefaultRoot,
	Scan:   ScanKept,
	Watched: func(root string) []transcript.Folder {
		return []transcript.Folder{{Path: filepath.Join(root, "chats")}, {Path: filepath.Join(root, "projects")}}
	},
	RecallPath: RecallPath,
	ScanRecall: ScanRecall,
}
