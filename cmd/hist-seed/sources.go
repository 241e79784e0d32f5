package main

import (
	"hist/lib/cli"
	"hist/lib/seed"
	"hist/lib/transcript"
	"hist/lib/transcript/claude"
	"hist/lib/transcript/codex"
	"hist/lib/transcript/cursor"
	"hist/lib/transcript/legacy"
	"hist/lib/transcript/opencode"
	"hist/lib/transcript/pi"
)

// sources returns the readers of the named sources (in knownSources
// order), the prompt-recall files of the legacy migration, and the names
// this build has no reader for.
func sources(e *cli.Env, names []string, sessions string) ([]seed.Source, []seed.LegacySource, []string) {
	env := transcript.Env(e.Getenv)
	var srcs []seed.Source
	var legs []seed.LegacySource
	var unsupported []string
	addLegacy := func(s legacy.Source, scan func(legacy.Source, func(transcript.Prompt) error) (transcript.Stats, error)) {
		legs = append(legs, seed.LegacySource{Name: s.Name, Path: s.Path,
			Scan: func(emit func(transcript.Prompt) error) (transcript.Stats, error) { return scan(s, emit) }})
	}
	for _, n := range names {
		switch n {
		case transcript.SrcPi:
			root := pi.DefaultRoot(env, e.Home)
			if sessions != "" {
				root = sessions
			}
			srcs = append(srcs, seed.Source{Name: n, Root: root, Scan: pi.Scan})
		case transcript.SrcClaude:
			srcs = append(srcs, seed.Source{Name: n, Root: claude.DefaultRoot(env, e.Home), Scan: claude.Scan})
			addLegacy(legacy.ClaudeSource(env, e.Home), legacy.ScanClaude)
		case transcript.SrcCodex:
			srcs = append(srcs, seed.Source{Name: n, Root: codex.DefaultRoot(env, e.Home), Scan: codex.Scan})
			addLegacy(legacy.CodexSource(env, e.Home), legacy.ScanCodex)
		case transcript.SrcCursor:
			srcs = append(srcs, seed.Source{Name: n, Root: cursor.DefaultRoot(env, e.Home), Scan: cursor.Scan})
			addLegacy(legacy.CursorSource(env, e.Home), legacy.ScanCursor)
		case transcript.SrcOpencode:
			srcs = append(srcs, seed.Source{Name: n, Root: opencode.DefaultRoot(env, e.Home), Scan: opencode.Scan})
			addLegacy(legacy.OpencodeSource(env, e.Home), legacy.ScanOpencode)
		default:
			unsupported = append(unsupported, n)
		}
	}
	return srcs, legs, unsupported
}
