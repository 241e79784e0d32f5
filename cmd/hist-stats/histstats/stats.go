package histstats

import (
	"cmp"
	"maps"
	"slices"
	"time"

	"hist/lib/history"
	"hist/lib/store"
)

// stats are the counts of a scope's uses of prompts (history.Options.Uses).
type stats struct {
	from, to time.Time // the days charted, [from, to), local midnights
	days     []int     // uses per day from from
	agents   map[string]int
	projects map[string]int // by project hash ("" for history-global.jsonl)
	hours    [24]int
	total    int
	texts    []string // the prompts, in the order sent
	tally    history.Tally
}

// newStats counts the uses that f selects, charting the days of the last
// 30 at now, or from f's --since to its --until (or now).
func newStats(f history.Filter, now time.Time) *stats {
	s := &stats{agents: map[string]int{}, projects: map[string]int{}, tally: history.Tally{Now: now.UnixMilli()}}
	s.to = midnight(now).AddDate(0, 0, 1)
	if f.Until != 0 {
		s.to = midnight(time.UnixMilli(f.Until-1)).AddDate(0, 0, 1)
	}
	s.from = s.to.AddDate(0, 0, -30)
	if f.Since != 0 {
		s.from = midnight(time.UnixMilli(f.Since))
	}
	s.days = make([]int, max(1, s.day(s.to)))
	return s
}

func midnight(t time.Time) time.Time {
	return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, t.Location())
}

// day is the index of t's day from s.from (a day of 23 or 25 hours is
// one all the same).
func (s *stats) day(t time.Time) int {
	return int((midnight(t).Sub(s.from) + 12*time.Hour) / (24 * time.Hour))
}

// use counts one use of the n-th prompt.
func (s *stats) use(n int, e history.Entry) {
	s.tally.Add(n, e.TS)
	s.total++
	s.agents[history.AgentOf(e.Src)]++
	s.projects[e.Project]++
	t := time.UnixMilli(e.TS)
	s.hours[t.Hour()]++
	if !t.Before(s.from) && t.Before(s.to) {
		s.days[s.day(t)]++
	}
}

// counted is a name and its count.
type counted struct {
	name string
	n    int
}

// byCount is m's entries, the largest count first (of equal counts, by
// name).
func byCount(m map[string]int) []counted {
	var out []counted
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out = append(out, counted{k, m[k]})
	}
	slices.SortStableFunc(out, func(a, b counted) int { return cmp.Compare(b.n, a.n) })
	return out
}

// reused is the 10 prompts used most, more than once each: their texts'
// indexes, the most used first (of equal uses, the newest).
func (s *stats) reused() []int {
	var out []int
	for i, u := range s.tally.Uses {
		if u > 1 {
			out = append(out, i)
		}
	}
	slices.SortStableFunc(out, func(a, b int) int { return cmp.Compare(s.tally.Uses[b], s.tally.Uses[a]) })
	return out[:min(10, len(out))]
}

// jsonStats is the --json report: days and agents by name (JSON objects
// list their keys in order), projects as a list, the largest first.
type jsonStats struct {
	Prompts  int            `json:"prompts"`
	Distinct int            `json:"distinct"`
	Days     map[string]int `json:"days"`
	Agents   map[string]int `json:"agents"`
	Projects []jsonProject  `json:"projects"`
	Hours    [24]int        `json:"hours"`
	Reused   []jsonReused   `json:"reused"`
}

type jsonProject struct {
	Project string `json:"project"`
	Cwd     string `json:"cwd"`
	Prompts int    `json:"prompts"`
}

type jsonReused struct {
	Text string `json:"text"`
	Uses int    `json:"uses"`
}

func (s *stats) json(reg store.Registry) jsonStats {
	j := jsonStats{Prompts: s.total, Distinct: len(s.texts), Days: map[string]int{}, Agents: s.agents, Hours: s.hours,
		Projects: []jsonProject{}, Reused: []jsonReused{}}
	for i, n := range s.days {
		j.Days[s.from.AddDate(0, 0, i).Format(time.DateOnly)] = n
	}
	for _, c := range byCount(s.projects) {
		j.Projects = append(j.Projects, jsonProject{c.name, reg[c.name], c.n})
	}
	for _, i := range s.reused() {
		j.Reused = append(j.Reused, jsonReused{s.texts[i], int(s.tally.Uses[i])})
	}
	return j
}
