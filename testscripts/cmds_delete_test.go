package testscripts

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"

	"github.com/rogpeppe/go-internal/testscript"

	"hist/lib/identity"
	"hist/lib/record"
)

func init() {
	// treesum DIR VAR: sets VAR to a digest of every path under DIR with
	// its mode, size, mtime (ns), inode and bytes ("none" when DIR is
	// missing), so "nothing changed" is one eq.
	cmds["treesum"] = func(ts *testscript.TestScript, neg bool, args []string) {
		if len(args) != 2 || neg {
			ts.Fatalf("usage: treesum DIR VAR")
		}
		root := ts.MkAbs(args[0])
		h := sha256.New()
		n := 0
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			fi, err := os.Lstat(p)
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(root, p)
			fmt.Fprintf(h, "%s\x00%v\x00%d\x00%d\x00%v\x00", rel, fi.Mode(), fi.Size(), fi.ModTime().UnixNano(), delInode(fi))
			if fi.Mode().IsRegular() {
				data, err := os.ReadFile(p)
				if err != nil {
					return err
				}
				h.Write(data)
			}
			n++
			return nil
		})
		if errors.Is(err, fs.ErrNotExist) {
			ts.Setenv(args[1], "none")
			return
		}
		ts.Check(err)
		ts.Setenv(args[1], fmt.Sprintf("%d:%s", n, hex.EncodeToString(h.Sum(nil))[:16]))
	}
	// tombstones N: $STORE/hidden.json holds N entries.
	cmds["tombstones"] = func(ts *testscript.TestScript, neg bool, args []string) {
		if len(args) != 1 || neg {
			ts.Fatalf("usage: tombstones N")
		}
		want, err := strconv.Atoi(args[0])
		ts.Check(err)
		if got := delHiddenEntries(ts); len(got) != want {
			ts.Fatalf("hidden.json holds %d entries, want %d", len(got), want)
		}
	}
	// tombstone TEXT [INDEX]: $STORE/hidden.json holds the key of TEXT
	// (at INDEX; a negative INDEX counts from the end). With !, it holds
	// no entry for TEXT.
	cmds["tombstone"] = func(ts *testscript.TestScript, neg bool, args []string) {
		if len(args) < 1 || len(args) > 2 {
			ts.Fatalf("usage: tombstone TEXT [INDEX]")
		}
		key := identity.Key(args[0])
		entries := delHiddenEntries(ts)
		at := -1
		for i, e := range entries {
			if e == key {
				at = i
			}
		}
		if neg {
			if at >= 0 {
				ts.Fatalf("hidden.json holds %q's key at %d", args[0], at)
			}
			return
		}
		if at < 0 {
			ts.Fatalf("hidden.json holds no key for %q", args[0])
		}
		if len(args) == 2 {
			want, err := strconv.Atoi(args[1])
			ts.Check(err)
			if want < 0 {
				want += len(entries)
			}
			if at != want {
				ts.Fatalf("%q's key is entry %d of %d, want %d", args[0], at, len(entries), want)
			}
		}
	}
	// fillhidden N [LEGACY...]: writes $STORE/hidden.json holding the
	// LEGACY plain entries, then the keys of "filler 0" ... "filler N-1".
	cmds["fillhidden"] = func(ts *testscript.TestScript, neg bool, args []string) {
		if len(args) < 1 || neg {
			ts.Fatalf("usage: fillhidden N [LEGACY...]")
		}
		n, err := strconv.Atoi(args[0])
		ts.Check(err)
		entries := append([]string{}, args[1:]...)
		for i := range n {
			entries = append(entries, identity.Key(fmt.Sprint("filler ", i)))
		}
		data, _ := json.Marshal(entries)
		p := delHiddenPath(ts)
		ts.Check(os.MkdirAll(filepath.Dir(p), 0o700))
		ts.Check(os.WriteFile(p, data, 0o600))
	}
	// copies N TEXT DIR: the store files (*.jsonl) under DIR hold N records
	// whose text is TEXT by identity.
	cmds["copies"] = func(ts *testscript.TestScript, neg bool, args []string) {
		if len(args) != 3 || neg {
			ts.Fatalf("usage: copies N TEXT DIR")
		}
		want, err := strconv.Atoi(args[0])
		ts.Check(err)
		norm := identity.Normalize(args[1])
		got := 0
		ts.Check(filepath.WalkDir(ts.MkAbs(args[2]), func(p string, d fs.DirEntry, err error) error {
			if err != nil || !d.Type().IsRegular() || filepath.Ext(p) != ".jsonl" {
				return err
			}
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			for _, line := range bytes.Split(data, []byte("\n")) {
				if rec, err := record.Parse(line); err == nil && identity.Normalize(rec.Text) == norm {
					got++
				}
			}
			return nil
		}))
		if got != want {
			ts.Fatalf("%d copies of %q under %s, want %d", got, args[1], args[2], want)
		}
	}
}

// delHiddenPath is the tombstone file of the script's machine:
// hidden@$HIST_MACHINE.json, or hidden.json, which that machine keeps
// writing when it was there first (docs/store-format.md).
func delHiddenPath(ts *testscript.TestScript) string {
	path := filepath.Join(ts.Getenv("STORE"), "hidden@"+ts.Getenv("HIST_MACHINE")+".json")
	if _, err := os.Stat(path); err != nil {
		path = filepath.Join(ts.Getenv("STORE"), "hidden.json")
	}
	return path
}

// delHiddenEntries reads delHiddenPath.
func delHiddenEntries(ts *testscript.TestScript) []string {
	data, err := os.ReadFile(delHiddenPath(ts))
	ts.Check(err)
	var entries []string
	ts.Check(json.Unmarshal(data, &entries))
	return entries
}
