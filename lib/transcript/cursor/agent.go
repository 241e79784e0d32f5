package cursor

import (
	"os"
	"path/filepath"

	"hist/lib/envdir"
	"hist/lib/transcript"
)

// Config is cursor-agent's folder: $CURSOR_CONFIG_DIR, else
// $XDG_CONFIG_HOME/cursor when that folder exists, else ~/.cursor.
func Config(env transcript.Env, home string) string {
	if d := envdir.Get(env, "CURSOR_CONFIG_DIR", home); d != "" {
		return d
	}
	if x := transcript.Getenv(env, "XDG_CONFIG_HOME"); filepath.IsAbs(x) {
		if fi, err := os.Stat(filepath.Join(x, "cursor")); err == nil && fi.IsDir() {
			return filepath.Join(x, "cursor")
		}
	}
	return filepath.Join(home, ".cursor")
}

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
	Config: Config,
	Root:   DefaultRoot,
	Scan:   Scan,
	Watched: func(root string) []transcript.Folder {
		return []transcript.Folder{{Path: filepath.Join(root, "chats")}, {Path: filepath.Join(root, "projects")}}
	},
	RecallPath: RecallPath,
	ScanRecall: ScanRecall,
}
