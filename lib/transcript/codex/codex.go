// Package codex reads the prompts a person typed into the Codex CLI from its
// session rollouts: $CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl (or
// .jsonl.zst; the plain file wins when both exist) and
// $CODEX_HOME/archived_sessions/.
//
// A typed prompt is, in order of preference:
//   - an event_msg whose payload is an item_completed UserMessage item
//     (Codex 0.171 and later), text = the item's text content;
//   - an event_msg user_message (earlier builds), skipped when its "kind" is
//     not "plain" (the injected context of 0.3x–0.4x builds);
//   - in a rollout that holds neither, a response_item user message;
//   - in a rollout of the oldest format (a first line
//     {"id":…,"timestamp":…,"instructions":…}, then bare response items
//     and {"record_type":"state"} lines, no session_meta), a bare user
//     message item: its session is the first line's id, its time that
//     line's (approximate, the items have none).
//
// Text that starts with injected context (<environment_context>, AGENTS.md
// instructions, <user_instructions>, <turn_aborted>, …) is never a prompt,
// nor is a prompt that hist would not capture (blank, or a command such as
// "/prompts:greet …"). Subagent rollouts (session_meta source
// {"subagent":…}) are skipped whole and counted in Stats.Subagent.
//
// A prompt's time is its line's timestamp, its cwd the latest turn_context
// cwd before it (else the session_meta cwd, else the <cwd> of the latest
// <environment_context> message, else the first one's; none when the
// rollout holds none of these), its session the session_meta id, which is
// what "codex resume" takes. Its Key is the session id and the
// UserMessage item id (older shapes: the line's timestamp and a hash of the
// text), so the same rollout found twice (sessions/ and archived_sessions/)
// counts once.
//
// A legacy fork (session_meta forked_from_id, history_mode not "paginated")
// starts with a copy of its parent's items, written with new timestamps.
// When the parent rollout is present, the fork's prompts that repeat the
// parent's, from the start and in order, are left to the parent, so each is
// read once. Paginated forks copy nothing.
//
// Lines are streamed through a fixed buffer; a line is held whole only when
// it is decoded, and lines of types the reader has no use for are skipped
// without being parsed (so they are never counted as malformed).
package codex

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/klauspost/compress/zstd"

	"hist/lib/identity"
	"hist/lib/transcript"
	"hist/lib/transcript/internal/filescan"
)

// DefaultRoot is where Codex keeps its transcripts: $CODEX_HOME, else
// ~/.codex.
func DefaultRoot(env transcript.Env, home string) string {
	return Config(env, home)
}

// Scan reads every rollout under root (sessions/ and archived_sessions/)
// and calls emit once per typed prompt, deduplicated by Prompt.Key. A file
// that cannot be read, a .jsonl.zst that is not a valid zstd stream
// included (it may be half written), stops the scan with a
// *transcript.ReadError, so that the import is retried later; malformed
// lines are counted in Stats.Malformed. An error from emit stops the scan
// and is returned as it is. A missing root holds no prompts.
func Scan(root string, emit func(transcript.Prompt) error) (transcript.Stats, error) {
	return ScanKept(root, nil, emit)
}

// ScanKept is Scan over the rollouts keep keeps, and the parents of the
// legacy forks among them (which the fork rule needs). When keep is a
// transcript.Resumer, a plain rollout that only grew is read from where
// the last read stopped, with the context that read saved (see
// resume.go); any other is read whole.
func ScanKept(root string, keep transcript.Keep, emit func(transcript.Prompt) error) (transcript.Stats, error) {
	s := newScanner(emit)
	s.res, _ = keep.(transcript.Resumer)
	all, infos, allArchived, err := s.list(root, keep != nil)
	if err != nil {
		return s.stats, err
	}
	files, archived := all, allArchived
	if keep != nil {
		// Each rollout's stamp is the one the listing found (no second
		// stat by path). Only the rollouts kept are sorted: with the set
		// of plain rollouts made only beside a compressed one (list), a
		// run with nothing new over 16,266 rollouts takes 14-16% less
		// (168 against 200 ms, medians of 21 alternated runs), which
		// keeps it within 2x of find printing the files' stamps.
		files = nil
		for i, p := range all {
			if i == archived {
				archived = len(files)
			}
			if infos[i] == nil || keep.Keep(p, infos[i]) {
				files = append(files, p)
			}
		}
		archived = min(archived, len(files))
	}
	slices.SortFunc(files[:archived], walkOrder)
	slices.SortFunc(files[archived:], walkOrder)
	// Rollouts are parsed by up to maxWorkers goroutines, a few files
	// ahead; what each yields is applied in file order on this one.
	workers := min(runtime.GOMAXPROCS(0), maxWorkers, (len(files)+7)/8)
	op := new(filescan.Opener) // shared: each folder is opened once
	defer op.Close()
	if workers < 2 {
		w := reader{op: op, res: s.res}
		for _, f := range files {
			if err := s.apply(w.parse(f)); err != nil {
				return s.stats, err
			}
		}
	} else {
		newReader := func() *reader { return &reader{op: op, res: s.res} }
		if err := filescan.Map(files, workers, newReader, (*reader).parse, s.apply); err != nil {
			return s.stats, err
		}
	}
	if len(files) < len(all) || len(s.partial) > 0 {
		// The parents of the legacy forks read, when they were not, or
		// only from a cursor: the fork rule needs all their prompts (they
		// are emitted again, which the import ledger makes harmless).
		w := reader{op: op}
		for _, path := range forkParents(s, files, all, allArchived) {
			if err := s.apply(w.parse(path)); err != nil {
				return s.stats, err
			}
		}
	}
	if err := s.flushForks(); err != nil {
		return s.stats, err
	}
	return s.stats, nil
}

