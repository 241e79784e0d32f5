package picker

import (
	"slices"
	"strconv"
	"strings"
)

// armedIgnore is every key the armed pass ignores: fzf's default bindings
// and the selector's own keys (y, n and Esc decide; typed characters are
// dropped because the armed pass has no search box).
var armedIgnore = []string{
	"ctrl-a", "ctrl-b", "ctrl-c", "ctrl-d", "ctrl-e", "ctrl-f", "ctrl-g", "ctrl-h", "ctrl-j", "ctrl-k",
	"ctrl-l", "ctrl-n", "ctrl-o", "ctrl-p", "ctrl-q", "ctrl-r", "ctrl-s", "ctrl-t", "ctrl-u", "ctrl-v",
	"ctrl-w", "ctrl-x", "ctrl-y", "ctrl-z", "ctrl-/", "ctrl-space", "ctrl-delete",
	"alt-/", "alt-b", "alt-f", "alt-d", "alt-bs", "alt-enter", "alt-up", "alt-down",
	"bspace", "tab", "btab", "enter", "up", "down", "left", "right", "home", "end", "del", "insert",
	"pgup", "pgdn", "shift-up", "shift-down", "shift-left", "shift-right", "shift-delete",
	"f1", "f2", "f3", "f4", "f5", "f6", "f7", "f8", "f9", "f10", "f11", "f12",
}

func cb(r *run, s string) string { return strconv.Itoa(r.n) + " " + s }

func (p *picker) commonArgs(r *run, header []string) []string {
	sort := "--sort"
	p.mu.Lock()
	noSort := p.noSort
	r.footerSent, r.windowSent = p.footer(r), p.previewWindow()
	footer, window := r.footerSent, r.windowSent
	p.mu.Unlock()
	if noSort {
		sort = "--no-sort" // ctrl-r turned sorting off: every pass follows
	}
	return []string{
		sort, "--height=" + strconv.Itoa(height), "--layout=reverse", "--header-first", "--no-separator",
		"--info=hidden", "--no-tmux", "--with-shell=" + p.exe + " " + CallbackFlag,
		"--scheme=history", "--no-multi", "--ellipsis=…", "--prompt=> ",
		// Each item is a column, a tab, the prompt (see item).
		"--delimiter=\t", "--nth=2..", "--tabstop=1", "--color=fg:dim,nth:regular",
		"--preview=" + cb(r, "preview {n}"),
		"--preview-window=" + window,
		"--header=" + strings.Join(header, "\n"),
		"--footer=" + row(footer), "--footer-border=none",
		"--bind=resize:transform(" + cb(r, "resize") + ")",
	}
}

// The keys that change the order and the agent filter.
const (
	orderKey = "ctrl-t"
	agentKey = "ctrl-x"
)

// status is the header's order and filters: the order (relevance while
// query is typed and sorting is on), the agent filter, the others.
func (p *picker) status(query string) string {
	words := []string{"newest first"}
	switch {
	case query != "" && !p.noSort:
		words[0] = "relevance"
	case p.frecent:
		words[0] = "most used"
	}
	if len(p.src) > 0 {
		words = append(words, strings.Join(p.src, ","))
	}
	for _, f := range p.cfg.Filters {
		words = append(words, row(f)) // typed by the user, shown safely all the same
	}
	return strings.Join(words, " · ")
}

func (p *picker) normalArgs(r *run, query string) []string {
	p.mu.Lock()
	h := header(headerState{Cols: p.cols, Loading: true, All: r.list.all, Repo: p.cfg.Repo, Status: p.status(query)})
	p.mu.Unlock()
	args := append(p.commonArgs(r, h), "--query="+query,
		"--bind=result:bg-transform("+cb(r, "result")+")", // never holds up drawing the list
		"--bind=load:bg-transform("+cb(r, "load")+")+transform("+cb(r, "reload")+")",
		"--bind=ctrl-r:toggle-sort+transform("+cb(r, "sort")+")",
		"--bind=change:first", // editing the query selects the first match
	)
	// Each key's callback; the user's keys last, so that they win.
	keys := [][2]string{{"enter", "pick {n}"}, {"double-click", "pick {n}"}, {"tab", "scope"}, {"btab", "scope"},
		{"ctrl-s", "scope"}, {orderKey, "order"}, {agentKey, "agent"}, {"home", "home"}, {"end", "end"},
		{"focus", "focus"}, {p.cfg.ResumeKey, "resume {n}"}, {p.toggleKey(), "toggle"}}
	for _, k := range p.cfg.DeleteKeys {
		keys = append(keys, [2]string{k, "arm {n}"})
	}
	for _, k := range keys {
		if k[0] != "" {
			args = append(args, "--bind="+k[0]+":transform("+cb(r, k[1])+")")
		}
	}
	return args
}

func (p *picker) armedArgs(r *run) []string {
	p.mu.Lock()
	h := p.armedHeader(r, p.cols)
	p.mu.Unlock()
	args := p.commonArgs(r, h)
	args = append(args,
		"--query="+r.arm.query, // filters the list as it was; the box is hidden
		"--no-input", "--no-mouse", "--highlight-line",
		// Draw only once the items are in and pos(N) has run, so the red
		// row is the armed one from the first frame.
		"--sync",
		"--color=current-bg:red,current-fg:bright-white,current-hl:bright-white",
		"--bind=y:transform("+cb(r, "yes")+")",
		"--bind=n:transform("+cb(r, "no")+")",
		"--bind=esc:transform("+cb(r, "no")+")",
		"--bind=load:pos("+strconv.Itoa(r.arm.pos)+")+transform("+cb(r, "armcheck {n}")+")",
	)
	for _, k := range slices.Concat(armedIgnore, []string{p.cfg.ResumeKey}, p.cfg.DeleteKeys) {
		if k != "" && k != "y" && k != "n" && k != "esc" {
			args = append(args, "--bind="+k+":ignore")
		}
	}
	return args
}

// armedHeader is the header of the armed pass: the normal header as it was
// when the delete was armed, then the query where the hidden search box
// was, so the list does not move.
func (p *picker) armedHeader(r *run, cols int) []string {
	h := header(headerState{Cols: cols, Pos: r.arm.pos, Matches: r.arm.match, Loaded: r.arm.total, All: r.list.all, Repo: p.cfg.Repo, Status: p.status(r.arm.query)})
	return append(h, "> "+row(r.arm.query))
}
