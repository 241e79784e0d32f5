package install

import (
	"os"
	"path/filepath"

	"hist/lib/transcript"
)

// Wired reports whether hist captures agent name's prompts live: its
// prompt hook is in the agent's settings, or, for an agent without one,
// its extension or plugin is installed. hist-seed leaves the prompts typed
// a moment ago to a later run for such an agent (their live copy may be
// on its way), and imports the others' at once.
func Wired(name string, env transcript.Env, home string) bool {
	t, ok := targets[name]
	if !ok {
		return false
	}
	dir := t.dir(env, home)
	if len(t.hooks) == 0 {
		for _, c := range t.copies {
			if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(c.rel))); err == nil {
				return true
			}
		}
		return false
	}
	for _, h := range t.hooks {
		data, _, err := readExisting(filepath.Join(dir, h.rel))
		if err != nil || data == nil {
			continue
		}
		doc, _ := parseJSON(data)
		root, _ := doc.(*object)
		if root == nil {
			continue
		}
		v, _ := root.get("hooks")
		hooks, _ := v.(*object)
		if hooks == nil {
			continue
		}
		ev, _ := hooks.get(h.event)
		if entries, _ := ev.([]any); hasOurs(entries) {
			return true
		}
	}
	return false
}
