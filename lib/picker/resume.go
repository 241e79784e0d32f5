package picker

import "strings"

// Agent is the name shown for an import source.
func Agent(src string) string {
	switch src {
	case "pi":
		return "pi"
	case "claude":
		return "Claude Code"
	case "codex":
		return "Codex CLI"
	case "cursor":
		return "cursor-agent"
	case "opencode":
		return "opencode"
	}
	return src
}

// ResumeCommand is the shell command that resumes session in the agent
// that src names, run in cwd when it is known (Claude Code and pi keep
// sessions per folder). "" when src is not an agent hist knows or there is
// no session.
func ResumeCommand(src, session, cwd string) string {
	if session == "" {
		return ""
	}
	var cmd string
	q := Quote(session)
	switch src {
	case "pi":
		cmd = "pi --session " + q
	case "claude":
		cmd = "claude --resume " + q
	case "codex":
		cmd = "codex resume " + q
	case "cursor":
		cmd = "cursor-agent --resume " + q
	case "opencode":
		cmd = "opencode -s " + q
	default:
		return ""
	}
	if cwd != "" {
		cmd = "cd " + Quote(cwd) + " && " + cmd
	}
	return cmd
}

// Quote quotes s for a POSIX shell when it needs it.
func Quote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:@%+=,", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
