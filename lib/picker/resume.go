package picker

import (
	"errors"
	"fmt"
	"strings"

	"hist/lib/agent"
	"hist/lib/shellquote"
)

// errNoSession says a prompt has no agent session to resume.
var errNoSession = errors.New("this prompt was not imported from an agent's session: there is no session to resume")

// ResumeCommand is the command, for shell sh, that resumes session in the
// agent that src names, run in cwd when it is an absolute path (Claude
// Code and pi keep sessions per folder). The session id comes from a
// transcript, so only a plain id becomes an argument: letters, digits and
// . _ : -, not starting with - (which the agent would take as an option).
// The folder is quoted for sh. The error (errNoSession, or a refusal
// naming the id) is a message for the user.
func ResumeCommand(src, session, cwd string, sh shellquote.Shell) (string, error) {
	if session == "" {
		return "", errNoSession
	}
	a, ok := agent.Lookup(src)
	if !ok || a.Resume == nil {
		return "", errNoSession
	}
	if !agent.PlainID(session) {
		return "", fmt.Errorf("the session id %q is not a plain id (letters, digits, . _ : -, not starting with -): no resume command is printed for it", session)
	}
	cmd := strings.Join(a.Resume, " ") + " " + session
	if strings.HasPrefix(cwd, "/") {
		cmd = "cd " + shellquote.Quote(cwd, sh) + " && " + cmd
	}
	return cmd, nil
}
