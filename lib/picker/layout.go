package picker

import (
	"slices"
	"strconv"

	"hist/lib/history"
	"hist/lib/store"
	"hist/lib/words"
)

// The preview pane's layout: docs/hist-pick.md ("Layout").

// previewKey toggles the preview pane.
const previewKey = "ctrl-p"

// minPreviewRows is the smallest preview pane shown unasked, its border
// included: the time, the project and two lines of the prompt.
const minPreviewRows = 5

type previewMode int

const (
	previewAuto   previewMode = iota // shown when it gets minPreviewRows
	previewShown                     // the preview key showed it
	previewHidden                    // the preview key hid it
)

// previewSize is the preview pane's height, its border included, in a
// selector lines rows tall, and whether it shows. The header, the search
// box, the list and the footer take 14 rows at every width: 2+1+10+1, or
// 3+1+9+1 on a narrow terminal.
func previewSize(lines int, mode previewMode) (rows int, shown bool) {
	rows = min(previewRows, lines-14)
	shown = mode == previewShown || mode == previewAuto && rows >= minPreviewRows
	if rows < minPreviewRows {
		// Shown on request on a short terminal: half of it.
		rows = max(minPreviewRows, lines/2)
	}
	return rows, shown
}

// previewWindow is fzf's --preview-window now. p.mu is held.
func (p *picker) previewWindow() string {
	rows, shown := previewSize(p.lines, p.previewMode)
	w := "down," + strconv.Itoa(rows-1) + ",wrap,border-top"
	if !shown {
		w += ",hidden"
	}
	return w
}

// togglePreview hides the preview when it shows, and shows it otherwise.
// A press that gives what the terminal's size gives goes back to that
// rule, so the preview follows later resizes again. p.mu is held.
func (p *picker) togglePreview() {
	_, shown := previewSize(p.lines, p.previewMode)
	_, auto := previewSize(p.lines, previewAuto)
	switch {
	case !shown == auto:
		p.previewMode = previewAuto
	case shown:
		p.previewMode = previewHidden
	default:
		p.previewMode = previewShown
	}
}

// toggleKey is the preview key, or "" when the resume or a delete key
// took it.
func (p *picker) toggleKey() string {
	if p.cfg.ResumeKey == previewKey || slices.Contains(p.cfg.DeleteKeys, previewKey) {
		return ""
	}
	return previewKey
}

// footer is what the footer row shows: the run's notice or question, or
// else the key hint; never empty, so the row stays and the list never
// moves. p.mu is held.
func (p *picker) footer(r *run) string {
	if r.footer != "" {
		return r.footer
	}
	return hint(p.cfg.DeleteKeys, p.cfg.ResumeKey, p.toggleKey(), max(1, p.cols-gutter-1))
}

// countOthers counts, for a project scope that loaded empty, the prompts
// of All projects, for the footer's hint (othersHint). It runs in fzf's
// background load callback, so the selector never waits for the read.
func (p *picker) countOthers(n int) {
	r := p.current(n)
	if r == nil || r.armed || r.list.all {
		return
	}
	files, err := p.cfg.Store.Files(store.Scope{All: true})
	if err != nil {
		return
	}
	c := history.Read(files, p.cfg.Hidden).Len()
	p.mu.Lock()
	r.others = c
	p.mu.Unlock()
}

// othersHint is the footer of an empty project (a repository when repo
// is set, else a folder) when All projects has n prompts: how many, and
// the key that switches to them.
func othersHint(n int, repo bool) string {
	prompts, where := "prompts", "folder"
	if n == 1 {
		prompts = "prompt"
	}
	if repo {
		where = "repository"
	}
	return "No prompts in this " + where + " yet: tab shows All projects (" + words.Count(n) + " " + prompts + ")."
}
