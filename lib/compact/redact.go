package compact

import (
	"path/filepath"
	"sort"

	"hist/lib/deletion"
	"hist/lib/identity"
	"hist/lib/record"
	"hist/lib/redact"
	"hist/lib/store"
	"hist/lib/tombstone"
)

// RedactReport is what Redact did (or would do, dry run).
type RedactReport struct {
	Files     int         `json:"files"`             // store files read
	Redacted  int         `json:"redacted"`          // records whose text was redacted
	Hidden    int         `json:"hidden"`            // hidden records that needed redaction: removed instead
	Rewritten []string    `json:"rewritten"`         // files rewritten, sorted
	Foreign   int         `json:"foreign,omitempty"` // other machines' files: left to their machine
	Carries   []string    `json:"carries,omitempty"`
	Errors    []FileError `json:"errors,omitempty"`
}

// Redact re-redacts every store file of this machine in the scope (seed
// files, claims, carries and, with sc.All, history-global.jsonl included;
// docs/hist-compact.md, "Redacting a store"): each record whose text
// redact.Text changes is written again with the redacted text, by
// deletion.EditFile; a file where nothing changes is left alone. A hidden
// record that would change is removed rather than redacted: its tombstone
// names the text as it was. The caller holds the rewriters' lock, unless
// dry.
func Redact(st store.Store, sc store.Scope, hidden *tombstone.Set, dry bool) *RedactReport {
	rep := &RedactReport{Rewritten: []string{}}
	files, err := st.Files(sc)
	if err != nil {
		rep.Errors = append(rep.Errors, FileError{Path: st.Root, Err: "listing the store: " + err.Error()})
		return rep
	}
	legacy := st.OwnsLegacy(!dry)
	for _, f := range files {
		if !st.Owns(filepath.Base(f.Path), legacy) {
			rep.Foreign++
			continue
		}
		rep.Files++
		var redacted, dropped int
		var norm []byte
		edit := func(line []byte) ([]byte, bool) {
			rec, err := record.Parse(line)
			if err != nil {
				return nil, false
			}
			text := redact.Text(rec.Text)
			if text == rec.Text {
				return nil, false
			}
			if hidden != nil && !hidden.Empty() {
				norm = identity.AppendNormalized(norm[:0], rec.Text)
				if hidden.HiddenNormalized(norm) {
					dropped++
					return nil, true
				}
			}
			redacted++
			rec.Text = text
			return record.Marshal(rec), true
		}
		res := deletion.EditFile(f.Path, edit, dry)
		rep.Redacted += redacted
		rep.Hidden += dropped
		if res.Rewritten {
			rep.Rewritten = append(rep.Rewritten, f.Path)
		}
		if res.Carry != "" {
			rep.Carries = append(rep.Carries, res.Carry)
		}
		if res.Err != nil {
			rep.Errors = append(rep.Errors, FileError{Path: f.Path, Err: res.Err.Error()})
		}
	}
	sort.Strings(rep.Rewritten)
	if !dry {
		// A killed earlier run's temp files hold copies of prompts.
		deletion.SweepTemps(st, sc)
	}
	return rep
}
