// Package legacy reads the agents' own prompt-recall ("editor history")
// files: the lists an agent keeps for its up-arrow recall, apart from its
// session transcripts.
package legacy

// Source is one prompt-recall file.
type Source struct {
	Name string // "claude", "codex", "opencode" or "cursor"
	Path string
}
