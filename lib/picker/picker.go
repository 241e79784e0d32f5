// Package picker is hist-pick's selector: fzf (github.com/junegunn/fzf/src,
// embedded as a library) over one scope's prompts, streamed newest first
// from the store as they are read.
//
// Each screen is one fzf.Run: the normal pass (search and pick), and the
// armed pass of a delete (no search box, the row in red, y/n). Keys that
// change what is listed (the scope radio, a delete) end the pass with a
// decision and the next pass starts with the same query. Everything fzf
// runs goes through a callback to this process (see relay.go): the header
// (recomputed on every result, focus move, load and resize), the preview,
// Home/End, and the decisions.
package picker

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	fzf "github.com/junegunn/fzf/src"
	"golang.org/x/term"

	"hist/lib/agent"
	"hist/lib/deletion"
	"hist/lib/history"
	"hist/lib/shellquote"
	"hist/lib/store"
	"hist/lib/tombstone"
)

// height is the selector's height in rows.
const height = 30

// previewRows is the preview pane's height, its top border included, when
// the terminal has room for it (see layout.go).
const previewRows = 16

// armedQuestion is the footer of an armed delete.
const armedQuestion = "Delete this prompt from history (y/n)? Prompt stays in session log"

// emptyHint is the footer of an empty scope.
const emptyHint = "No prompts yet: pi captures them while capture is on; hist-seed imports past ones from your agents' sessions."

// ErrCancelled is Run's error when the user left with Esc or ctrl-c.
var ErrCancelled = errors.New("cancelled")

// Config is one selector session.
type Config struct {
	Store   store.Store
	Hidden  *tombstone.Set // loaded and trusted; nil hides nothing
	Project string         // the current project's hash
	Also    []string       // the current project's other folders (store.Scope)
	Repo    bool           // the current project is a git repository
	All     bool           // start on "All projects"
	Filter  history.Filter // the prompts to show (the agent key changes Src)
	Filters []string       // Filter's other filters in words, for the header
	Query   string
	// ResumeKey is an fzf key name (ctrl-o), or "": no resume key, for a
	// caller that has no shell to run the command in.
	ResumeKey  string
	Shell      shellquote.Shell // the shell the resume command is quoted for
	DeleteKeys []string         // fzf key names, e.g. ctrl-delete, alt-d
	Now        func() time.Time
}

// Choice is what the user chose.
type Choice struct {
	history.Entry
	Cwd    string // the project's folder from registry.json
	Resume string // set when the resume key chose: the command to print
}

// decision is what ends a pass: the verb of the key's callback (pick,
// resume, scope, order, agent, arm; in the armed pass yes, no, or
// mismatch), the item chosen and where it was, and the query.
type decision struct {
	verb  string
	id    int32
	pos   int
	match int
	total int
	query string
}

// run is one fzf.Run.
type run struct {
	n      int
	armed  bool // the armed pass of a delete
	list   *list
	idsMu  sync.Mutex
	ids    []int32 // fzf's item index -> entry index
	loaded bool    // fzf's load event came
	end    bool    // End was pressed before the load: select the oldest at the load
	// partial: items were sent before their uses were all counted; once
	// loaded, they are sent again (reload).
	partial atomic.Bool
	dec     *decision

	restorePos, restoreTotal int      // normal: select this position once loaded this far
	arm                      decision // armed: the delete armed (its query is shown)
	footer                   string
	footerSent               string    // what the footer row shows
	windowSent               string    // the preview layout fzf has
	others                   int       // an empty project: All projects' prompts
	latest                   request   // the newest state fzf reported
	resultAt                 time.Time // when a result event last updated the header
}

func (r *run) lookup(arg string) (int32, bool) {
	n, err := strconv.Atoi(arg)
	if err != nil || n < 0 {
		return 0, false
	}
	r.idsMu.Lock()
	defer r.idsMu.Unlock()
	if n >= len(r.ids) {
		return 0, false
	}
	return r.ids[n], true
}

type picker struct {
	cfg Config
	reg store.Registry
	exe string

	mu     sync.Mutex
	cur    *run
	runs   int
	cols   int
	lines  int // the selector's height: the terminal's, up to height
	notice string
	noSort bool // ctrl-r turned sorting by relevance off
	// frecent: the order key put the most used first.
	frecent bool
	src     []string        // the agent key's filter (nil: every agent)
	agents  map[string]bool // the agents met in the lists read

	previewMode previewMode // the preview key's choice
}