// forkParents lists the rollouts of all (those of archived_sessions/ from
// index archived on), not among read or read only from a cursor, whose
// session is the parent of a legacy fork s found without it (a rollout's
// name ends with its session id): each fork's in the order they are read.
func forkParents(s *scanner, read, all []string, archived int) []string {
	var out []string
	for _, fk := range s.forks {
		if _, ok := s.sums[fk.parent]; ok || fk.parent == "" {
			continue
		}
		var mine, theirs []string // sessions/, archived_sessions/
		for i, p := range all {
			if strings.Contains(filepath.Base(p), fk.parent) && (s.partial[p] || !slices.Contains(read, p)) && !slices.Contains(out, p) {
				if i < archived {
					mine = append(mine, p)
				} else {
					theirs = append(theirs, p)
				}
			}
		}
		slices.SortFunc(mine, walkOrder)
		slices.SortFunc(theirs, walkOrder)
		out = append(append(out, mine...), theirs...)
	}
	return out
}

// maxWorkers bounds the rollouts parsed at the same time.
const maxWorkers = 4

// ScanReader reads one rollout (plain JSONL) from r; name is its path, used
// for the session id when the rollout has no session_meta and in errors.
// It applies every rule of Scan except the legacy-fork one, which needs the
// parent's file. A read error is returned as a *transcript.ReadError.
func ScanReader(r io.Reader, name string, emit func(transcript.Prompt) error) (transcript.Stats, error) {
	s := newScanner(emit)
	cr := &countReader{r: r}
	p := s.parser(name)
	err := p.run(cr)
	s.stats.Bytes += cr.n
	s.stats.Malformed += p.malformed
	switch {
	case err == errStop:
		s.stats.Subagent++
		return s.stats, nil
	case err != nil:
		if s.emitErr != nil {
			return s.stats, s.emitErr
		}
		return s.stats, &transcript.ReadError{Path: name, Err: err}
	}
	s.stats.Files++
	return s.stats, nil
}

type scanner struct {
	emit    func(transcript.Prompt) error
	emitErr error
	stats   transcript.Stats
	keys    filescan.KeySet
	// sums holds every session's prompts (as text hashes, in file order),
	// for the legacy-fork rule, of the rollouts read whole; partial holds
	// the rollouts read from a cursor.
	sums    map[string][]textSum
	partial map[string]bool
	forks   []*fork
	last    *parser
	res     transcript.Resumer // nil: every rollout is read whole
}

type fork struct {
	parent string
	sums   []textSum
	cands  []cand
}

func newScanner(emit func(transcript.Prompt) error) *scanner {
	return &scanner{
		emit: emit,
		sums: map[string][]textSum{},
	}
}

// parser returns a parser that delivers straight to emit; it reuses the
// buffers of the previous one.
func (s *scanner) parser(name string) *parser {
	p := &parser{name: name, session: sessionFromName(name)}
	if s.last != nil {
		p.lr = s.last.lr
	}
	s.last = p
	p.out = func(c cand) error { return s.deliver(c) }
	return p
}

// deliver emits a prompt unless it is not capturable or already emitted.
func (s *scanner) deliver(c cand) error {
	if !identity.Capturable(c.p.Text) {
		return nil
	}
	if c.p.Key != "" && !s.keys.Add(c.p.Key) {
		return nil
	}
	if err := s.emit(c.p); err != nil {
		s.emitErr = err
		return err
	}
	s.stats.Prompts++
	return nil
}

