package picker

import (
	"strconv"
	"strings"

	"github.com/mattn/go-runewidth"
)

// Title is the header's first word.
const Title = "Prompt history"

// The width classes and their breakpoints, in terminal columns. The
// header is indented by fzf's two-column gutter.
const (
	// WideMin: title, position, loaded count and radio share the first
	// row (they need at most 93 columns with seven-digit counts); the
	// filter hint is below.
	WideMin = 100
	// MediumMin: the radio moves under the counts, taking the hint's row.
	MediumMin = 60
	// Below MediumMin the header is narrow: title and position, the loaded
	// count, and the radio each take a row, so the list shows 9 prompts.
)

// Width classes.
type Class int

const (
	Narrow Class = iota
	Medium
	Wide
)

func (c Class) String() string { return [...]string{"narrow", "medium", "wide"}[c] }

// ClassOf is the class of a terminal width.
func ClassOf(cols int) Class {
	switch {
	case cols >= WideMin:
		return Wide
	case cols >= MediumMin:
		return Medium
	}
	return Narrow
}

// ListRows is how many prompts the list shows in a class.
func ListRows(c Class) int {
	if c == Narrow {
		return 9
	}
	return 10
}

// HeaderState is what the header shows.
type HeaderState struct {
	Cols    int  // terminal columns
	Pos     int  // 1-based position of the selection in the matches (0: none)
	Matches int  // prompts matching the query
	Loaded  int  // prompts loaded so far
	Loading bool // more are coming
	All     bool // the radio is on "All projects"
	Hint    string
}

const gutter = 2

// Radio is the scope radio, shortened when it does not fit in width
// columns: the inactive scope loses its last word.
func Radio(all bool, width int) string {
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

// Count formats n with thousands separators.
func Count(n int) string {
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

// Position is "pos/matches".
func Position(h HeaderState) string { return Count(h.Pos) + "/" + Count(h.Matches) }

// Loaded is the loaded count, with an ellipsis while more are coming.
func Loaded(h HeaderState) string {
	s := Count(h.Loaded) + " loaded"
	if h.Loading {
		s += "…"
	}
	return s
}

// Header returns the header's rows for h (without fzf's gutter).
func Header(h HeaderState) []string {
	width := h.Cols - gutter - 1
	if width < 1 {
		width = 1
	}
	pos, loaded := Position(h), Loaded(h)
	var rows []string
	switch ClassOf(h.Cols) {
	case Wide:
		left := Title + "  " + pos + "  " + loaded
		radio := Radio(h.All, width)
		pad := width - runewidth.StringWidth(left) - runewidth.StringWidth(radio)
		if pad < 2 {
			pad = 2
		}
		rows = []string{left + strings.Repeat(" ", pad) + radio, h.Hint}
	case Medium:
		rows = []string{Title + "  " + pos + "  " + loaded, Radio(h.All, width)}
	default:
		rows = []string{Title + "  " + pos, loaded, Radio(h.All, width)}
	}
	for i, r := range rows {
		rows[i] = runewidth.Truncate(r, width, "…")
	}
	return rows
}

// Hint is the filter hint of the wide header, for the keys in use.
func Hint(deleteKey, resumeKey string) string {
	return "type to filter · enter pick · " + resumeKey + " resume cmd · tab scope · " + deleteKey + " delete · esc quit"
}
