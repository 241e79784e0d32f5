package picker

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/mattn/go-runewidth"

	"hist/lib/agent"
	"hist/lib/history"
	"hist/lib/termsafe"
)

// row is a prompt as one list row: each newline shows as \n (as zsh's
// history list shows it), other control characters, bidi and zero-width
// characters visibly (termsafe),
// so a row is one line and can never drive the terminal. Tabs stay (fzf
// expands them). The newline's mark is ASCII because fzf keeps a row that
// is all ASCII at a byte a character, and any other at four.
func row(text string) string { return termsafe.LineSep(text, `\n`) }

// item is a prompt as one list item: a dim column, 17 wide, with its
// age, its agent and, when it was used more than once, its use count
// ("×5"), then a tab, then its row. fzf (--delimiter, --nth=2..) searches
// only what follows the tab, shows the tab one column wide (--tabstop=1)
// and the column dim (--color=fg:dim,nth:regular).
func item(e history.Entry, uses int, now time.Time) string {
	name := history.AgentOf(e.Src)
	if _, ok := agent.Lookup(name); !ok {
		name = "other"
	}
	count := ""
	if uses > 1 {
		count = "×" + strconv.Itoa(uses)
	}
	return fmt.Sprintf("%4s %-8s%4s\t", age(e.TS, now), name, count) + row(e.Text)
}

// age says how long before now the time ts (Unix ms) was, in at most four
// columns: 3m, 5h, 12d, 5mo, 2y ("now" under a minute, or in the future).
func age(ts int64, now time.Time) string {
	d := now.Sub(time.UnixMilli(ts))
	day := 24 * time.Hour
	switch {
	case d < time.Minute:
		return "now"
	case d < time.Hour:
		return strconv.Itoa(int(d/time.Minute)) + "m"
	case d < day:
		return strconv.Itoa(int(d/time.Hour)) + "h"
	case d < 60*day:
		return strconv.Itoa(int(d/day)) + "d"
	case d < 365*day:
		return strconv.Itoa(int(d/(30*day))) + "mo"
	}
	return strconv.Itoa(int(d/(365*day))) + "y"
}

// expandTabs replaces each tab of text with the spaces to the next
// multiple of 8 columns: fzf draws a tab one column wide (--tabstop=1, for
// the list's column), so the preview expands its own.
func expandTabs(text string) string {
	if !strings.Contains(text, "\t") {
		return text
	}
	var b strings.Builder
	col := 0
	for _, r := range text {
		switch r {
		case '\t':
			n := 8 - col%8
			b.WriteString(strings.Repeat(" ", n))
			col += n
			continue
		}
		b.WriteRune(r)
		col += runewidth.RuneWidth(r)
		if r == '\n' {
			col = 0
		}
	}
	return b.String()
}