// Run opens the selector on the terminal and returns the choice.
func Run(cfg Config) (Choice, error) {
	tty, err := os.OpenFile("/dev/tty", os.O_RDWR, 0)
	if err != nil {
		return Choice{}, fmt.Errorf("no terminal to draw the selector on (%v): run hist-pick from a terminal", err)
	}
	cols, lines := 80, height
	if w, h, err := term.GetSize(int(tty.Fd())); err == nil && w > 0 && h > 0 {
		cols, lines = w, min(h, height)
	}
	tty.Close()
	// The store is read from here on, while the rest starts.
	p := &picker{cfg: cfg, cols: cols, lines: lines, src: cfg.Filter.Src, agents: map[string]bool{}}
	all := cfg.All
	l := p.load(all)
	defer func() { l.close() }()
	rl, err := newRelay(p.respond)
	if err != nil {
		return Choice{}, fmt.Errorf("starting the selector's callback socket: %v", err)
	}
	defer rl.close()
	if p.exe, err = callbackExe(rl.dir); err != nil {
		return Choice{}, err
	}
	os.Setenv(relayEnv, rl.sock)
	defer os.Unsetenv(relayEnv)
	p.reg = cfg.Store.LoadRegistry()

	query := cfg.Query
	restorePos, restoreTotal := 0, 0
	for {
		r := p.newRun(false, l)
		r.restorePos, r.restoreTotal = restorePos, restoreTotal
		restorePos, restoreTotal = 0, 0
		frecent := p.frecent
		code, err := p.fzf(p.normalArgs(r, query), func(in chan<- string, quit quitter) { p.feedList(r, l, frecent, in, quit) }, l)
		d := p.finish(r)
		if d == nil {
			if code == fzf.ExitInterrupt || code == fzf.ExitNoMatch && err == nil {
				return Choice{}, ErrCancelled
			}
			if err == nil {
				err = fmt.Errorf("fzf exit %d", code)
			}
			return Choice{}, fmt.Errorf("the selector stopped: %v", err)
		}
		query = d.query
		switch d.verb {
		case "pick", "resume":
			e, ok := l.at(d.id)
			if !ok {
				return Choice{}, errors.New("the chosen prompt was deleted meanwhile: run hist-pick again")
			}
			c := Choice{Entry: e, Cwd: p.reg[e.Project]}
			if d.verb == "resume" {
				if c.Resume, err = ResumeCommand(c.Src, c.Session, c.Cwd, cfg.Shell); err != nil {
					return Choice{}, err // the key's callback checked it
				}
			}
			return c, nil
		case "scope", "agent":
			l.close()
			if d.verb == "scope" {
				all = !all
			} else {
				l.agentsRead(p.agents)
				p.src = nextAgent(p.src, p.agents)
			}
			l = p.load(all)
			p.setNotice("")
		case "order":
			p.frecent = !p.frecent
		case "arm":
			restorePos, restoreTotal = p.armed(l, r, d)
		}
	}
}

func (p *picker) scope(all bool) store.Scope {
	if all {
		return store.Scope{All: true}
	}
	return store.Scope{Project: p.cfg.Project, Also: p.cfg.Also}
}

// load starts loading a scope, with the filters in force.
func (p *picker) load(all bool) *list {
	f := p.cfg.Filter
	f.Src = p.src
	return load(p.cfg.Store, p.scope(all), p.cfg.Hidden, f, p.cfg.Now())
}

// nextAgent is the agent filter after src: every agent, then each agent
// in agent.List's order that met has (the agents of the prompts read),
// then every agent again. A filter of several agents (--src) goes to
// every agent.
func nextAgent(src []string, met map[string]bool) []string {
	after := len(src) == 0
	for _, name := range agent.Names() {
		if after && met[name] {
			return []string{name}
		}
		after = after || len(src) == 1 && src[0] == name
	}
	return nil
}

// armed runs the armed pass for d and deletes on y. It returns the
// position to select next and how many items must be loaded first.
func (p *picker) armed(l *list, prev *run, d *decision) (int, int) {
	prev.idsMu.Lock()
	n := min(d.total, len(prev.ids))
	if d.query == "" {
		// The list is in input order: what follows the visible rows
		// cannot change them.
		n = min(n, d.pos+2*height)
	}
	ids := append([]int32(nil), prev.ids[:n]...)
	prev.idsMu.Unlock()
	r := p.newRun(true, l)
	r.arm = *d
	_, err := p.fzf(p.armedArgs(r), func(in chan<- string, quit quitter) {
		defer close(in)
		p.feedIDs(r, l, ids, in, quit)
	}, l)
	ad := p.finish(r)
	switch {
	case err != nil:
		p.setNotice("The delete was not armed: " + err.Error())
	case ad == nil || ad.verb == "no":
		p.setNotice("")
	case ad.verb == "mismatch":
		p.setNotice("The list changed before the delete was armed: nothing was deleted.")
	case ad.verb == "yes":
		e, ok := l.at(d.id)
		if !ok {
			p.setNotice("That prompt is already gone.")
			break
		}
		res := deletion.Delete(p.cfg.Store, p.scope(l.all), []string{e.Text}, deletion.Options{})
		switch res.Outcome {
		case deletion.Clean, deletion.PartlyHidden, deletion.RemovedNotHidden:
			l.remove(d.id)
		}
		notice := res.Outcome.Notice()
		if notice == "" && res.Outcome != deletion.Clean {
			notice = "Nothing was deleted"
			if res.Err != nil {
				notice += ": " + res.Err.Error()
			}
		}
		if notice == "" {
			notice = res.Elsewhere.String() // copies left in other projects, say
		}
		p.setNotice(notice)
		return d.pos, d.total - 1
	}
	return d.pos, d.total
}

