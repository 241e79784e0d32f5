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
//   - in a rollout that holds no event_msg line at all (a build that
//     writes events writes the prompts' too, if not yet), a response_item
//     user message;
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
// without being parsed (so they are never counted as malformed). Each
// rollout is read up to the size it had when it was opened.
package codex

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

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

// Scan reads the rollouts under root (sessions/ and archived_sessions/)
// that keep keeps, and the parents of the legacy forks among them (which
// the fork rule needs), as transcript.Agent's Scan says. A .jsonl.zst that
// is not a valid zstd stream (cut short, say) is passed over, named in
// Stats.Undecodable (the prompts before the fault count).
func Scan(root string, keep transcript.Keep, emit func(transcript.Prompt) error) (transcript.Stats, error) {
	s := newScanner(emit)
	all, err := s.list(root, keep)
	if err != nil {
		return s.stats, err
	}
	var read []string
	for _, r := range all {
		if r.kept {
			read = append(read, r.path)
			if err := s.read(r.path); err != nil {
				return s.stats, err
			}
		}
	}
	if len(read) < len(all) {
		// The parents of the legacy forks, when they were not read: the
		// fork rule needs their prompts (they are emitted again, which
		// the import ledger makes harmless).
		for _, path := range forkParents(s, read, all) {
			if err := s.read(path); err != nil {
				return s.stats, err
			}
		}
	}
	return s.stats, s.flushForks()
}

// forkParents lists the rollouts of all not among read whose session is
// the parent of a legacy fork s found without it (a rollout's name ends
// with its session id): each fork's in the order they are listed.
func forkParents(s *scanner, read []string, all []rollout) []string {
	var out []string
	for _, fk := range s.forks {
		if _, ok := s.sums[fk.parent]; ok || fk.parent == "" {
			continue
		}
		for _, r := range all {
			if strings.Contains(filepath.Base(r.path), fk.parent) && !slices.Contains(read, r.path) && !slices.Contains(out, r.path) {
				out = append(out, r.path)
			}
		}
	}
	return out
}

type scanner struct {
	emit    *filescan.Dedup
	emitErr error
	stats   transcript.Stats
	// sums holds every session's prompts (as text hashes, in file order),
	// for the legacy-fork rule.
	sums  map[string][]textSum
	forks []*fork
	lr    *filescan.LineReader // reused from rollout to rollout
	zdec  *zstd.Decoder
}

type fork struct {
	parent string
	sums   []textSum
	cands  []cand
}

func newScanner(emit func(transcript.Prompt) error) *scanner {
	return &scanner{emit: &filescan.Dedup{Emit: emit}, sums: map[string][]textSum{}}
}

// deliver emits a prompt unless it is not capturable or already emitted.
func (s *scanner) deliver(c cand) error {
	if !identity.Capturable(c.p.Text) {
		return nil
	}
	err := s.emit.Add(c.p)
	s.stats.Prompts = s.emit.N
	if err != nil {
		s.emitErr = err
	}
	return err
}

// rollout is a rollout listed, and whether keep kept it.
type rollout struct {
	path string
	kept bool
}

// list returns the rollouts under root, plain files winning over .zst,
// those of sessions/ then those of archived_sessions/, each folder's in
// the order filepath.WalkDir visits them, and whether keep keeps each
// one.
func (s *scanner) list(root string, keep transcript.Keep) ([]rollout, error) {
	var out []rollout
	for _, sub := range []string{"sessions", "archived_sessions"} {
		dir := filepath.Join(root, sub)
		var found []rollout
		have := map[string]bool{}
		err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			switch {
			case errors.Is(err, fs.ErrNotExist):
				return nil // no such folder, or removed while we walked
			case err != nil:
				return &transcript.ReadError{Path: path, Err: err}
			case d.IsDir() || !isRollout(d.Name()):
				return nil
			}
			found = append(found, rollout{path, filescan.Kept(path, keep)})
			have[path] = true
			return nil
		})
		if err != nil {
			return nil, err
		}
		for _, r := range found {
			if strings.HasSuffix(r.path, ".zst") && have[strings.TrimSuffix(r.path, ".zst")] {
				s.stats.Skipped++ // a compressed rollout beside its plain copy
				continue
			}
			out = append(out, r)
		}
	}
	return out, nil
}