// list returns the rollouts under root, plain files winning over .zst,
// those of sessions/ then those of archived_sessions/ (from index
// archived on), in no set order within each, and, with infos, what each
// one's stat found (the listing's fstatat in its open folder; a stat for
// a symbolic link; nil when it failed, then reading the file reports
// why).
func (s *scanner) list(root string, infos bool) (out []string, outInfo []fs.FileInfo, archived int, err error) {
	var mu sync.Mutex
	for _, sub := range []string{"sessions", "archived_sessions"} {
		archived = len(out)
		dir := filepath.Join(root, sub)
		zst := false
		err := filescan.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				if path == dir && errors.Is(err, fs.ErrNotExist) {
					return fs.SkipDir
				}
				if errors.Is(err, fs.ErrNotExist) {
					return nil // removed while we walked
				}
				return &transcript.ReadError{Path: path, Err: err}
			}
			if d.IsDir() || !isRollout(d.Name()) {
				return nil
			}
			var fi fs.FileInfo
			if infos {
				if d.Type()&fs.ModeSymlink != 0 {
					fi, _ = os.Stat(path)
				} else {
					fi, _ = d.Info()
				}
			}
			mu.Lock()
			out = append(out, path)
			outInfo = append(outInfo, fi)
			zst = zst || strings.HasSuffix(path, ".zst")
			mu.Unlock()
			return nil
		})
		if err != nil {
			return nil, nil, 0, err
		}
		if !zst {
			continue
		}
		// A compressed rollout beside its plain copy is skipped.
		have := map[string]bool{}
		for _, p := range out[archived:] {
			if strings.HasSuffix(p, ".jsonl") {
				have[p] = true
			}
		}
		k := archived
		for i := archived; i < len(out); i++ {
			if strings.HasSuffix(out[i], ".zst") && have[strings.TrimSuffix(out[i], ".zst")] {
				s.stats.Skipped++
				continue
			}
			out[k], outInfo[k] = out[i], outInfo[i]
			k++
		}
		out, outInfo = out[:k], outInfo[:k]
	}
	return out, outInfo, archived, nil
}

// walkOrder orders paths as filepath.WalkDir visits them: a folder's
// files before the next name of its parent ("/" sorts first).
func walkOrder(a, b string) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		ca, cb := a[i], b[i]
		if ca == cb {
			continue
		}
		switch {
		case ca == '/':
			return -1
		case cb == '/':
			return 1
		case ca < cb:
			return -1
		}
		return 1
	}
	return len(a) - len(b)
}

// isRollout reports whether name is a rollout file name: "rollout-…" ending
// in ".jsonl" once a ".zst" is removed.
func isRollout(name string) bool {
	return strings.HasPrefix(name, "rollout-") && strings.HasSuffix(strings.TrimSuffix(name, ".zst"), ".jsonl")
}

// sessionFromName returns the uuid at the end of a rollout's file name, the
// session id when the rollout has no session_meta.
func sessionFromName(name string) string {
	base := filepath.Base(name)
	base = strings.TrimSuffix(strings.TrimSuffix(base, ".zst"), ".jsonl")
	if i := strings.IndexByte(base, '_'); i >= 0 {
		base = base[:i]
	}
	if len(base) >= 36 {
		id := base[len(base)-36:]
		if id[8] == '-' && id[13] == '-' && id[18] == '-' && id[23] == '-' {
			return id
		}
	}
	return ""
}

// reader parses rollouts one after the other, reusing its buffers and
// its zstd decoder; with res, a plain rollout from its cursor.
type reader struct {
	op   *filescan.Opener
	res  transcript.Resumer
	zdec *zstd.Decoder
	last *parser
}

// parsed is what one rollout yielded: its candidates in file order, each
// with whether the parser knew the file to be a legacy fork when it was
// found, and how the parse ended.
type parsed struct {
	path       string
	cands      []cand
	fork       []bool
	forkedFrom string
	session    string
	bytes      int64
	malformed  int
	err        error // errStop, errNotRegular, or a *transcript.ReadError
	// resumed is true when the rollout was read from a cursor; cursor,
	// when not nil, is where the read stopped, to be saved.
	resumed bool
	cursor  *transcript.Cursor
}

