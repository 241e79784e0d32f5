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

// reporter says what a run did: one line per problem and, unless -q, one
// summary line per source and per seed file on stderr; the report --json
// prints; and the exit code.
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

// migration reports the legacy migration.
func (r *reporter) migration(mig *seed.MigrationReport, merr error) {
	r.out.Migration = migrationJSON(mig)
	if merr != nil {
		r.e.Errorf("legacy migration: %v: nothing more was migrated; fix it and run hist-seed again", merr)
		r.out.Errors = append(r.out.Errors, "legacy migration: "+merr.Error())
		r.worse(cli.ExitFailure)
	}
	if mig.Untrusted != nil {
		r.e.Errorf("%v: nothing was imported; the import waits until hidden.json can be read", mig.Untrusted)
		r.worse(cli.ExitUntrusted)
	}
	if mig.LockHeld != "" {
		r.e.Errorf("legacy migration skipped: %s exists (a hist-seed was stopped while migrating, or one is running): remove that folder by hand once no hist-seed runs", mig.LockHeld)
		r.worse(exitMigLock)
	}
	if mig.Busy != nil {
		r.e.Errorf("legacy migration: %v: nothing was migrated; run hist-seed again", mig.Busy)
		r.worse(exitRetry)
	}
	for _, s := range mig.Sources {
		switch s.Status {
		case seed.LegacyMigrated, seed.LegacyWould:
			if r.quiet {
				continue
			}
			verb := "added to"
			if s.Status == seed.LegacyWould {
				verb = "would be added to"
			}
			r.e.Say("legacy %s: %s %s %s from %s%s", s.Name, prompts(s.Added), verb,
				filepath.Base(mig.Global), s.Path, extras(s.Hidden, s.Dupes, s.Stats.Malformed, "already there"))
		case seed.LegacyRetry:
			r.e.Errorf("legacy %s: %s: nothing was migrated from it; run hist-seed again later", s.Name, s.Err)
			r.worse(exitRetry)
		case seed.LegacySkipped:
			if s.Err != "" {
				r.e.Errorf("legacy %s: %s: %s, skipped", s.Name, s.Path, s.Err)
			}
		}
	}
}

