package codex

import (
	"path/filepath"

	"hist/lib/envdir"
	"hist/lib/transcript"
)

// Config is Codex's folder: $CODEX_HOME, else ~/.codex.
func Config(env transcript.Env, home string) string {
	if d := envdir.Get(env, "CODEX_HOME", home); d != "" {
		return d
	}
	return filepath.Join(home, ".codex")
}

// Agent is the Codex CLI.
var Agent = transcript.Agent{
	Name:    transcript.SrcCodex,
	Display: "Codex CLI",
	Where:   "$CODEX_HOME/sessions and archived_sessions, ~/.codex (history.jsonl)",
	Recall:  "history.jsonl",
	Hook: func(h *transcript.Hook) string {
		if !h.IsCodex() {
			return ""
		}
		return h.SessionID
	},
	Resume: []string{"codex", "resume"},
	Config: Config,
	Root:   DefaultRoot,
	Scan:   Scan,
	Watched: func(root string) []transcript.Folder {
		return []transcript.Folder{{Path: filepath.Join(root, "sessions")}, {Path: filepath.Join(root, "archived_sessions")}}
	},
	RecallPath: RecallPath,
	ScanRecall: ScanRecall,
}
