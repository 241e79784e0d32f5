// What hist-capture does with a prompt: store it (Store), take it from an
// agent's hook payload (Hook), keep what went wrong where --status finds
// it (KeepProblems), and --status's report (Status).

package histcapture

import (
	"os"
	"path/filepath"
	"time"

	"hist/lib/cli"
	"hist/lib/identity"
	"hist/lib/instance"
	"hist/lib/record"
	"hist/lib/redact"
	"hist/lib/store"
	"hist/lib/words"
)

// Prompt is one prompt to store, and where it comes from.
type Prompt struct {
	Text     string
	Cwd      string // its project folder; the working directory when ""
	Instance string // names the capture file; one per calling process when ""
	TS       int64  // Unix milliseconds; now when 0
	Src      string // the agent that sent it, and its session, or ""
	Session  string
}

// Store stores p; the capture policy already said yes. The prompt is
// redacted first (unless GENTLE_PI_HISTORY_REDACT turns it off), so every
// check and the stored record see the redacted text; an empty or
// command-like prompt is not stored.
func Store(e *cli.Env, st store.Store, p Prompt) int {
	if redact.Enabled(e.Getenv(redact.EnvVar)) {
		p.Text = redact.Text(p.Text)
	}
	if !identity.Capturable(p.Text) {
		return cli.ExitOK
	}
	if p.Cwd == "" {
		wd, err := os.Getwd()
		if err != nil {
			e.Errorf("finding the working directory: %v: pass --cwd DIR", err)
			return cli.ExitFailure
		}
		p.Cwd = wd
	}
	canon, err := store.Canonical(p.Cwd)
	if err != nil {
		e.Errorf("resolving --cwd %q: %v", p.Cwd, err)
		return cli.ExitUsage
	}
	if p.Instance == "" {
		p.Instance = instance.ForParent()
	}
	if p.TS == 0 {
		p.TS = time.Now().UnixMilli()
	}
	// The machine id names the file (docs/store-format.md); a bad one is
	// refused before (ParseArgs), except for a hook, which is never failed.
	if code := e.NeedMachine(&st); code != cli.ExitOK {
		return code
	}
	hash, _ := store.ProjectOf(canon)
	path := filepath.Join(st.ProjectDir(hash), store.CaptureFile(p.Instance, st.Machine))
	line := record.Marshal(record.Record{Text: p.Text, TS: p.TS, Src: p.Src, Session: p.Session})
	if err := store.Append(path, line); err != nil {
		fix := "check the store folder (free space, permissions, a file or folder in the way)"
		if c := words.Chmod(path, err); c != "" {
			fix = "let hist in: " + c
		}
		e.Errorf("writing %s: %v: the prompt was not captured; %s", path, words.Describe(err), fix)
		return cli.ExitFailure
	}
	if err := st.Register(hash, canon); err != nil {
		// registry.json is advisory: the prompt is stored.
		e.Warnf("updating %s: %v (the prompt is stored; labels may show the project hash)", st.Registry(), err)
	}
	return cli.ExitOK
}
