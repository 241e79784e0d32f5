package picker

import (
	"strconv"
	"strings"

	"github.com/mattn/go-runewidth"
)

// title is the header's first word.
const title = "Prompt history"

// The width classes and their breakpoints, in terminal columns. The
// header is indented by fzf's two-column gutter.
const (
	// wideMin: title, position, loaded count and radio share the first
	// row (they need at most 93 columns with seven-digit counts); the
	// filter hint is below.
	wideMin = 100
	// mediumMin: the radio moves under the counts, taking the hint's row.
	mediumMin = 60
	// Below mediumMin the header is narrow: title and position, the loaded
	// count, and the radio each take a row, so the list shows 9 prompts.
)

// Width classes.
type class int

const (
	narrow class = iota
	medium
	wide
)

func (c class) String() string { return [...]string{"narrow", "medium", "wide"}[c] }

// classOf is the class of a terminal width.
func classOf(cols int) class {
	switch {
	case cols >= wideMin:
		return wide
	case cols >= mediumMin:
		return medium
	}
	return narrow
}

// listRows is how many prompts the list shows in a class.
func listRows(c class) int {
	if c == narrow {
		return 9
	}
	return 10
}

// headerRows is how many rows the header takes in a class.
func headerRows(c class) int {
	if c == narrow {
		return 3
	}
	return 2
}

// headerState is what the header shows.
type headerState struct {
	Cols    int  // terminal columns
	Pos     int  // 1-based position of the selection in the matches (0: none)
	Matches int  // prompts matching the query
	Loaded  int  // prompts loaded so far
	Loading bool // more are coming
	All     bool // the radio is on "All projects"
	Hint    string
}

const gutter = 2

// radio is the scope radio, shortened when it does not fit in width
// columns: the inactive scope loses its last word.
func radio(all bool, width int) string {
	cur, every := "◉ Current project", "○ All projects"
	if all {
		cur, every = "○ Current project", "◉ All projects"
	}
	full := cur + " | " + every
	if runewidth.StringWidth(full) <= width {
		return full
	}
	if all {
		return "○ Current | " + every
	}
	return cur + " | ○ All"
}

// count formats n with thousands separators.
func count(n int) string {
	s := strconv.Itoa(n)
	if n < 0 {
		return s
	}
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// position is "pos/matches".
func position(h headerState) string { return count(h.Pos) + "/" + count(h.Matches) }

// loadedCount is the loaded count, with an ellipsis while more are coming.
func loadedCount(h headerState) string {
	s := count(h.Loaded) + " loaded"
	if h.Loading {
		s += "…"
	}
	return s
}

// header returns the header's rows for h (without fzf's gutter).
func header(h headerState) []string {
	width := h.Cols - gutter - 1
	if width < 1 {
		width = 1
	}
	pos, loaded := position(h), loadedCount(h)
	var rows []string
	switch classOf(h.Cols) {
	case wide:
		left := title + "  " + pos + "  " + loaded
		scope := radio(h.All, width)
		pad := width - runewidth.StringWidth(left) - runewidth.StringWidth(scope)
		if pad < 2 {
			pad = 2
		}
		rows = []string{left + strings.Repeat(" ", pad) + scope, h.Hint}
	case medium:
		rows = []string{title + "  " + pos + "  " + loaded, radio(h.All, width)}
	default:
		rows = []string{title + "  " + pos, loaded, radio(h.All, width)}
	}
	for i, r := range rows {
		rows[i] = runewidth.Truncate(r, width, "…")
	}
	return rows
}

// hint is the key hint for the keys in use (resumeKey or previewKey ""
// when unbound): the wide header's second row, and, compact, the footer
// of narrower classes while it has nothing else to say.
func hint(deleteKey, resumeKey, previewKey string, compact bool) string {
	keys := []string{"enter pick"}
	if resumeKey != "" {
		keys = append(keys, resumeKey+" resume")
	}
	keys = append(keys, "tab scope", deleteKey+" delete")
	if previewKey != "" {
		keys = append(keys, previewKey+" preview")
	}
	if !compact {
		keys = append([]string{"type to filter"}, keys...)
	}
	return strings.Join(keys, " · ")
}
