package install

import (
	"os"

	"hist/lib/agent"
	"hist/lib/transcript"
)

// Wired reports whether hist captures agent name's prompts live: its
// prompt hook is in the agent's settings, or, for an agent without one,
// its extension or plugin is installed. hist-seed leaves the prompts typed
// a moment ago to a later run for such an agent (their live copy may be
// on its way), and imports the others' at once. A hook or copy of the
// user's own that runs hist-capture counts: it captures too.
func Wired(name string, env transcript.Env, home string) bool {
	a, _ := agent.Lookup(name)
	t, ok := targets[name]
	if !ok || a.Config == nil {
		return false
	}
	dir := a.Config(env, home)
	if _, err := os.Stat(dir); err != nil {
		return false
	}
	w, err := inspect(t, dir)
	return err == nil && w.wired != ""
}
