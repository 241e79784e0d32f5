package picker

import (
	"slices"
	"strings"

	"github.com/mattn/go-runewidth"

	"hist/lib/words"
)

// title is the header's first word.
const title = "Prompt history"

// The width classes and their breakpoints, in terminal columns. The
// header is indented by fzf's two-column gutter.
const (
	// wideMin: title, position, loaded count and radio share the first
	// row (they need at most 93 columns with seven-digit counts); the
	// order and filters are below.
	wideMin = 100
	// mediumMin: the radio moves under the counts, followed by the order
	// and filters.
	mediumMin = 60
	// Below mediumMin the header is narrow: title and position, the loaded
	// count with the order and filters, and the radio each take a row, so
	// the list shows 9 prompts (10 otherwise).
)

// headerState is what the header shows.
type headerState struct {
	Cols    int    // terminal columns
	Pos     int    // 1-based position of the selection in the matches (0: none)
	Matches int    // prompts matching the query
	Loaded  int    // prompts loaded so far
	Loading bool   // more are coming
	All     bool   // the radio is on "All projects"
	Repo    bool   // the current project is a git repository
	Status  string // the order and the filters in force
}

const gutter = 2

// radio is the scope radio: the project scope is "This repository" in a
// git repository, else "This folder". When it does not fit in width
// columns, the inactive scope is shortened.
func radio(all, repo bool, width int) string {
	name, short := "This folder", "Folder"
	if repo {
		name, short = "This repository", "Repo"
	}
	if !all {
		full := "◉ " + name + " | ○ All projects"
		if runewidth.StringWidth(full) <= width {
			return full
		}
		return "◉ " + name + " | ○ All"
	}
	full := "○ " + name + " | ◉ All projects"
	if runewidth.StringWidth(full) <= width {
		return full
	}
	return "○ " + short + " | ◉ All projects"
}

// header returns the header's rows for h (without fzf's gutter): the
// position "pos/matches", the loaded count (with an ellipsis while more
// are coming), the radio and the status.
func header(h headerState) []string {
	width := max(1, h.Cols-gutter-1)
	pos, loaded := words.Count(h.Pos)+"/"+words.Count(h.Matches), words.Count(h.Loaded)+" loaded"
	if h.Loading {
		loaded += "…"
	}
	var rows []string
	switch {
	case h.Cols >= wideMin:
		left := title + "  " + pos + "  " + loaded
		scope := radio(h.All, h.Repo, width)
		pad := max(2, width-runewidth.StringWidth(left)-runewidth.StringWidth(scope))
		rows = []string{left + strings.Repeat(" ", pad) + scope, h.Status}
	case h.Cols >= mediumMin:
		rows = []string{title + "  " + pos + "  " + loaded, radio(h.All, h.Repo, width) + "  " + h.Status}
	default:
		rows = []string{title + "  " + pos, loaded + "  " + h.Status, radio(h.All, h.Repo, width)}
	}
	for i, r := range rows {
		rows[i] = runewidth.Truncate(r, width, "…")
	}
	return rows
}

// hint is the key hint for the keys in use (resumeKey or previewKey ""
// when unbound; the shortest delete key): as many as fit in width
// columns, the first ones first. It is the footer's row while the footer
// has nothing else to say.
func hint(deleteKeys []string, resumeKey, previewKey string, width int) string {
	keys := []string{"enter pick"}
	if resumeKey != "" {
		keys = append(keys, resumeKey+" resume")
	}
	del := slices.MinFunc(deleteKeys, func(a, b string) int { return len(a) - len(b) })
	keys = append(keys, "tab scope", del+" delete")
	if previewKey != "" {
		keys = append(keys, previewKey+" preview")
	}
	keys = append(keys, orderKey+" order", "ctrl-r relevance", agentKey+" agent")
	out := keys[0]
	for _, k := range keys[1:] {
		if runewidth.StringWidth(out+" · "+k) <= width {
			out += " · " + k
		}
	}
	return out
}