// bootstrap reports the bootstrap.
func (r *reporter) bootstrap(brep *seed.Report, berr error, st store.Store) {
	r.out.Sources, r.out.Seeds = bootstrapJSON(brep), append(r.out.Seeds, brep.Files...)
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
		r.e.Errorf("%v: no seed file was written; the import waits until hidden.json can be read", brep.Untrusted)
		r.worse(cli.ExitUntrusted)
	}
	if brep.Busy != nil {
		r.e.Errorf("%v: no seed file was written; run hist-seed again", brep.Busy)
		r.worse(exitRetry)
	}
	var missing []string
	for _, s := range brep.Sources {
		switch s.Status {
		case seed.SourceMissing:
			if r.explicit {
				if !r.quiet {
					r.e.Say("%s: no transcripts at %s", s.Name, s.Root)
				}
			} else {
				missing = append(missing, s.Name)
			}
		case seed.SourceRetry:
			r.e.Errorf("%s: %s: nothing was written for %s; run hist-seed again later", s.Name, s.Err, s.Name)
			r.worse(exitRetry)
		case seed.SourceLayout:
			r.e.Errorf("%s: layout not recognised (%s): skipped", s.Name, s.Err)
			r.worse(exitLayout)
		case seed.SourceRead:
			if !r.quiet {
				var unchanged string
				if s.Unchanged > 0 {
					unchanged = words.Plural(s.Unchanged, "file", "files") + " unchanged, "
				}
				r.e.Say("%s: %sread %s (%s) in %s: %s%s", s.Name, unchanged, words.Plural(s.Stats.Files, "file", "files"),
					mb(s.Stats.Bytes), s.Elapsed.Round(time.Millisecond), prompts(s.Stats.Prompts), sourceExtras(s))
			}
			for _, u := range s.Stats.Undecodable {
				r.e.Warnf("%s: %s: %v: passed over (the rest of %s is imported); move it away or delete it: it is read again only once it changes", s.Name, u.Path, u.Err, s.Name)
			}
		}
	}
	if len(missing) > 0 && !r.quiet {
		r.e.Say("not found: %s", strings.Join(missing, ", "))
	}
	if brep.Swept > 0 && !r.quiet {
		r.e.Say("also removed %s that other machines' tombstones hide", words.Plural(brep.Swept, "copy", "copies"))
	}
	if brep.SweepErr != "" {
		r.e.Warnf("removing what other machines' tombstones hide: %s (they stay hidden; the next delete, compaction or import tries again)", brep.SweepErr)
	}
	if brep.RegistryErr != "" {
		r.e.Warnf("updating %s: %s (the seeds are written; labels may show the project hash)", st.Registry(), brep.RegistryErr)
	}
	for _, f := range brep.Files {
		// With every project asked for, the ones with nothing new go
		// unsaid.
		if f.Status == seed.FileNone && !r.oneProject && f.Live+f.Hidden+f.Recent == 0 {
			continue
		}
		if f.Status == seed.FileFailed {
			r.e.Errorf("%s: %s: writing %s: %s: nothing was written for it; fix it and run hist-seed again", f.Source, f.Cwd, f.Path, f.Err)
			continue
		}
		if r.quiet {
			continue
		}
		name := filepath.Base(f.Path)
		var what string
		switch f.Status {
		case seed.FileWritten:
			what = fmt.Sprintf("%s written to %s", prompts(f.Prompts), name)
		case seed.FileWould:
			what = fmt.Sprintf("%s would be written to %s (dry run)", prompts(f.Prompts), name)
		case seed.FileNone:
			what = "nothing new"
		}
		r.e.Say("%s: %s: %s%s", f.Source, f.Cwd, what, fileExtras(f))
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

// rank orders exit codes: the lower, the more it matters.
func rank(code int) int {
	switch code {
	case cli.ExitFailure:
		return 1
	case cli.ExitUntrusted:
		return 2
	case exitRetry:
		return 3
	case exitMigLock:
		return 4
	case exitLayout:
		return 5
	}
	return 9
}

func prompts(n int) string { return words.Plural(n, "prompt", "prompts") }

func mb(n int64) string { return fmt.Sprintf("%.1f MB", float64(n)/1e6) }

func extras(hidden, dupes, malformed int, dupWord string) string {
	var parts []string
	if hidden > 0 {
		parts = append(parts, fmt.Sprintf("%d hidden by hidden.json", hidden))
	}
	if dupes > 0 {
		parts = append(parts, fmt.Sprintf("%d %s", dupes, dupWord))
	}
	if malformed > 0 {
		parts = append(parts, words.Plural(malformed, "malformed line", "malformed lines")+" skipped")
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, ", ") + " left out)"
}

// fileExtras says what a project's import left out, and why.
func fileExtras(f seed.FileResult) string {
	var before string
	if f.Known > 0 {
		before = fmt.Sprintf("%d imported before", f.Known)
	}
	var parts []string
	if f.Live > 0 {
		parts = append(parts, fmt.Sprintf("%d captured live", f.Live))
	}
	if f.Hidden > 0 {
		parts = append(parts, fmt.Sprintf("%d hidden by hidden.json", f.Hidden))
	}
	if f.Dupes > 0 {
		parts = append(parts, fmt.Sprintf("%d repeated", f.Dupes))
	}
	if f.Recent > 0 {
		if before != "" {
			before += ", "
		}
		before += fmt.Sprintf("%d typed in the last %s, left to the next run", f.Recent, seed.Settle)
	}
	switch {
	case len(parts) > 0 && before != "":
		return " (" + before + "; " + strings.Join(parts, ", ") + " left out)"
	case len(parts) > 0:
		return " (" + strings.Join(parts, ", ") + " left out)"
	case before != "":
		return " (" + before + ")"
	}
	return ""
}

func sourceExtras(s seed.SourceResult) string {
	var parts []string
	if s.Stats.Malformed > 0 {
		parts = append(parts, words.Plural(s.Stats.Malformed, "malformed line", "malformed lines")+" skipped")
	}
	if s.Stats.Skipped > 0 {
		parts = append(parts, words.Plural(s.Stats.Skipped, "file", "files")+" passed over")
	}
	if s.Stats.Subagent > 0 {
		parts = append(parts, words.Plural(s.Stats.Subagent, "subagent transcript", "subagent transcripts")+" passed over")
	}
	if s.NoCwd > 0 {
		parts = append(parts, prompts(s.NoCwd)+" without a project folder")
	}
	if s.Approx > 0 {
		parts = append(parts, words.Plural(s.Approx, "with an approximate time", "with approximate times"))
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, ", ") + ")"
}

// report is what --json prints.
type report struct {
	Store     string            `json:"store"`
	DryRun    bool              `json:"dry_run"`
	Migration migrationReport   `json:"migration"`
	Sources   []sourceReport    `json:"sources"`
	Seeds     []seed.FileResult `json:"seeds"`
	Errors    []string          `json:"errors,omitempty"`
	Exit      int               `json:"exit"`
}

type migrationReport struct {
	LockHeld  string         `json:"lock_held,omitempty"`
	Untrusted string         `json:"untrusted,omitempty"`
	Busy      string         `json:"busy,omitempty"`
	Sources   []legacyReport `json:"sources"`
}

type legacyReport struct {
	Source    string `json:"source"`
	Path      string `json:"path"`
	Status    string `json:"status"`
	Read      int    `json:"read"`
	Added     int    `json:"added"`
	Hidden    int    `json:"hidden"`
	Repeated  int    `json:"already_there"`
	Malformed int    `json:"malformed"`
	Error     string `json:"error,omitempty"`
}

type sourceReport struct {
	Source    string  `json:"source"`
	Root      string  `json:"root"`
	Status    string  `json:"status"`
	Files     int     `json:"files"`
	Bytes     int64   `json:"bytes"`
	Prompts   int     `json:"prompts"`
	Malformed int     `json:"malformed"`
	Skipped   int     `json:"skipped"`
	Unchanged int     `json:"unchanged"`
	NoCwd     int     `json:"no_cwd"`
	Approx    int     `json:"approx_times"`
	Seconds   float64 `json:"seconds"`
	Error     string  `json:"error,omitempty"`
	// Undecodable names the files passed over: their content cannot be
	// decoded.
	Undecodable []undecodable `json:"undecodable,omitempty"`
}

type undecodable struct {
	Path  string `json:"path"`
	Error string `json:"error"`
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func migrationJSON(m *seed.MigrationReport) migrationReport {
	out := migrationReport{LockHeld: m.LockHeld, Untrusted: errString(m.Untrusted), Busy: errString(m.Busy),
		Sources: []legacyReport{}}
	for _, s := range m.Sources {
		out.Sources = append(out.Sources, legacyReport{
			Source: s.Name, Path: s.Path, Status: s.Status, Read: s.Stats.Prompts, Added: s.Added,
			Hidden: s.Hidden, Repeated: s.Dupes, Malformed: s.Stats.Malformed, Error: s.Err,
		})
	}
	return out
}

func bootstrapJSON(b *seed.Report) []sourceReport {
	srcs := []sourceReport{}
	for _, s := range b.Sources {
		sr := sourceReport{
			Source: s.Name, Root: s.Root, Status: s.Status, Files: s.Stats.Files, Bytes: s.Stats.Bytes,
			Prompts: s.Stats.Prompts, Malformed: s.Stats.Malformed, Skipped: s.Stats.Skipped, Unchanged: s.Unchanged, NoCwd: s.NoCwd, Approx: s.Approx,
			Seconds: s.Elapsed.Seconds(), Error: s.Err,
		}
		for _, u := range s.Stats.Undecodable {
			sr.Undecodable = append(sr.Undecodable, undecodable{u.Path, u.Err.Error()})
		}
		srcs = append(srcs, sr)
	}
	return srcs
}
