package histseed

import (
	"slices"
	"strings"
	"time"

	"hist/lib/agent"
	"hist/lib/cli"
	"hist/lib/seed"
	"hist/lib/watch"
)

// retryAfter is when a failed import is tried again, without a change.
const retryAfter = 30 * time.Second

// watch runs an import, then another each time the sources' transcripts
// change, one at a time, until a signal ends the process or capture is
// turned off (exit 0).
func (im *importer) watch() int {
	w := watch.Start(watchRoots(im.srcs), im.st.Root, func(paths []string, why string) {
		if !im.o.quiet {
			im.e.Say("watching: %s: %s", strings.Join(paths, ", "), why)
		}
	})
	defer w.Close()
	retry := time.NewTimer(retryAfter)
	retry.Stop()
	for first := true; ; first = false {
		if !first {
			select {
			case <-w.C:
			case <-retry.C:
			}
		}
		if pol := im.e.Policy(); !pol.On {
			im.e.Errorf("%s: nothing was imported", pol.OffHint())
			return cli.ExitOK
		}
		retry.Stop()
		switch im.once(first) {
		case cli.ExitFailure, cli.ExitUntrusted, exitRetry:
			retry.Reset(retryAfter)
		default:
			if im.recent {
				// Prompts typed a moment ago were left: import them once
				// they have settled.
				retry.Reset(seed.Settle + time.Second)
			}
		}
	}
}

// watchRoots are the folders where the sources' readers find transcripts:
// the reader's root, or the parts of it the reader reads (agent.Watched).
func watchRoots(srcs []seed.Source) []watch.Root {
	var out []watch.Root
	for _, s := range srcs {
		a, _ := agent.Lookup(s.Name)
		if a.Watched == nil {
			out = append(out, watch.Root{Path: s.Root})
			continue
		}
		for _, f := range a.Watched(s.Root) {
			out = append(out, watch.Root{Path: f.Path, Flat: f.Flat})
		}
	}
	return out
}

// wrote is whether an import migrated a file or wrote to the store.
func wrote(mig *seed.MigrationReport, brep *seed.Report) bool {
	for _, s := range mig.Sources {
		if s.Status == seed.LegacyMigrated {
			return true
		}
	}
	return slices.ContainsFunc(brep.Files, func(f seed.FileResult) bool { return f.Status == seed.FileWritten })
}
