package claude

import "hist/lib/transcript"

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
	Root:       DefaultRoot,
	Scan:       ScanKept,
	RecallPath: RecallPath,
	ScanRecall: ScanRecall,
}
