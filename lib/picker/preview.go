package picker

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"hist/lib/agent"
	"hist/lib/history"
	"hist/lib/shellquote"
	"hist/lib/store"
	"hist/lib/termsafe"
)

// origin says how the prompts of the store file at path got there:
// "captured live" for a capture file (or a carry or claim file of one),
// "imported" for a seed or import file and history-global.jsonl, and ""
// for a compact file, which merges capture and import files alike.
func origin(path string) string {
	switch store.Classify(store.Origin(filepath.Base(path))) {
	case store.Capture:
		return "captured live"
	case store.Compact:
		return ""
	}
	return "imported"
}

// ago says how long ago t was, coarsely.
func ago(t, now time.Time) string {
	d := now.Sub(t)
	switch {
	case d < 0:
		return "in the future"
	case d < time.Minute:
		return "just now"
	case d < time.Hour:
		return fmt.Sprintf("%dm ago", int(d/time.Minute))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh ago", int(d/time.Hour))
	case d < 60*24*time.Hour:
		return fmt.Sprintf("%dd ago", int(d/(24*time.Hour)))
	}
	return fmt.Sprintf("%dmo ago", int(d/(30*24*time.Hour)))
}

// preview renders the preview pane of e, whose project's folder is cwd
// ("" when unknown): the prompt's time, project, and for a prompt that
// names its agent (imported, or captured by an agent's hook) the agent,
// how it got into the store, session and resume command, then the whole
// prompt. The resume command is quoted for sh. Each field shows as one
// line, as a row does; the prompt keeps its newlines, and its tabs
// expanded (termsafe.Text).
func preview(e history.Entry, cwd, resumeKey string, sh shellquote.Shell, now time.Time) string {
	var b strings.Builder
	t := time.UnixMilli(e.TS)
	fmt.Fprintf(&b, "Time     %s (%s)\n", t.Format("2006-01-02 15:04:05"), ago(t, now))
	switch {
	case e.Project == "":
		b.WriteString("Project  (none: imported editor history, history-global.jsonl)\n")
	case cwd != "":
		fmt.Fprintf(&b, "Project  %s\n", row(cwd))
	default:
		fmt.Fprintf(&b, "Project  %s (folder unknown: not in registry.json)\n", e.Project)
	}
	if e.Src != "" {
		name := e.Src // an unknown agent as it is
		if a, ok := agent.Lookup(e.Src); ok {
			name = a.Display
		}
		if o := origin(e.File); o != "" {
			name += " (" + o + ")"
		}
		fmt.Fprintf(&b, "Agent    %s\n", row(name))
		if e.Session != "" {
			fmt.Fprintf(&b, "Session  %s\n", row(e.Session))
		}
		switch cmd, err := ResumeCommand(e.Src, e.Session, cwd, sh); {
		case err == nil && resumeKey == "":
			fmt.Fprintf(&b, "Resume   %s\n", row(cmd))
		case err == nil:
			fmt.Fprintf(&b, "Resume   %s   (%s prints it)\n", row(cmd), resumeKey)
		case err != errNoSession:
			fmt.Fprintf(&b, "Resume   refused: %s\n", row(err.Error()))
		}
	}
	b.WriteString("────────\n")
	b.WriteString(termsafe.Text(expandTabs(e.Text)))
	b.WriteByte('\n')
	return b.String()
}
