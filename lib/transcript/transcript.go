// Package transcript holds what every agent's transcript reader yields: the
// prompts a person typed, with where and when, and the counts a reader keeps
// of what it passed over, and the Agent value that each reader package
// (pi, claude, codex, cursor, opencode) fills for its agent: its session
// transcripts' reader and its prompt-recall ("editor history") file's.
package transcript

import (
	"io/fs"
	"strings"
)

// Sources, as written in a record's "src" field: each names an agent of
// lib/agent's list (a test there checks).
const (
	SrcPi       = "pi"
	SrcClaude   = "claude"
	SrcCodex    = "codex"
	SrcCursor   = "cursor"
	SrcOpencode = "opencode"
)

// Prompt is one typed prompt found in a transcript.
type Prompt struct {
	Text    string // the prompt as the agent stored it (after the agent-specific unwrapping)
	TS      int64  // unix milliseconds
	Cwd     string // the project's working directory, from inside the transcript
	Session string // the agent's session id (what its resume command takes)
	Src     string // one of the Src constants
	// Key identifies one prompt event within its source, so that the copies a
	// fork, clone or resume writes into another file count once (pi: entry id
	// or timestamp+text, Claude: record uuid, ...). It is the same in every
	// run (hist-seed's import ledger keeps it). Empty when there is none.
	Key string
	// Approx is true when TS is not the prompt's own time (a session's
	// creation time, a file's mtime).
	Approx bool
	// File is the transcript file (or database) the prompt was read from.
	File string
}

// Keep says, for each transcript file a reader lists, whether to read
// it (whole): a reader given a Keep reads only the files it keeps (nil
// keeps all). hist-seed keeps the files that changed since its last run
// (see docs/hist-seed.md, "Rules").
type Keep func(path string, fi fs.FileInfo) bool

// Stats counts what a reader saw.
type Stats struct {
	Files     int   // transcript files (or databases) read
	Bytes     int64 // bytes read
	Prompts   int   // prompts emitted
	Malformed int   // lines or rows that could not be parsed and were skipped
	Skipped   int   // files passed over on purpose (unknown layouts, files that are not regular, ...)
	// Subagent counts the subagents' transcripts, passed over on purpose:
	// apart from Skipped, since a folder of only these is a known layout
	// that holds no typed prompt.
	Subagent int
	// Undecodable are the files passed over because their content cannot
	// be decoded (a truncated .zst, a corrupt database): the rest of the
	// source is read.
	Undecodable []Undecodable
}

// Undecodable is a file whose content cannot be decoded, and why.
type Undecodable struct {
	Path string
	Err  error
}

// Add adds o's counts to s.
func (s *Stats) Add(o Stats) {
	s.Files += o.Files
	s.Bytes += o.Bytes
	s.Prompts += o.Prompts
	s.Malformed += o.Malformed
	s.Skipped += o.Skipped
	s.Subagent += o.Subagent
	s.Undecodable = append(s.Undecodable, o.Undecodable...)
}

// ReadError reports a transcript that could not be read (an I/O error, not a
// malformed line). A seed that meets one writes nothing for the source, so
// that a later run retries.
type ReadError struct {
	Path string
	Err  error
}

func (e *ReadError) Error() string { return "reading " + e.Path + ": " + e.Err.Error() }
func (e *ReadError) Unwrap() error { return e.Err }

// Env looks up an environment variable; readers take one so tests can
// point them anywhere without touching the process environment.
type Env func(key string) string

// Getenv returns env(key) without surrounding white space (the agents trim
// their folder variables), or "" when env is nil.
func Getenv(env Env, key string) string {
	if env == nil {
		return ""
	}
	return strings.TrimSpace(env(key))
}
