package histseed

import (
	"encoding/json"
	"fmt"
	"hist/lib/words"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"hist/lib/cli"
	"hist/lib/seed"
	"hist/lib/store"
)

// reporter says what a run did: on stderr, one line per problem and
// (unless -q) per source and per file; the --json report; the exit code.
type reporter struct {
	e          *cli.Env
	quiet      bool
	oneProject bool // one project asked for: a source with nothing new for it says so
	explicit   bool // --from named the sources: a missing one is said on its own line
	out        *report
	code       int
}

// worse makes c the exit code when it matters more than the one so far.
func (r *reporter) worse(c int) {
	if rank(c) < rank(r.code) {
		r.code = c
	}
}

// say prints a summary line, unless -q.
func (r *reporter) say(format string, args ...any) {
	if !r.quiet {
		r.e.Say(format, args...)
	}
}

// fail says a problem, and makes code the exit code if it matters more.
func (r *reporter) fail(code int, format string, args ...any) {
	r.e.Errorf(format, args...)
	r.worse(code)
}

// migration reports the legacy migration.
func (r *reporter) migration(mig *seed.MigrationReport, merr error) {
	r.out.Migration = mig
	if merr != nil {
		r.e.Errorf("legacy migration: %v: nothing more was migrated; fix it and run hist-seed again", merr)
		r.out.Errors = append(r.out.Errors, "legacy migration: "+merr.Error())
		r.worse(cli.ExitFailure)
	}
	if mig.Untrusted != "" {
		r.fail(cli.ExitUntrusted, "%v: nothing was imported; the import waits until hidden.json can be read", mig.Untrusted)
	}
	if mig.LockHeld != "" {
		r.fail(exitMigLock, "legacy migration skipped: %s exists (a hist-seed was stopped while migrating, or one is running): remove that folder by hand once no hist-seed runs", mig.LockHeld)
	}
	if mig.Busy != "" {
		r.fail(exitRetry, "legacy migration: %v: nothing was migrated; run hist-seed again", mig.Busy)
	}
	for _, s := range mig.Sources {
		switch s.Status {
		case seed.LegacyMigrated, seed.LegacyWould:
			verb := "added to"
			if s.Status == seed.LegacyWould {
				verb = "would be added to"
			}
			r.say("legacy %s: %s %s %s from %s%s", s.Name, prompts(s.Added), verb,
				filepath.Base(mig.Global), s.Path, legacyExtras(s))
		case seed.LegacyRetry:
			r.fail(exitRetry, "legacy %s: %s: nothing was migrated from it; run hist-seed again later", s.Name, s.Err)
		case seed.LegacySkipped:
			if s.Err != "" {
				r.e.Errorf("legacy %s: %s: %s, skipped", s.Name, s.Path, s.Err)
			}
		}
	}
}

// bootstrap reports the bootstrap.
func (r *reporter) bootstrap(brep *seed.Report, berr error, st store.Store) {
	r.out.Sources, r.out.Seeds = append(r.out.Sources, brep.Sources...), append(r.out.Seeds, brep.Files...)
	if berr != nil {
		r.out.Errors = append(r.out.Errors, berr.Error())
		r.worse(cli.ExitFailure)
		// A seed file that could not be written is reported below; a
		// failure before any was (a temp file, the lock) is said here.
		if !slices.ContainsFunc(brep.Files, func(f seed.FileResult) bool { return f.Status == seed.FileFailed }) {
			r.e.Errorf("%v: no seed file was written; fix it and run hist-seed again", berr)
		}
	}
	if brep.Untrusted != nil {
		r.fail(cli.ExitUntrusted, "%v: no seed file was written; the import waits until hidden.json can be read", brep.Untrusted)
	}
	if brep.Busy != nil {
		r.fail(exitRetry, "%v: no seed file was written; run hist-seed again", brep.Busy)
	}
	var missing []string
	for _, s := range brep.Sources {
		switch s.Status {
		case seed.SourceMissing:
			if r.explicit {
				r.say("%s: no transcripts at %s", s.Name, s.Root)
			} else {
				missing = append(missing, s.Name)
			}
		case seed.SourceRetry:
			r.fail(exitRetry, "%s: %s: nothing was written for %s; run hist-seed again later", s.Name, s.Err, s.Name)
		case seed.SourceLayout:
			r.fail(exitLayout, "%s: layout not recognised (%s): skipped", s.Name, s.Err)
		case seed.SourceRead:
			var unchanged string
			if s.Unchanged > 0 {
				unchanged = words.Plural(s.Unchanged, "file", "files") + " unchanged, "
			}
			r.say("%s: %sread %s (%.1f MB) in %s: %s%s", s.Name, unchanged, words.Plural(s.Files, "file", "files"),
				float64(s.Bytes)/1e6, s.Elapsed.Round(time.Millisecond), prompts(s.Prompts), sourceExtras(s))
			for _, u := range s.Undecodable {
				r.e.Warnf("%s: %s: %v: passed over (the rest of %s is imported); move it away or delete it: it is read again only once it changes", s.Name, u.Path, u.Err, s.Name)
			}
		}
	}
	if len(missing) > 0 {
		r.say("not found: %s", strings.Join(missing, ", "))
	}
	if brep.Swept > 0 {
		r.say("also removed %s that other machines' tombstones hide", words.Plural(brep.Swept, "copy", "copies"))
	}
	if brep.SweepErr != "" {
		r.e.Warnf("removing what other machines' tombstones hide: %s (they stay hidden; the next delete, compaction or import tries again)", brep.SweepErr)
	}
	if brep.RegistryErr != "" {
		r.e.Warnf("updating %s: %s (the seeds are written; labels may show the project hash)", st.Registry(), brep.RegistryErr)
	}
	for _, f := range brep.Files {
		// With every project asked for, the ones with nothing new go unsaid.
		if f.Status == seed.FileNone && !r.oneProject && f.Live+f.Hidden+f.Recent == 0 {
			continue
		}
		if f.Status == seed.FileFailed {
			r.e.Errorf("%s: %s: writing %s: %s: nothing was written for it; fix it and run hist-seed again", f.Source, f.Cwd, f.Path, f.Err)
			continue
		}
		what := "nothing new"
		switch f.Status {
		case seed.FileWritten:
			what = fmt.Sprintf("%s written to %s", prompts(f.Prompts), filepath.Base(f.Path))
		case seed.FileWould:
			what = fmt.Sprintf("%s would be written to %s (dry run)", prompts(f.Prompts), filepath.Base(f.Path))
		}
		r.say("%s: %s: %s%s", f.Source, f.Cwd, what, fileExtras(f))
	}
}

