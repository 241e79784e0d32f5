// Package agent is the list of the coding agents hist knows. Each agent's
// value (transcript.Agent: where its files live, its readers, its prompt
// hook, how a session is resumed) lives in its reader package; adding an
// agent is that package plus its line in List, from which the commands
// and the documentation's agent tables come (tests check each).
//
// The readers open SQLite through database/sql: a program that reads it
// links the driver (cmd/hist-seed does), so hist-capture stays small.
package agent

import (
	"strings"

	"hist/lib/shellquote"
	"hist/lib/transcript"
	"hist/lib/transcript/claude"
	"hist/lib/transcript/codex"
	"hist/lib/transcript/cursor"
	"hist/lib/transcript/opencode"
	"hist/lib/transcript/pi"
)

// Agent is one coding agent.
type Agent = transcript.Agent

// Hook is an agent's prompt hook payload.
type Hook = transcript.Hook

// List is every agent, in the order hist-seed reads them.
var List = []Agent{pi.Agent, claude.Agent, codex.Agent, cursor.Agent, opencode.Agent}

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

// PlainID reports whether a session id may become an argument of an
// agent's resume command: non-empty, made of letters, digits and . _ : -,
// and not starting with - (which the agent would take as an option).
func PlainID(id string) bool {
	return shellquote.Plain(id) && id[0] != '-' && !strings.ContainsAny(id, "/@+,")
}