func (p *picker) setNotice(s string) {
	p.mu.Lock()
	p.notice = s
	p.mu.Unlock()
}

func (p *picker) newRun(armed bool, l *list) *run {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.runs++
	r := &run{n: p.runs, armed: armed, list: l, footer: p.notice}
	if armed {
		r.footer = armedQuestion
	}
	p.cur = r
	return r
}

func (p *picker) finish(r *run) *decision {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cur = nil
	return r.dec
}

// fzf runs one pass.
func (p *picker) fzf(args []string, feed func(chan<- string, quitter), l *list) (int, error) {
	opts, err := fzf.ParseOptions(false, args)
	if err != nil {
		return fzf.ExitError, err
	}
	// A buffered input: fzf's reader takes items as fast as it can, and
	// an unbuffered channel costs a goroutine switch per prompt.
	in, out := make(chan string, 4096), make(chan string)
	opts.Input, opts.Output = in, out
	quit := make(quitter)
	go feed(in, quit)
	drained := make(chan struct{})
	go func() {
		for range out {
		}
		close(drained)
	}()
	code, err := fzf.Run(opts)
	l.endPass(quit)
	close(out)
	<-drained
	// fzf v0.65 leaves its SIGINT/SIGTERM handler installed.
	signal.Reset(os.Interrupt, syscall.SIGTERM)
	return code, err
}

// feedList sends the list's entries to fzf: newest first as they stream
// in, or, most used first (frecent), once they are all in.
func (p *picker) feedList(r *run, l *list, frecent bool, in chan<- string, quit quitter) {
	defer close(in)
	if frecent {
		p.feedIDs(r, l, l.ranked(quit), in, quit)
		return
	}
	for i := 0; !quit.over(); {
		n, done := l.snapshot(i, quit)
		if !done {
			r.partial.Store(true)
		}
		var ids []int32
		for ; i < n; i++ {
			if _, ok := l.at(int32(i)); ok { // not deleted since it was loaded
				ids = append(ids, int32(i))
			}
		}
		if !p.feedIDs(r, l, ids, in, quit) || done {
			return
		}
	}
}

// feedIDs sends the given entries; false when the pass ended first.
func (p *picker) feedIDs(r *run, l *list, ids []int32, in chan<- string, quit quitter) bool {
	now := p.cfg.Now()
	for _, id := range ids {
		r.idsMu.Lock()
		r.ids = append(r.ids, id)
		r.idsMu.Unlock()
		select {
		case in <- l.item(id, now):
		case <-quit:
			return false
		}
	}
	return true
}

// writeItems writes every item run r sent, in order, with the uses
// counted now: the reload of a pass whose items were sent while uses were
// counted.
func (p *picker) writeItems(r *run, w io.Writer) {
	r.idsMu.Lock()
	ids := slices.Clone(r.ids)
	r.idsMu.Unlock()
	bw := bufio.NewWriterSize(w, 64<<10)
	now := p.cfg.Now()
	for _, id := range ids {
		bw.WriteString(r.list.item(id, now))
		bw.WriteByte('\n')
	}
	bw.Flush()
}

// quitter is closed when a pass is over.
type quitter chan struct{}

func (q quitter) over() bool {
	select {
	case <-q:
		return true
	default:
		return false
	}
}

// callbackExe is the program fzf runs for callbacks: this one. fzf
// splits --with-shell on spaces, so a path with a space is reached
// through a symlink in the private folder.
func callbackExe(dir string) (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("finding hist-pick's own path for fzf's callbacks: %v", err)
	}
	if !strings.ContainsAny(exe, " \t\n") {
		return exe, nil
	}
	link := dir + "/hist-pick"
	if strings.ContainsAny(link, " \t\n") {
		return "", fmt.Errorf("the paths of hist-pick (%s) and of the temp folder (%s) contain spaces: set TMPDIR to a folder without one", exe, dir)
	}
	if err := os.Symlink(exe, link); err != nil {
		return "", err
	}
	return link, nil
}
