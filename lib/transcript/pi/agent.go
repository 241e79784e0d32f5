package pi

import "hist/lib/transcript"

// Agent is pi: its sessions, and no prompt-recall file or hook (its
// extension captures live, see scripts/pi).
var Agent = transcript.Agent{
	Name:    transcript.SrcPi,
	Display: "pi",
	Where:   "$PI_CODING_AGENT_SESSION_DIR, $PI_CODING_AGENT_DIR/sessions, ~/.pi/agent/sessions",
	Resume:  []string{"pi", "--session"},
	Root:    DefaultRoot,
	Scan:    ScanKept,
}
