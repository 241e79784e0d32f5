package history

import (
	"cmp"
	"math"
	"slices"
	"time"

	"hist/lib/record"
)

// Filter selects the copies a stream reads (docs/hist-pick.md, "Filters");
// a prompt shows when one of its copies is selected, at the newest of
// them. The zero Filter selects every copy.
type Filter struct {
	Src     []string // agents (a copy without src counts as NoSrc)
	Since   int64    // copies at or after this time (ms; 0: no bound)
	Until   int64    // copies before this time (ms; 0: no bound)
	Session string   // the agent session
	Machine string   // the machine id in the store file's name
}

// NoSrc is the agent a copy without src counts as: captures without an
// agent come from pi's extension (before it named the session) or from
// hist-capture run by hand, in pi's own history.
const NoSrc = "pi"

// AgentOf is the agent of a copy's src.
func AgentOf(src string) string {
	if src == "" {
		return NoSrc
	}
	return src
}

// keep reports whether the filter selects the copy v.
func (f *Filter) keep(v *record.View) bool {
	switch {
	case f.Since != 0 && v.TS < f.Since, f.Until != 0 && v.TS >= f.Until:
		return false
	case f.Session != "" && string(v.Session) != f.Session:
		return false
	case len(f.Src) > 0:
		for _, s := range f.Src {
			if string(v.Src) == s || len(v.Src) == 0 && s == NoSrc {
				return true
			}
		}
		return false
	}
	return true
}

// useGap is how close copies of a prompt are to be one use: a live
// capture and the transcript's copy of the same send, or a line a rewrite
// left in two files, are seconds apart at most.
const useGap = 5000

// halfLife is frecency's half-life: a use a week old counts half as much
// as one now (docs/hist-pick.md, "Most used").
const halfLife = 7 * 24 * time.Hour

// Tally counts the uses of the prompts a stream sends (Options.Uses), by
// their place in the stream: how many, and their frecency at Now.
type Tally struct {
	Now   int64 // Unix ms
	Uses  []int32
	Score []float64
}

// Add counts a use at ts of the n-th prompt sent: 2^(-age/halfLife), a
// use from the future counting as now.
func (t *Tally) Add(n int, ts int64) {
	for len(t.Uses) <= n {
		t.Uses, t.Score = append(t.Uses, 0), append(t.Score, 0)
	}
	t.Uses[n]++
	t.Score[n] += math.Exp2(-float64(max(0, t.Now-ts)) / float64(halfLife.Milliseconds()))
}

// Ranked returns the indexes of the n prompts tallied, most used first
// (frecency), of equal scores the one sent first (the newest).
func (t *Tally) Ranked(n int) []int32 {
	order := make([]int32, n)
	for i := range order {
		order[i] = int32(i)
	}
	for len(t.Score) < n {
		t.Score = append(t.Score, 0)
	}
	slices.SortStableFunc(order, func(a, b int32) int { return cmp.Compare(t.Score[b], t.Score[a]) })
	return order
}

// On reports whether the filter narrows anything.
func (f *Filter) On() bool {
	return len(f.Src) > 0 || f.Since != 0 || f.Until != 0 || f.Session != "" || f.Machine != ""
}
