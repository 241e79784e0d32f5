package pi

import (
	"path/filepath"

	"hist/lib/envdir"
	"hist/lib/transcript"
)

// Config is pi's folder: $PI_CODING_AGENT_DIR, else ~/.pi/agent.
func Config(env transcript.Env, home string) string {
	if d := envdir.Get(env, "PI_CODING_AGENT_DIR", home); d != "" {
		return d
	}
	return filepath.Join(home, ".pi", "agent")
}

// Agent is pi: its sessions, and no prompt-recall file or hook (its
// extension captures live, see scripts/pi).
var Agent = transcript.Agent{
	Name:    transcript.SrcPi,
	Display: "pi",
	Where:   "$PI_CODING_AGENT_SESSION_DIR, $PI_CODING_AGENT_DIR/sessions, ~/.pi/agent/sessions",
	Resume:  []string{"pi", "--session"},
	Config:  Config,
	Root:    DefaultRoot,
	Scan:    Scan,
}
