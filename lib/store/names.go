package store

import (
	"strconv"
	"strings"

	"hist/lib/atomicfile"
)

// The names of the files a machine writes into a project's folder
// (docs/store-format.md, "Files"), built here and read back by Classify.

// SeedFile is the seed file of agent's first import on machine:
// seed@<machine>.jsonl for pi, seed-<agent>@<machine>.jsonl for others.
func SeedFile(agent, machine string) string {
	if agent == "pi" {
		return Named(SeedName, machine)
	}
	return Named("seed-"+agent+".jsonl", machine)
}

// IsSeedFile reports whether base is agent's seed file from any machine.
func IsSeedFile(base, agent string) bool { return base == SeedFile(agent, MachineOf(base)) }

// ImportFile is a new name for one of agent's later imports, written at
// ms (Unix milliseconds) by machine.
func ImportFile(agent, machine string, ms int64) string {
	return Named("import-"+agent+"-"+stamp(ms)+".jsonl", machine)
}

// ImportLog is the file a machine's later imports from agent append to:
// import-<agent>@<machine>.jsonl.
func ImportLog(agent, machine string) string { return Named("import-"+agent+".jsonl", machine) }

// IsGlobal reports whether base is history-global.jsonl, or a machine's
// history-global@<machine>.jsonl (from its legacy migration).
func IsGlobal(base string) bool {
	return base == GlobalName || base == Named(GlobalName, MachineOf(base))
}

// CompactFile is a new name for a compaction's merged file.
func CompactFile(machine string, ms int64) string {
	return Named("compact-"+stamp(ms)+".jsonl", machine)
}

// CaptureFile is the capture file of one agent process (ValidInstance).
func CaptureFile(instance, machine string) string { return Named(instance+".jsonl", machine) }

// CarryFile is a new name for a carry file of orig: lines a rewrite could
// not put back.
func CarryFile(orig string, ms int64) string { return orig + ".carry-" + stamp(ms) + ".jsonl" }

// ClaimFile is a new name for a compaction's claim of orig.
func ClaimFile(orig string, ms int64) string { return orig + ".gc-" + stamp(ms) + ".jsonl" }

func stamp(ms int64) string { return strconv.FormatInt(ms, 10) + "-" + atomicfile.RandHex(4) }

// ValidInstance reports whether id can name a capture file: 1 to 200
// letters, digits, '.', '_' and '-', not starting with '.' or '-', and
// not a name of another kind of store file (seed, import, compact, carry,
// claim, global).
func ValidInstance(id string) bool {
	if id == "" || len(id) > 200 || id[0] == '.' || id[0] == '-' {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(c == '.' || c == '_' || c == '-' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z') {
			return false
		}
	}
	if strings.Contains(id, conflictMark) {
		return false
	}
	for _, m := range []string{"", "m"} {
		if Classify(CaptureFile(id, m)) != Capture {
			return false
		}
	}
	return true
}
