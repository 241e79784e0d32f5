package claude

import (
	"path/filepath"

	"hist/lib/envdir"
	"hist/lib/transcript"
)

// Config is Claude Code's folder: $CLAUDE_CONFIG_DIR, else ~/.claude.
func Config(env transcript.Env, home string) string {
	if d := envdir.Get(env, "CLAUDE_CONFIG_DIR", home); d != "" {
		return d
	}
	return filepath.Join(home, ".claude")
}

// Agent is Claude Code.
var Agent = transcript.Agent{
	Name:    transcript.SrcClaude,
	Display: "Claude Code",
	Where:   "$CLAUDE_CONFIG_DIR/projects, ~/.claude/projects (history.jsonl beside)",
	Recall:  "history.jsonl",
	Hook: func(h *transcript.Hook) string {
		if h.IsCodex() {
			return ""
		}
		return h.SessionID
	},
	Resume:     []string{"claude", "--resume"},
	Config:     Config,
	Root:       DefaultRoot,
	Scan:       Scan,
	RecallPath: RecallPath,
	ScanRecall: ScanRecall,
}
