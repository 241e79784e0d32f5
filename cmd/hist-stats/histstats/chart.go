package histstats

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/mattn/go-runewidth"

	"hist/lib/store"
	"hist/lib/termsafe"
	"hist/lib/words"
)

// width is the charts' width: they fit in 80 columns.
const width = 79

// eighths are the blocks of a bar's end, from 1/8 to a whole one.
var (
	across = []rune("▏▎▍▌▋▊▉█")
	up     = []rune("▁▂▃▄▅▆▇█")
)

// painter writes the charts, in colour on a terminal.
type painter struct {
	w     io.Writer
	color bool
}

func (p painter) paint(code, s string) string {
	if !p.color || s == "" {
		return s
	}
	return "\x1b[" + code + "m" + s + "\x1b[0m"
}

func (p painter) title(s string) { fmt.Fprintf(p.w, "\n%s\n", p.paint("1", s)) }

// bar is n of top as a horizontal bar of at most cols columns, in eighths.
func bar(n, top, cols int) string {
	if top == 0 || n == 0 {
		return ""
	}
	e := max(n*cols*8/top, 1)
	b := strings.Repeat("█", e/8)
	if e%8 > 0 {
		b += string(across[e%8-1])
	}
	return b
}

// line is text from a prompt or a folder name as one safe line of at most
// cols columns: newlines as ↵, tabs as spaces, control characters as
// control pictures.
func line(text string, cols int) string {
	return runewidth.Truncate(strings.ReplaceAll(termsafe.Line(text), "\t", " "), cols, "…")
}

// draw writes the charts of s: the title, then per day, per agent, per
// project, by hour, and the most reused prompts.
func (s *stats) draw(w io.Writer, reg store.Registry, scope string, color bool) {
	p := painter{w, color}
	fmt.Fprintf(w, "%s  %s typed, %s distinct, in %s\n", p.paint("1", "Prompts"), words.Count(s.total), words.Count(len(s.texts)), line(scope, 40))
	if s.total == 0 {
		return
	}
	s.drawDays(p)
	p.title("Per agent")
	s.drawBars(p, byCount(s.agents), func(a string) string { return a })
	p.title("Per project")
	s.drawBars(p, byCount(s.projects), func(h string) string {
		if h == "" {
			return "(history-global.jsonl)"
		}
		return reg.Label(h)
	})
	s.drawHours(p)
	p.title("Most reused")
	rs := s.reused()
	if len(rs) == 0 {
		fmt.Fprintln(w, "  (no prompt typed twice)")
	}
	for _, i := range rs {
		fmt.Fprintf(w, "  %s  %s\n", p.paint("36", fmt.Sprintf("%5s", "×"+strconv.Itoa(int(s.tally.Uses[i])))), line(s.texts[i], width-9))
	}
}

// drawBars draws the ten largest counts as bars, labelled by name.
func (s *stats) drawBars(p painter, cs []counted, name func(string) string) {
	labels, lw := make([]string, min(10, len(cs))), 0
	for i := range labels {
		// A long folder keeps its end, where its name is.
		l := line(name(cs[i].name), 1<<20)
		if runewidth.StringWidth(l) > 32 {
			l = "…" + runewidth.TruncateLeft(l, runewidth.StringWidth(l)-31, "")
		}
		labels[i], lw = l, max(lw, runewidth.StringWidth(l))
	}
	for i, l := range labels {
		fmt.Fprintf(p.w, "  %s  %s %s\n", runewidth.FillRight(l, lw), p.paint("36", bar(cs[i].n, cs[0].n, width-lw-12)), words.Count(cs[i].n))
	}
	if len(cs) > 10 {
		fmt.Fprintf(p.w, "  %s\n", p.paint("2", fmt.Sprintf("and %d more", len(cs)-10)))
	}
}

// drawDays draws the uses per day as vertical bars, 6 rows high: a day
// two columns wide, or, over more than 36 days, each column some days.
func (s *stats) drawDays(p painter) {
	per := (len(s.days) + 71) / 72 // days a column
	cols, step := (len(s.days)+per-1)/per, 1
	if cols <= 36 {
		step = 2
	}
	sums, top := make([]int, cols), 0
	for i, n := range s.days {
		sums[i/per] += n
		top = max(top, sums[i/per])
	}
	last := s.to.AddDate(0, 0, -1)
	what := "day"
	if per > 1 {
		what = strconv.Itoa(per) + " days"
	}
	p.title(fmt.Sprintf("Per %s, %s to %s", what, s.from.Format(time.DateOnly), last.Format(time.DateOnly)))
	if top == 0 {
		fmt.Fprintln(p.w, "  (none in these days)")
		return
	}
	const rows = 6
	for r := rows - 1; r >= 0; r-- {
		var b strings.Builder
		for _, n := range sums {
			e := n*rows*8/max(top, 1) - r*8 // eighths of this row filled
			switch {
			case e >= 8:
				b.WriteRune('█')
			case e > 0:
				b.WriteRune(up[e-1])
			case r == 0 && n > 0:
				b.WriteRune(up[0])
			default:
				b.WriteByte(' ')
			}
			b.WriteString(strings.Repeat(" ", step-1))
		}
		label := ""
		if r == rows-1 {
			label = words.Count(top)
		} else if r == 0 {
			label = "0"
		}
		fmt.Fprintf(p.w, "%7s %s\n", p.paint("2", label), p.paint("36", strings.TrimRight(b.String(), " ")))
	}
	axis := s.from.Format("01-02")
	if gap := (cols-1)*step + 1 - 10; gap > 0 {
		axis += strings.Repeat(" ", gap) + last.Format("01-02")
	}
	fmt.Fprintf(p.w, "        %s\n", p.paint("2", axis))
}

// drawHours draws the uses by hour of day, two columns an hour.
func (s *stats) drawHours(p painter) {
	top, at := 0, 0
	for h, n := range s.hours {
		if n > top {
			top, at = n, h
		}
	}
	p.title(fmt.Sprintf("By hour of day (most at %dh)", at))
	var b strings.Builder
	for _, n := range s.hours {
		e := n * 8 / max(top, 1)
		switch {
		case e > 0:
			b.WriteString(strings.Repeat(string(up[e-1]), 2))
		case n > 0:
			b.WriteString("▁▁")
		default:
			b.WriteString("  ")
		}
	}
	fmt.Fprintf(p.w, "  %s\n", p.paint("36", b.String()))
	fmt.Fprintf(p.w, "  %s\n", p.paint("2", fmt.Sprintf("%-12s%-12s%-12s%-10s%s", "0h", "6h", "12h", "18h", "23h")))
}
