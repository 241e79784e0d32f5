package opencode

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"hist/lib/transcript"
	"hist/lib/transcript/internal/ttest"
)

// benchDB builds, at path, a 1.x database in WAL mode as opencode keeps
// it (with its indexes): sessions sessions (in 50 project folders under dirs) of 50
// messages each, 25 user messages with one text part and 25 assistant
// messages with five parts (a step start, reasoning, a tool call with 3
// KB of output, text, a step finish). 2,000 sessions make 361 MB.
func benchDB(b *testing.B, path, dirs string, sessions int) {
	b.Helper()
	g := newDB(b, path, schema1+`
		CREATE INDEX message_session_time_created_id_idx ON message (session_id, time_created, id);
		CREATE INDEX part_session_idx ON part (session_id);`).exec(`PRAGMA journal_mode=WAL`)
	defer g.close()
	exec := func(q string, a ...any) { g.exec(q, a...) }
	out := strings.Repeat("output line of a tool, as long as a real one tends to be. ", 50)
	ts := int64(1700000000000)
	msg, prt := 0, 0
	for s := range sessions {
		exec("BEGIN")
		sid := fmt.Sprintf("ses_%06d", s)
		exec(`INSERT INTO session (id, project_id, directory, time_created) VALUES (?, 'p', ?, ?)`, sid, fmt.Sprintf("%s/proj-%02d", dirs, s%50), ts)
		for m := range 50 {
			ts += 1000
			msg++
			id := fmt.Sprintf("msg_%012d", msg)
			role := "user"
			if m%2 == 1 {
				role = "assistant"
			}
			exec(`INSERT INTO message (id, session_id, time_created, data) VALUES (?, ?, ?, ?)`, id, sid, ts,
				fmt.Sprintf(`{"role":%q,"time":{"created":%d},"agent":"build","model":{"providerID":"p","modelID":"m"}}`, role, ts))
			part := func(data string) {
				prt++
				exec(`INSERT INTO part (id, message_id, session_id, time_created, data) VALUES (?, ?, ?, ?, ?)`, fmt.Sprintf("prt_%012d", prt), id, sid, ts, data)
			}
			if role == "user" {
				part(fmt.Sprintf(`{"type":"text","text":"prompt %d of session %d: please look at the failing test in the parser and fix the off-by-one it reports"}`, m, s))
				continue
			}
			part(`{"type":"step-start"}`)
			part(`{"type":"reasoning","text":"` + strings.Repeat("thinking about it ", 20) + `"}`)
			part(`{"type":"tool","tool":"bash","state":{"status":"completed","input":{"command":"go test ./..."},"output":"` + out + `"}}`)
			part(`{"type":"text","text":"` + strings.Repeat("here is what I changed and why ", 20) + `"}`)
			part(`{"type":"step-finish","tokens":{"input":1000,"output":200}}`)
		}
		exec("COMMIT")
	}
}

// BenchmarkGrownDatabase reads a database whole, and from its cursor
// once one prompt was appended to a session. HIST_BENCH_SESSIONS sets its
// size (default 200 sessions); HIST_BENCH_DIR keeps it (opencode.db, its
// sessions' folders under proj/) for hist-seed's own runs.
func BenchmarkGrownDatabase(b *testing.B) {
	sessions := 200
	if n, err := strconv.Atoi(os.Getenv("HIST_BENCH_SESSIONS")); err == nil {
		sessions = n
	}
	dir := os.Getenv("HIST_BENCH_DIR")
	if dir == "" {
		dir = b.TempDir()
	}
	root := filepath.Join(dir, "opencode")
	path := filepath.Join(root, "opencode.db")
	if _, err := os.Stat(path); err != nil {
		benchDB(b, path, filepath.Join(dir, "proj"), sessions)
	}
	discard := func(transcript.Prompt) error { return nil }
	b.Run("whole", func(b *testing.B) {
		for b.Loop() {
			if _, err := Scan(root, discard); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("one prompt appended", func(b *testing.B) {
		cur := ttest.Cursors{}
		if _, err := ScanKept(root, cur, discard); err != nil {
			b.Fatal(err)
		}
		g := newDB(b, path, "")
		var n int
		if err := g.db.QueryRow(`SELECT count(*) FROM message`).Scan(&n); err != nil {
			b.Fatal(err)
		}
		id := fmt.Sprintf("msg_%012d", n+1)
		g.msg(id, "ses_000007", "user", 1750000000000+int64(n)).text("prt_"+id, id, "ses_000007", "one prompt more")
		g.close()
		from := cur[path]
		for b.Loop() {
			cur[path] = from
			if _, err := ScanKept(root, cur, discard); err != nil {
				b.Fatal(err)
			}
		}
	})
}