// parse reads one rollout.
func (w *reader) parse(path string) *parsed {
	res := &parsed{path: path}
	f, size, skip, err := w.op.Open(path)
	switch {
	case err != nil:
		res.err = err
		return res
	case skip:
		// Not a regular file (a FIFO would block): passed over. A rollout
		// that vanished since the listing was most likely moved (Codex
		// archives sessions into archived_sessions/), perhaps after that
		// folder was listed: read again later rather than lose its prompts.
		if _, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) {
			res.err = &transcript.ReadError{Path: path, Err: err}
		} else {
			res.err = errNotRegular
		}
		return res
	}
	defer f.Close()
	p := &parser{name: path, session: sessionFromName(path)}
	if w.last != nil {
		p.lr = w.last.lr
	}
	w.last = p
	p.out = func(c cand) error {
		res.cands = append(res.cands, c)
		res.fork = append(res.fork, p.legacyFork)
		return nil
	}
	if !strings.HasSuffix(path, ".zst") {
		w.parsePlain(p, f, size, res)
		return res
	}
	// What the file held when it was opened (Codex may be appending).
	cr := &countReader{r: io.LimitReader(f, max(size, 1))}
	if w.zdec == nil {
		w.zdec, err = zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxWindow(128<<20))
		if err != nil {
			res.err = &transcript.ReadError{Path: path, Err: err}
			return res
		}
	}
	if err := w.zdec.Reset(cr); err != nil {
		res.err = &transcript.ReadError{Path: path, Err: fmt.Errorf("not a valid zstd stream: %w", err)}
		return res
	}
	err = p.run(&zstdErr{r: w.zdec})
	res.bytes = cr.n
	res.done(p, err)
	return res
}

// parsePlain reads the plain rollout f (size bytes when opened), from its
// cursor when w has one it can go on from.
func (w *reader) parsePlain(p *parser, f *filescan.File, size int64, res *parsed) {
	lr := p.reader()
	var from transcript.Cursor
	if w.res != nil {
		from = w.res.From(res.path)
		if from.Offset > 0 && !p.resume(from.Context) {
			from = transcript.Cursor{}
		}
	}
	from = lr.ResetFile(f, size, from)
	if from.Offset == 0 {
		// Read whole after all (its head changed): from its start.
		*p = parser{name: p.name, session: sessionFromName(p.name), out: p.out, lr: lr}
	}
	res.resumed = from.Offset > 0
	err := p.lines()
	res.bytes = lr.Bytes()
	if err == nil && w.res != nil {
		if ctx, ok := p.resumeContext(); ok {
			lr.SetContext(ctx)
			c := lr.Stopped(f, from)
			res.cursor = &c
		}
	}
	lr.Reset(nil)
	res.done(p, err)
}

// done records how p's parse of the rollout ended.
func (res *parsed) done(p *parser, err error) {
	res.malformed = p.malformed
	res.forkedFrom, res.session = p.forkedFrom, p.session
	switch {
	case err == errStop:
		res.err = errStop
	case err != nil:
		res.err = &transcript.ReadError{Path: res.path, Err: err}
	}
}

// apply delivers what one rollout yielded (a legacy fork's prompts wait
// for flushForks), as reading it in file order would.
func (s *scanner) apply(res *parsed) error {
	var sums []textSum
	var fk *fork
	for i, c := range res.cands {
		sums = append(sums, c.sum)
		if res.fork[i] {
			if fk == nil {
				fk = &fork{parent: res.forkedFrom}
			}
			fk.cands = append(fk.cands, c)
			continue
		}
		if err := s.deliver(c); err != nil {
			return err
		}
	}
	s.stats.Bytes += res.bytes
	s.stats.Malformed += res.malformed
	switch {
	case res.err == errStop:
		s.stats.Subagent++
		return nil
	case res.err == errNotRegular:
		s.stats.Skipped++
		return nil
	case res.err != nil:
		return res.err
	}
	s.stats.Files++
	if res.cursor != nil {
		s.res.Reached(res.path, *res.cursor)
	}
	if res.resumed {
		if s.partial == nil {
			s.partial = map[string]bool{}
		}
		s.partial[res.path] = true
	} else if res.session != "" {
		s.sums[res.session] = sums
	}
	if fk != nil {
		fk.sums = sums
		s.forks = append(s.forks, fk)
	}
	return nil
}

// flushForks emits the legacy forks' own prompts: those after the longest
// run, from the start, that repeats the parent's prompts.
func (s *scanner) flushForks() error {
	for _, fk := range s.forks {
		parent := s.sums[fk.parent]
		m := 0
		for m < len(fk.sums) && m < len(parent) && fk.sums[m] == parent[m] {
			m++
		}
		for _, c := range fk.cands[m:] {
			if err := s.deliver(c); err != nil {
				return err
			}
		}
	}
	return nil
}

type countReader struct {
	r io.Reader
	n int64
}

func (c *countReader) Read(b []byte) (int, error) {
	n, err := c.r.Read(b)
	c.n += int64(n)
	return n, err
}

// zstdErr labels decoding errors.
type zstdErr struct{ r io.Reader }

func (z *zstdErr) Read(b []byte) (int, error) {
	n, err := z.r.Read(b)
	if err != nil && err != io.EOF {
		var re *transcript.ReadError
		if !errors.As(err, &re) {
			err = fmt.Errorf("not a valid zstd stream: %w", err)
		}
	}
	return n, err
}
