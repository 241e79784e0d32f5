package histseed

import (
	"fmt"
	"strings"

	"hist/lib/agent"
	"hist/lib/cli"
	"hist/lib/seed"
	"hist/lib/store"
	"hist/lib/transcript"

	// The SQLite driver of the readers' database/sql (cursor-agent's and
	// opencode's databases): linked here, not in the readers, so that
	// hist-capture, which links the agent list, does not pay for its
	// start-up at every capture.
	_ "modernc.org/sqlite"
)

// knownSources are the names --from takes, in the order they are read.
var knownSources = agent.Names()

// sources returns the readers of the named sources (in knownSources
// order) and the prompt-recall files of the legacy migration.
func sources(e *cli.Env, names []string, sessions string) ([]seed.Source, []seed.LegacySource) {
	env := transcript.Env(e.Getenv)
	var srcs []seed.Source
	var legs []seed.LegacySource
	for _, n := range names {
		a, _ := agent.Lookup(n)
		root := a.Root(env, e.Home)
		if n == transcript.SrcPi && sessions != "" {
			root = sessions
		}
		srcs = append(srcs, seed.Source{Name: n, Root: root, Scan: a.Scan})
		if a.ScanRecall != nil {
			legs = append(legs, seed.LegacySource{Name: n, Path: a.RecallPath(env, e.Home), Scan: a.ScanRecall})
		}
	}
	return srcs, legs
}

// usage is the help text, with the passages that name the agents written
// from agent.List.
var usage = func() string {
	var recall, seeds []string
	var where strings.Builder
	for _, a := range agent.List {
		if a.Recall != "" {
			recall = append(recall, a.Display+"'s "+a.Recall)
		}
		f := store.SeedFile(a.Name, "")
		if !strings.Contains(f, a.Name) {
			f += " (" + a.Name + ")"
		}
		seeds = append(seeds, f)
		where.WriteString(wrap(fmt.Sprintf("    %-9s ", a.Name), a.Where, 14))
	}
	return strings.NewReplacer(
		"{{recall}}\n", wrap("    ", "The files: "+strings.Join(recall, ", ")+".", 4),
		"{{seedfiles}}\n", wrap("    ", "The seed files: "+strings.Join(seeds, ", ")+".", 4),
		"{{from}}\n", wrap(strings.Repeat(" ", 21), strings.Join(knownSources, ", ")+".", 21),
		"{{where}}\n", where.String(),
	).Replace(usageTemplate)
}()

// usageWidth is the widest line of the usage's generated passages.
const usageWidth = 80

// wrap is prefix then text's words, broken into lines of at most
// usageWidth columns (a longer word gets a line of its own) that start
// with indent spaces after the first. It ends with a newline.
func wrap(prefix, text string, indent int) string {
	var b strings.Builder
	b.WriteString(prefix)
	col := len(prefix)
	for i, w := range strings.Fields(text) {
		switch {
		case i == 0:
		case col+1+len(w) > usageWidth:
			b.WriteString("\n" + strings.Repeat(" ", indent))
			col = indent
		default:
			b.WriteByte(' ')
			col++
		}
		b.WriteString(w)
		col += len(w)
	}
	b.WriteByte('\n')
	return b.String()
}
