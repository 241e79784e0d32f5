package picker

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"hist/lib/history"
	"hist/lib/words"
)

// respond writes the answer to a callback from fzf (see relay.go): the
// items of a reload as they are made (a string of them all would double
// the selector's memory for a moment), else handle's answer.
func (p *picker) respond(req request, w io.Writer) {
	n, verb, arg, err := parseCmd(req.Cmd)
	switch {
	case err != nil:
		io.WriteString(w, "ignore")
	case verb == "items":
		if r := p.current(n); r != nil {
			p.writeItems(r, w)
		}
	default:
		io.WriteString(w, p.handle(req, n, verb, arg))
	}
}

// handle answers callback verb of pass n. For the preview it returns the
// pane's text; otherwise fzf actions, ending with the header.
func (p *picker) handle(req request, n int, verb, arg string) string {
	switch verb {
	case "preview":
		return p.preview(n, arg)
	case "reload":
		// Synchronous (fzf runs the actions of a background transform in
		// a loop iteration that is over, where a reload is lost): the
		// items sent before every use was counted go again.
		if r := p.current(n); r != nil && r.partial.Swap(false) {
			return "reload-sync(" + cb(r, "items") + ")"
		}
		return "ignore"
	case "result", "load":
		// fzf runs these in the background, so that drawing the list never
		// waits for them, and applies the answer later, after other
		// events' answers maybe: it only asks for a synchronous callback,
		// which then sees fzf's state as it is.
		if verb == "load" && req.Total == 0 {
			p.countOthers(n)
		}
		if verb == "result" && p.throttled(n) {
			return "ignore"
		}
		return "transform(" + strconv.Itoa(n) + " " + verb + "-now)"
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	r := p.cur
	if r == nil || r.n != n {
		return "ignore" // a callback from a pass that is over
	}
	// Events run in the background, so answers can arrive out of order:
	// the header always shows the newest state fzf reported.
	if req.Time >= r.latest.Time {
		r.latest = req
		if req.Cols > 0 {
			p.cols = req.Cols
		}
		if req.Lines > 0 {
			p.lines = req.Lines
		}
	}
	if r.armed {
		return p.handleArmed(r, req, verb, arg)
	}
	return p.handleNormal(r, req, verb, arg)
}

// handleNormal answers a callback of the normal pass. p.mu is held.
func (p *picker) handleNormal(r *run, req request, verb, arg string) string {
	var acts []string
	switch verb {
	case "result-now":
		r.resultAt = time.Now()
	case "load-now":
		acts = p.loaded(r, req)
	case "home":
		r.end = false
		if req.Query != "" {
			return "beginning-of-line+first" // an editing key: back to the first match
		}
		acts = append(acts, "first")
	case "end":
		if req.Query != "" {
			r.end = false
			return "end-of-line+first"
		}
		if r.loaded {
			acts = append(acts, "last")
		} else {
			r.end = true
			r.footer = "Loading every prompt…"
		}
	case "pick", "resume", "arm":
		if r.dec = p.decide(r, req, verb, arg); r.dec != nil {
			return "accept"
		}
	case "scope", "order", "agent":
		r.dec = &decision{verb: verb, query: req.Query}
		return "accept"
	case "sort":
		p.noSort = !p.noSort
	case "toggle":
		p.togglePreview()
	}
	// After a delete, select the same position again: once fzf holds the
	// whole list (the load event), or, with an empty query (where the
	// list is in input order), as soon as the matches reach that position.
	if r.restorePos > 0 && req.Match > 0 && (r.loaded || req.Query == "" && req.Match >= r.restorePos && req.Total >= r.restoreTotal) {
		acts = append(acts, "pos("+strconv.Itoa(min(r.restorePos, req.Match))+")")
		r.restorePos = 0
	}
	return p.reply(r, acts, p.normalHeader(r))
}

// loaded handles fzf's load event: the list is all in. It returns the
// actions due (End pressed while loading selects the oldest), and sets
// the footer: what could not be read (the rest is listed), or an empty
// scope's hint. p.mu is held.
func (p *picker) loaded(r *run, req request) []string {
	var acts []string
	r.loaded = true
	if r.end {
		r.end = false
		if req.Query == "" {
			acts = append(acts, "last")
		}
		r.footer = p.notice
	}
	_, res := r.list.status()
	switch {
	case res != nil && len(res.Failed) > 0 && r.footer == "":
		r.footer = unreadable(res.Failed)
	case req.Total == 0 && r.footer == "":
		r.footer = emptyHint
		switch {
		case len(p.src) > 0 || len(p.cfg.Filters) > 0: // a filter hides prompts
			r.footer = "No prompt here matches the filters."
		case r.others > 0:
			r.footer = othersHint(r.others, p.cfg.Repo)
		}
	}
	return acts
}

// unreadable is the footer when some of the scope could not be read: the
// chmod that fixes the first failure when there is one, else the failure.
func unreadable(failed []history.FileError) string {
	f, more := failed[0], ""
	if len(failed) > 1 {
		more = fmt.Sprintf(" (and %d more)", len(failed)-1)
	}
	if fix := f.Fix(); fix != "" {
		return fmt.Sprintf("Some prompts are not listed (%s): %s%s", words.Describe(f.Err), fix, more)
	}
	return fmt.Sprintf("Some prompts are not listed: could not read %v%s", f, more)
}

// decide is the decision of a pick, resume or arm key on fzf's item arg;
// nil when there is none (no selection, or no session to resume, which
// the footer then says). p.mu is held.
func (p *picker) decide(r *run, req request, verb, arg string) *decision {
	id, ok := r.lookup(arg)
	if !ok {
		return nil // no selection (an empty list)
	}
	if verb == "resume" {
		e, _ := r.list.at(id)
		if _, err := ResumeCommand(e.Src, e.Session, "", p.cfg.Shell); err != nil {
			s := err.Error() // as a sentence, for the footer
			r.footer = strings.ToUpper(s[:1]) + s[1:] + "."
			return nil
		}
	}
	return &decision{verb: verb, id: id, pos: req.Pos, match: req.Match, total: req.Total, query: req.Query}
}

// resultEvery is how often at most the header follows fzf's result
// events while the list loads: each answer is a process fzf starts, and
// a million prompts load in hundreds of results. The load event, and
// every result once loaded, update it at once.
const resultEvery = 500 * time.Millisecond

// throttled reports whether run n's result event can go unanswered: the
// list is still loading and the header was updated less than resultEvery
// ago.
func (p *picker) throttled(n int) bool {
	r := p.current(n)
	p.mu.Lock()
	defer p.mu.Unlock()
	return r != nil && !r.armed && !r.loaded && time.Since(r.resultAt) < resultEvery
}

func (p *picker) normalHeader(r *run) []string {
	req := r.latest
	done, _ := r.list.status()
	return header(headerState{
		Cols: p.cols, Pos: req.Pos, Matches: req.Match, Loaded: req.Total,
		Loading: !(done && r.loaded), All: r.list.all, Repo: p.cfg.Repo, Status: p.status(req.Query),
	})
}

func (p *picker) handleArmed(r *run, req request, verb, arg string) string {
	switch verb {
	case "yes", "no":
		r.dec = &decision{verb: verb}
		return "accept"
	case "armcheck":
		if id, ok := r.lookup(arg); !ok || id != r.arm.id {
			r.dec = &decision{verb: "mismatch"}
			return "accept"
		}
	}
	return p.reply(r, nil, p.armedHeader(r, p.cols))
}

// reply joins actions, a footer change when due, and the header (last: its
// argument runs to the end of the reply).
func (p *picker) reply(r *run, acts []string, header []string) string {
	if f := p.footer(r); f != r.footerSent {
		r.footerSent = f
		acts = append(acts, "change-footer"+wrapArg(row(f)))
	}
	if w := p.previewWindow(); w != r.windowSent {
		acts = append(acts, "change-preview-window("+w+")")
		r.windowSent = w
	}
	acts = append(acts, "change-header:"+strings.Join(header, "\n"))
	return strings.Join(acts, "+")
}

// wrapArg encloses s in the first pair of fzf's action delimiters that s
// does not contain.
func wrapArg(s string) string {
	for _, d := range []string{"()", "[]", "{}", "<>", "~~", "!!", "@@", "##", "%%", "^^", "&&", "**", ";;", "||"} {
		if !strings.ContainsAny(s, d) {
			return d[:1] + s + d[1:]
		}
	}
	return "(" + strings.NewReplacer("(", "[", ")", "]").Replace(s) + ")"
}

// current is the pass n when it is the current one.
func (p *picker) current(n int) *run {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cur == nil || p.cur.n != n {
		return nil
	}
	return p.cur
}

// preview renders the preview pane for fzf's item index arg.
func (p *picker) preview(n int, arg string) string {
	if r := p.current(n); r != nil {
		if id, ok := r.lookup(arg); ok {
			if e, ok := r.list.at(id); ok {
				return preview(e, p.reg[e.Project], p.cfg.ResumeKey, p.cfg.Shell, p.cfg.Now())
			}
		}
	}
	return ""
}
