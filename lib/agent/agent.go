// Package agent is the list of the coding agents hist knows: for each, the
// name its records carry, the name shown to people, where its files live,
// how its prompt hook is recognised and how a session is resumed. It is
// light data only (no reader), so that hist-capture and hist-pick can use
// it without linking the transcript readers; hist-seed attaches a reader
// to each name (cmd/hist-seed/sources.go).
package agent

import (
	"regexp"
	"strings"

	"hist/lib/shellquote"
)

// Agent is one coding agent.
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
}

// List is every agent, in the order hist-seed reads them.
var List = []Agent{
	{
		Name:    "pi",
		Display: "pi",
		Where:   "$PI_CODING_AGENT_SESSION_DIR, $PI_CODING_AGENT_DIR/sessions, ~/.pi/agent/sessions",
		Resume:  []string{"pi", "--session"},
	},
	{
		Name:    "claude",
		Display: "Claude Code",
		Where:   "$CLAUDE_CONFIG_DIR/projects, ~/.claude/projects (history.jsonl beside)",
		Recall:  "history.jsonl",
		Hook: func(h *Hook) string {
			if h.isCodex() {
				return ""
			}
			return h.SessionID
		},
		Resume: []string{"claude", "--resume"},
	},
	{
		Name:    "codex",
		Display: "Codex CLI",
		Where:   "$CODEX_HOME/sessions and archived_sessions, ~/.codex (history.jsonl)",
		Recall:  "history.jsonl",
		Hook: func(h *Hook) string {
			if !h.isCodex() {
				return ""
			}
			return h.SessionID
		},
		Resume: []string{"codex", "resume"},
	},
	{
		Name:    "cursor",
		Display: "cursor-agent",
		Where: "$CURSOR_CONFIG_DIR, $XDG_CONFIG_HOME/cursor, ~/.cursor: chats/*/*/store.db " +
			"and projects/*/agent-transcripts (prompt_history.json); times are the chat's start, approximate",
		Recall: "prompt_history.json",
		Hook: func(h *Hook) string {
			if h.SessionID != "" {
				return ""
			}
			return h.ConversationID
		},
		Resume: []string{"cursor-agent", "--resume"},
	},
	{
		Name:    "opencode",
		Display: "opencode",
		Where: "$OPENCODE_DB, $XDG_DATA_HOME/opencode, ~/.local/share/opencode: opencode*.db " +
			"and storage/ ($XDG_STATE_HOME/opencode/prompt-history.jsonl)",
		Recall: "prompt-history.jsonl",
		Resume: []string{"opencode", "-s"},
	},
}

// Names are the agents' names, in List's order.
func Names() []string {
	names := make([]string, len(List))
	for i, a := range List {
		names[i] = a.Name
	}
	return names
}

// Lookup returns the agent named name.
func Lookup(name string) (Agent, bool) {
	for _, a := range List {
		if a.Name == name {
			return a, true
		}
	}
	return Agent{}, false
}

// PlainID reports whether a session id may become an argument of an
// agent's resume command: non-empty, made of letters, digits and . _ : -,
// and not starting with - (which the agent would take as an option).
func PlainID(id string) bool {
	return shellquote.Plain(id) && id[0] != '-' && !strings.ContainsAny(id, "/@+,")
}

var varRE = regexp.MustCompile(`\$[A-Z_][A-Z0-9_]*`)

// Vars are the environment variables that a's Where names, without "$".
func (a Agent) Vars() []string {
	var vs []string
	for _, v := range varRE.FindAllString(a.Where, -1) {
		vs = append(vs, strings.TrimPrefix(v, "$"))
	}
	return vs
}
