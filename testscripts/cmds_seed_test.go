package testscripts

import (
	"bytes"
	"crypto/sha256"
	"database/sql"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/rogpeppe/go-internal/testscript"
	_ "modernc.org/sqlite"
)

func init() {
	// seeddata NAME DEST: copies testdata/seed/NAME (a folder of real or
	// hand-made transcripts) to DEST, keeping the tree.
	cmds["seeddata"] = func(ts *testscript.TestScript, neg bool, args []string) {
		if len(args) != 2 || neg {
			ts.Fatalf("usage: seeddata NAME DEST")
		}
		src := filepath.Join("testdata", "seed", args[0])
		dst := ts.MkAbs(args[1])
		ts.Check(filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(src, p)
			out := filepath.Join(dst, rel)
			if d.IsDir() {
				return os.MkdirAll(out, 0o755)
			}
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			return os.WriteFile(out, data, 0o644)
		}))
	}
	// lines N FILE: FILE has exactly N lines.
	cmds["lines"] = func(ts *testscript.TestScript, neg bool, args []string) {
		if len(args) != 2 || neg {
			ts.Fatalf("usage: lines N FILE")
		}
		want, err := strconv.Atoi(args[0])
		ts.Check(err)
		data, err := os.ReadFile(ts.MkAbs(args[1]))
		ts.Check(err)
		if got := bytes.Count(data, []byte("\n")); got != want {
			ts.Fatalf("%s has %d lines, want %d", args[1], got, want)
		}
	}
}

func envOf(ts *testscript.TestScript) []string {
	var env []string
	for _, k := range []string{"HOME", "PATH", "STORE", "CONFIG", "GENTLE_PI_HISTORY_CAPTURE", "GENTLE_PI_CONFIG_HOME",
		"PI_CODING_AGENT_DIR", "PI_CODING_AGENT_SESSION_DIR", "CLAUDE_CONFIG_DIR", "CODEX_HOME",
		"XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CONFIG_HOME", "OPENCODE_DB", "HIST_MACHINE", binDirVar, "TMPDIR"} {
		if v := ts.Getenv(k); v != "" {
			env = append(env, k+"="+v)
		}
	}
	return append(env, "TERM=xterm")
}

// openSQLite opens the SQLite database at path (made when missing, its
// folder too), as an agent writing it would.
func openSQLite(ts *testscript.TestScript, path string) *sql.DB {
	path = ts.MkAbs(path)
	ts.Check(os.MkdirAll(filepath.Dir(path), 0o755))
	db, err := sql.Open("sqlite", path)
	ts.Check(err)
	return db
}

func init() {
	// sqlexec DB FILE: runs the SQL statements of FILE on the SQLite
	// database DB (made when missing), as an agent writing it would.
	cmds["sqlexec"] = func(ts *testscript.TestScript, neg bool, args []string) {
		if len(args) != 2 || neg {
			ts.Fatalf("usage: sqlexec DB FILE")
		}
		db := openSQLite(ts, args[0])
		defer db.Close()
		if _, err := db.Exec(ts.ReadFile(args[1])); err != nil {
			ts.Fatalf("%s: %v", args[1], err)
		}
	}

	// cursorstore PATH AGENTID CREATEDAT WORKSPACE MSGS: builds a
	// cursor-agent chat store (store.db) at PATH the way the agent lays it
	// out: table meta, row '0' = hex of {"agentId","latestRootBlobId",
	// "createdAt"}; table blobs of content-addressed (sha256) blobs; a
	// protobuf root blob with the message blob ids (field 1) and the
	// workspace (field 9). MSGS is a file of JSON messages, one a line.
	// On an existing store it adds the blobs and points the chat at the
	// new root, as the agent does when a chat goes on.
	cmds["cursorstore"] = func(ts *testscript.TestScript, neg bool, args []string) {
		if len(args) != 5 || neg {
			ts.Fatalf("usage: cursorstore PATH AGENTID CREATEDAT WORKSPACE MSGS")
		}
		db := openSQLite(ts, args[0])
		defer db.Close()
		exec := func(q string, a ...any) {
			if _, err := db.Exec(q, a...); err != nil {
				ts.Fatalf("%s: %v", q, err)
			}
		}
		exec(`CREATE TABLE IF NOT EXISTS blobs (id TEXT PRIMARY KEY, data BLOB)`)
		exec(`CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT)`)
		var root []byte
		for _, line := range strings.Split(ts.ReadFile(args[4]), "\n") {
			if strings.TrimSpace(line) == "" {
				continue
			}
			sum := sha256.Sum256([]byte(line))
			exec(`INSERT OR IGNORE INTO blobs (id, data) VALUES (?, ?)`, hex.EncodeToString(sum[:]), []byte(line))
			root = append(root, protoField(1, sum[:])...)
		}
		root = append(root, protoField(9, []byte(args[3]))...)
		sum := sha256.Sum256(root)
		exec(`INSERT OR IGNORE INTO blobs (id, data) VALUES (?, ?)`, hex.EncodeToString(sum[:]), root)
		created, err := strconv.ParseInt(args[2], 10, 64)
		ts.Check(err)
		meta, _ := json.Marshal(map[string]any{"agentId": args[1], "latestRootBlobId": hex.EncodeToString(sum[:]),
			"name": "New Agent", "createdAt": created})
		exec(`INSERT OR REPLACE INTO meta (key, value) VALUES ('0', ?)`, hex.EncodeToString(meta))
	}
}

func protoField(n int, payload []byte) []byte {
	b := binary.AppendUvarint(nil, uint64(n<<3|2))
	b = binary.AppendUvarint(b, uint64(len(payload)))
	return append(b, payload...)
}
