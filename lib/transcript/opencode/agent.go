package opencode

import (
	"path/filepath"

	"hist/lib/transcript"
)

// Config is opencode's configuration folder, where its plugins live:
// $XDG_CONFIG_HOME/opencode, else ~/.config/opencode. (Its transcripts are
// in its data folder: DefaultRoot.)
func Config(env transcript.Env, home string) string {
	if x := transcript.Getenv(env, "XDG_CONFIG_HOME"); filepath.IsAbs(x) {
		return filepath.Join(x, "opencode")
	}
	return filepath.Join(home, ".config", "opencode")
}

// Agent is opencode (its plugin captures live, see scripts/opencode).
var Agent = transcript.Agent{
	Name:    transcript.SrcOpencode,
	Display: "opencode",
	Where: "$OPENCODE_DB, $XDG_DATA_HOME/opencode, ~/.local/share/opencode: opencode*.db " +
		"and storage/ ($XDG_STATE_HOME/opencode/prompt-history.jsonl)",
	Recall: "prompt-history.jsonl",
	Resume: []string{"opencode", "-s"},
	Config: Config,
	Root:   DefaultRoot,
	Scan:   Scan,
	// The databases (or the one $OPENCODE_DB names) and the older JSON
	// storage.
	Watched: func(root string) []transcript.Folder {
		return []transcript.Folder{{Path: root, Flat: true}, {Path: filepath.Join(root, "storage")}}
	},
	RecallPath: RecallPath,
	ScanRecall: ScanRecall,
}
