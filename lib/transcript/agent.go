package transcript

import (
	"path/filepath"
	"strings"
)

// Agent is one coding agent: what hist knows of it, and its readers. Each
// reader package (pi, claude, codex, cursor, opencode) holds its agent's
// value; lib/agent lists them. Adding an agent is a reader package with
// its Agent, plus its line in lib/agent's List.
type Agent struct {
	// Name is the agent in a record's "src" field, in hist-seed --from and
	// in its seed file's name.
	Name string
	// Display is the agent's name as shown to people (the selector's
	// preview, the documentation's tables).
	Display string
	// Where says where hist-seed reads its session transcripts, and its
	// prompt-recall file, from: the environment variables that move them
	// come first, in the order they are tried, then the default.
	Where string
	// Recall names the agent's prompt-recall file (the list behind its
	// up-arrow) that the legacy migration reads; empty when there is none.
	Recall string
	// Hook returns the session id when h is this agent's prompt hook
	// payload, else "". At most one agent claims a payload. Nil when the
	// agent's integration does not use hist-capture --hook.
	Hook func(h *Hook) string
	// Resume is the command, before the session id, that resumes one of
	// the agent's sessions; nil when there is none.
	Resume []string

	// Config returns the agent's own folder, where its settings, hooks
	// and extensions live: hist-capture --install writes there, and the
	// readers find their default folders from it. The one place each
	// agent's folder variable is read (lib/envdir's rule).
	Config func(env Env, home string) string
	// Root returns the folder hist-seed reads the session transcripts
	// from (Where says how it is found).
	Root func(env Env, home string) string
	// Scan reads the transcripts under root that keep keeps (nil keeps
	// all) and calls emit once per typed prompt, deduplicated by
	// Prompt.Key. A missing root yields nothing; files that are not
	// regular are passed over and counted in Stats.Skipped, malformed
	// lines or rows in Stats.Malformed. It stops at the first file that
	// cannot be read with a *ReadError (the import is retried later), and
	// at an error from emit, returned as it is.
	Scan func(root string, keep Keep, emit func(Prompt) error) (Stats, error)
	// Watched are the folders under root that hold what Scan reads, for
	// hist-seed --watch; nil when root and every folder below it do.
	Watched func(root string) []Folder
	// RecallPath returns where the prompt-recall file is; nil when Recall
	// is empty.
	RecallPath func(env Env, home string) string
	// ScanRecall reads the prompt-recall file at path, as Scan reads
	// transcripts; nil when Recall is empty.
	ScanRecall func(path string, emit func(Prompt) error) (Stats, error)
}

// Folder is a folder a reader reads from.
type Folder struct {
	Path string
	Flat bool // only the folder's own files, not its subfolders'
}

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
	// Probe is set, instead of a prompt, by hist-capture --status's dry
	// run of a hook: the hook answers it and stores nothing.
	Probe string `json:"hist_probe"`
}

// IsCodex tells Codex's UserPromptSubmit payload from Claude Code's: only
// Codex sends "turn_id", and its transcript is a rollout-*.jsonl file.
func (h *Hook) IsCodex() bool {
	return h.TurnID != "" || strings.HasPrefix(filepath.Base(h.TranscriptPath), "rollout-")
}