// isRollout reports whether name is a rollout file name: "rollout-…" ending
// in ".jsonl" once a ".zst" is removed.
func isRollout(name string) bool {
	return strings.HasPrefix(name, "rollout-") && strings.HasSuffix(strings.TrimSuffix(name, ".zst"), ".jsonl")
}

// sessionFromName returns the uuid at the end of a rollout's file name, the
// session id when the rollout has no session_meta.
func sessionFromName(name string) string {
	base := strings.TrimSuffix(strings.TrimSuffix(filepath.Base(name), ".zst"), ".jsonl")
	base, _, _ = strings.Cut(base, "_")
	if len(base) >= 36 {
		id := base[len(base)-36:]
		if id[8] == '-' && id[13] == '-' && id[18] == '-' && id[23] == '-' {
			return id
		}
	}
	return ""
}

// read reads one rollout, up to the size it had when it was opened (Codex
// may be appending).
func (s *scanner) read(path string) error {
	f, fi, err := filescan.Open(path)
	switch {
	case err != nil:
		return err
	case f == nil:
		// Not a regular file (a FIFO would block): passed over. A rollout
		// that vanished since the listing was most likely moved (Codex
		// archives sessions into archived_sessions/), perhaps after that
		// folder was listed: read again later rather than lose its prompts.
		if _, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) {
			return &transcript.ReadError{Path: path, Err: err}
		}
		s.stats.Skipped++
		return nil
	}
	defer f.Close()
	cr := &countReader{r: filescan.Upto(f, fi.Size())}
	defer func() { s.stats.Bytes += cr.n }()
	if !strings.HasSuffix(path, ".zst") {
		return s.parse(cr, path)
	}
	if s.zdec == nil {
		s.zdec, err = newZstd(nil)
		if err != nil {
			return &transcript.ReadError{Path: path, Err: err}
		}
	}
	err = s.zdec.Reset(cr)
	if err == nil {
		err = s.parse(s.zdec, path)
	}
	if err != nil && cr.err == nil && s.emitErr == nil {
		// The file reads, but is not zstd (or is cut short): passed
		// over, the rest is read. The prompts before the fault count.
		if re, ok := errors.AsType[*transcript.ReadError](err); ok {
			err = re.Err
		}
		s.stats.Undecodable = append(s.stats.Undecodable, transcript.Undecodable{
			Path: path, Err: fmt.Errorf("not a valid zstd stream: %w", err)})
		return nil
	}
	return err
}

// parse reads one rollout's lines from r (name is its path): its prompts
// go to emit, those of a legacy fork to s.forks (see flushForks).
func (s *scanner) parse(r io.Reader, name string) error {
	if s.lr == nil {
		s.lr = filescan.NewLineReader(nil, bufSize)
	}
	p := &parser{name: name, session: sessionFromName(name), lr: s.lr}
	var sums []textSum
	var fk *fork
	p.out = func(c cand) error {
		sums = append(sums, c.sum)
		if p.legacyFork {
			if fk == nil {
				fk = &fork{parent: p.forkedFrom}
			}
			fk.cands = append(fk.cands, c)
			return nil
		}
		return s.deliver(c)
	}
	err := p.run(r)
	s.stats.Malformed += p.malformed
	switch {
	case err == errStop:
		s.stats.Subagent++
		return nil
	case err != nil && s.emitErr != nil:
		return s.emitErr
	case err != nil:
		return &transcript.ReadError{Path: name, Err: err}
	}
	s.stats.Files++
	if p.session != "" {
		s.sums[p.session] = sums
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

// countReader counts the bytes read, and keeps the read error (an I/O
// error, not a decoding one).
type countReader struct {
	r   io.Reader
	n   int64
	err error
}

func (c *countReader) Read(b []byte) (int, error) {
	n, err := c.r.Read(b)
	c.n += int64(n)
	if err != nil && err != io.EOF {
		c.err = err
	}
	return n, err
}

// newZstd returns a zstd decoder of r that decodes on the calling
// goroutine, with a bounded window.
func newZstd(r io.Reader) (*zstd.Decoder, error) {
	return zstd.NewReader(r, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxWindow(128<<20))
}