// finish prints the report when asked (asJSON) and returns the exit code.
func (r *reporter) finish(asJSON bool) int {
	r.out.Exit = r.code
	if asJSON {
		enc := json.NewEncoder(r.e.Stdout)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		enc.Encode(r.out)
	}
	return r.code
}

// severity orders the exit codes, the one that matters most first.
var severity = []int{cli.ExitFailure, cli.ExitUntrusted, exitRetry, exitMigLock, exitLayout}

// rank is c's place in severity (past its end when c is not there).
func rank(c int) int {
	if i := slices.Index(severity, c); i >= 0 {
		return i
	}
	return len(severity)
}

func prompts(n int) string { return words.Plural(n, "prompt", "prompts") }

// said gathers the parts of a summary line's parenthesis.
type said []string

// add adds text when n is not 0.
func (p *said) add(n int, text string) {
	if n != 0 {
		*p = append(*p, text)
	}
}

// paren is " (parts, ...tail)", or "" without parts.
func (p said) paren(tail string) string {
	if len(p) == 0 {
		return ""
	}
	return " (" + strings.Join(p, ", ") + tail + ")"
}

// legacyExtras says what the migration of a file left out.
func legacyExtras(s seed.LegacyResult) string {
	var p said
	p.add(s.Hidden, fmt.Sprintf("%d hidden by hidden.json", s.Hidden))
	p.add(s.Dupes, fmt.Sprintf("%d already there", s.Dupes))
	p.add(s.Malformed, words.Plural(s.Malformed, "malformed line", "malformed lines")+" skipped")
	return p.paren(" left out")
}

// fileExtras says what a project's import left out, and why.
func fileExtras(f seed.FileResult) string {
	var before, left said
	before.add(f.Known, fmt.Sprintf("%d imported before", f.Known))
	before.add(f.Recent, fmt.Sprintf("%d typed in the last %s, left to the next run", f.Recent, seed.Settle))
	left.add(f.Live, fmt.Sprintf("%d captured live", f.Live))
	left.add(f.Hidden, fmt.Sprintf("%d hidden by hidden.json", f.Hidden))
	left.add(f.Dupes, fmt.Sprintf("%d repeated", f.Dupes))
	if len(left) == 0 {
		return before.paren("")
	}
	text := strings.Join(left, ", ") + " left out"
	if len(before) > 0 {
		text = strings.Join(before, ", ") + "; " + text
	}
	return " (" + text + ")"
}

func sourceExtras(s seed.SourceResult) string {
	var p said
	p.add(s.Malformed, words.Plural(s.Malformed, "malformed line", "malformed lines")+" skipped")
	p.add(s.Skipped, words.Plural(s.Skipped, "file", "files")+" passed over")
	p.add(s.Subagent, words.Plural(s.Subagent, "subagent transcript", "subagent transcripts")+" passed over")
	p.add(s.NoCwd, prompts(s.NoCwd)+" without a project folder")
	p.add(s.Approx, words.Plural(s.Approx, "with an approximate time", "with approximate times"))
	return p.paren("")
}

// report is what --json prints.
type report struct {
	Store     string                `json:"store"`
	DryRun    bool                  `json:"dry_run"`
	Migration *seed.MigrationReport `json:"migration"`
	Sources   []seed.SourceResult   `json:"sources"`
	Seeds     []seed.FileResult     `json:"seeds"`
	Errors    []string              `json:"errors,omitempty"`
	Exit      int                   `json:"exit"`
}
