//go:build unix

package testscripts

import (
	"bufio"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// hostileMB is the size of the single line in each transcript that
// TestHostileHugeTranscriptLine feeds to hist-seed. The default, 256 MiB,
// keeps CI quick and still shows whether the line is loaded (the RSS limit
// is 200 MB); the full size is -hostile.mb=1024 (2 GB of files;
// 56 s and 3.1 GB RSS while the line reader still assembles lines).
var hostileMB = flag.Int("hostile.mb", 256, "size in MiB of the one line in each transcript of TestHostileHugeTranscriptLine")

// rssLimit is the most hist-seed may hold resident while it reads the huge
// line.
const rssLimit = 200 << 20

var hostileFrom = "pi,claude"

// TestHostileHugeTranscriptLine gives hist-seed a pi session and a Claude
// Code transcript, each with one line of -hostile.mb MiB (a tool result:
// not a prompt) between two prompts, and checks that both prompts are
// imported while the peak RSS (wait4's ru_maxrss) stays under 200 MB: the
// line is streamed past, never loaded whole.
func TestHostileHugeTranscriptLine(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: writes a large file")
	}
	dir := t.TempDir()
	size := int64(*hostileMB) << 20
	var fs syscall.Statfs_t
	if err := syscall.Statfs(dir, &fs); err != nil {
		t.Fatal(err)
	}
	if free := int64(fs.Bavail) * int64(fs.Bsize); free < 3*size+(64<<20) {
		t.Skipf("%d MiB free in %s: need 3×%d MiB for the two transcripts", free>>20, dir, *hostileMB)
	}
	home := filepath.Join(dir, "home")
	proj := filepath.Join(dir, "proj")
	for _, d := range []string{home, proj} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	canon, _ := filepath.EvalSymlinks(proj)

	// pi: a session under ~/.pi/agent/sessions/<dir>/.
	piFile := filepath.Join(home, ".pi", "agent", "sessions", "--proj--", "2026-11-30T01-00-00-000Z_s1.jsonl")
	writeHuge(t, piFile, size,
		`{"type":"session","version":3,"id":"s1","timestamp":"2026-11-30T01:00:00.000Z","cwd":"`+canon+`"}`+"\n"+
			piUser("u1", "pi prompt before the huge line", "2026-11-30T01:00:01.000Z")+"\n",
		`{"type":"message","id":"big","parentId":"u1","timestamp":"2026-11-30T01:00:02.000Z","message":{"role":"toolResult","toolCallId":"c1","toolName":"bash","content":[{"type":"text","text":"`,
		`"}],"timestamp":1796000002000}}`+"\n"+
			piUser("u2", "pi prompt after the huge line", "2026-11-30T01:00:03.000Z")+"\n")

	// Claude Code: ~/.claude/projects/<dir>/<session>.jsonl.
	clFile := filepath.Join(home, ".claude", "projects", "-proj", "c1.jsonl")
	writeHuge(t, clFile, size,
		clUser("claude prompt before the huge line", "2026-11-30T01:00:01.000Z", canon)+"\n",
		`{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"`,
		`"}]},"cwd":"`+canon+`","sessionId":"c1","timestamp":"2026-11-30T01:00:02.000Z"}`+"\n"+
			clUser("claude prompt after the huge line", "2026-11-30T01:00:03.000Z", canon)+"\n")

	env := append(os.Environ(), "HOME="+home, "GENTLE_PI_HISTORY_CAPTURE=1",
		"PI_CODING_AGENT_DIR=", "PI_CODING_AGENT_SESSION_DIR=", "CLAUDE_CONFIG_DIR=", "GENTLE_PI_CONFIG_HOME=")
	start := time.Now()
	out, rss := runRSS(t, proj, env, filepath.Join(BinDir, "hist-seed"), "--from", hostileFrom, "-q")
	t.Logf("hist-seed on 2 × %d MiB lines: %v, peak RSS %d MiB\n%s", *hostileMB, time.Since(start).Round(time.Millisecond), rss>>20, out)
	if rss > rssLimit {
		t.Errorf("peak RSS %d MiB, over %d MiB: the line was loaded whole", rss>>20, rssLimit>>20)
	}
	list, _ := runRSS(t, proj, env, filepath.Join(BinDir, "hist-list"))
	for _, p := range []string{"pi prompt before", "pi prompt after", "claude prompt before", "claude prompt after"} {
		if !strings.Contains(list, p) {
			t.Errorf("%q was not imported; hist-list:\n%s", p, list)
		}
	}
}

func piUser(id, text, ts string) string {
	return `{"type":"message","id":"` + id + `","parentId":null,"timestamp":"` + ts + `","message":{"role":"user","content":[{"type":"text","text":"` + text + `"}],"timestamp":1796000000000}}`
}

func clUser(text, ts, cwd string) string {
	return `{"type":"user","message":{"role":"user","content":"` + text + `"},"uuid":"u-` + ts + `","timestamp":"` + ts + `","cwd":"` + cwd + `","sessionId":"c1","promptSource":"typed"}`
}

// writeHuge writes head, then open, then size bytes of "x", then tail.
func writeHuge(t *testing.T, path string, size int64, head, open, tail string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	w.WriteString(head)
	w.WriteString(open)
	chunk := []byte(strings.Repeat("x", 1<<20))
	for n := int64(0); n < size; n += int64(len(chunk)) {
		w.Write(chunk[:min(int64(len(chunk)), size-n)])
	}
	w.WriteString(tail)
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// runRSS runs a command and returns its combined output and its peak
// resident set size in bytes.
func runRSS(t *testing.T, dir string, env []string, name string, args ...string) (string, int64) {
	t.Helper()
	var buf strings.Builder
	cmd := exec.Command(name, args...)
	cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = dir, env, &buf, &buf
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %v: %v\n%s", filepath.Base(name), args, err, buf.String())
	}
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		t.Fatal("no rusage")
	}
	if runtime.GOOS == "darwin" {
		return buf.String(), int64(ru.Maxrss) // in bytes on macOS
	}
	return buf.String(), int64(ru.Maxrss) << 10 // in KiB on Linux
}
