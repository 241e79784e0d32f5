package testscripts

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/rogpeppe/go-internal/testscript"

	"hist/lib/record"
)

// listing runs the built hist-list --json with the script's environment
// and returns its prompts as sorted "ts<TAB>quoted text" lines: text and
// ts only, because the file field changes when files are merged.
func listing(ts *testscript.TestScript, args []string) []string {
	bin := filepath.Join(ts.Getenv("HIST_TEST_BINDIR"), "hist-list")
	if len(args) == 0 {
		args = []string{"--all"}
	}
	cmd := exec.Command(bin, append([]string{"--json"}, args...)...)
	cmd.Dir = ts.MkAbs(".")
	for _, k := range []string{"HOME", "PATH", "TMPDIR", "PI_CODING_AGENT_DIR", "GENTLE_PI_CONFIG_HOME", "GENTLE_PI_HISTORY_CAPTURE", "HIST_MACHINE"} {
		if v := ts.Getenv(k); v != "" {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var ee *exec.ExitError
	if err != nil && !(errors.As(err, &ee) && ee.ExitCode() == 1) {
		ts.Fatalf("hist-list --json %s: %v\n%s", strings.Join(args, " "), err, stderr.Bytes())
	}
	var lines []string
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var e struct {
			Text *string `json:"text"`
			TS   *int64  `json:"ts"`
		}
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil || e.Text == nil || e.TS == nil {
			ts.Fatalf("hist-list --json printed %q: %v", sc.Text(), err)
		}
		lines = append(lines, strconv.FormatInt(*e.TS, 10)+"\t"+strconv.Quote(*e.Text))
	}
	slices.Sort(lines)
	return lines
}

func snapPath(ts *testscript.TestScript, name string) string {
	return ts.MkAbs(filepath.Join(ts.Getenv("WORK"), ".listsnap-"+name))
}

func init() {
	// listsnap NAME [HIST-LIST ARGS...]: saves what hist-list --json
	// (default --all) shows, text and ts only. The listing must not be
	// empty: a snapshot of nothing could not catch a loss.
	cmds["listsnap"] = func(ts *testscript.TestScript, neg bool, args []string) {
		if len(args) < 1 || neg {
			ts.Fatalf("usage: listsnap NAME [hist-list args...]")
		}
		lines := listing(ts, args[1:])
		if len(lines) == 0 {
			ts.Fatalf("listsnap %s: hist-list shows nothing", args[0])
		}
		ts.Check(os.WriteFile(snapPath(ts, args[0]), []byte(strings.Join(lines, "\n")+"\n"), 0o600))
		ts.Logf("listsnap %s: %d prompts", args[0], len(lines))
	}
	// listsame NAME [HIST-LIST ARGS...]: hist-list --json shows exactly
	// the prompts (text and ts) of snapshot NAME.
	cmds["listsame"] = func(ts *testscript.TestScript, neg bool, args []string) {
		if len(args) < 1 {
			ts.Fatalf("usage: listsame NAME [hist-list args...]")
		}
		data, err := os.ReadFile(snapPath(ts, args[0]))
		ts.Check(err)
		want := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
		got := listing(ts, args[1:])
		same := slices.Equal(want, got)
		if same == neg {
			if neg {
				ts.Fatalf("listsame %s: the listing did not change", args[0])
			}
			ts.Fatalf("listsame %s: the listing changed:\n%s", args[0], diffLines(want, got))
		}
		ts.Logf("listsame %s: %d prompts", args[0], len(got))
	}
	// genfiles DIR PREFIX NFILES NPER TS0 [STEP]: writes NFILES capture
	// files DIR/PREFIX-<i>.jsonl of NPER records each, text
	// "PREFIX file <i> entry <j>", ts TS0 + i*STEP + j (STEP default 1000).
	cmds["genfiles"] = func(ts *testscript.TestScript, neg bool, args []string) {
		if (len(args) != 5 && len(args) != 6) || neg {
			ts.Fatalf("usage: genfiles DIR PREFIX NFILES NPER TS0 [STEP]")
		}
		num := func(s string) int64 {
			n, err := strconv.ParseInt(s, 10, 64)
			ts.Check(err)
			return n
		}
		dir, prefix := ts.MkAbs(args[0]), args[1]
		nfiles, nper, ts0, step := num(args[2]), num(args[3]), num(args[4]), int64(1000)
		if len(args) == 6 {
			step = num(args[5])
		}
		ts.Check(os.MkdirAll(dir, 0o700))
		for i := range nfiles {
			var b []byte
			for j := range nper {
				b = record.Append(b, record.Record{Text: fmt.Sprintf("%s file %d entry %d", prefix, i, j), TS: ts0 + i*step + j})
			}
			ts.Check(os.WriteFile(filepath.Join(dir, fmt.Sprintf("%s-%d.jsonl", prefix, i)), b, 0o600))
		}
	}
	// repofile PATH DST: copies PATH, relative to the repository's root,
	// to DST (for scripts that test files the repository ships).
	cmds["repofile"] = func(ts *testscript.TestScript, neg bool, args []string) {
		if len(args) != 2 || neg {
			ts.Fatalf("usage: repofile PATH DST")
		}
		data, err := os.ReadFile(filepath.Join("..", filepath.FromSlash(args[0]))) // tests run in testscripts/
		ts.Check(err)
		ts.Check(os.WriteFile(ts.MkAbs(args[1]), data, 0o600))
	}
	// linecount N REGEX DIR: exactly N lines of the regular files in DIR
	// (not below it) match REGEX.
	cmds["linecount"] = func(ts *testscript.TestScript, neg bool, args []string) {
		if len(args) != 3 || neg {
			ts.Fatalf("usage: linecount N REGEX DIR")
		}
		want, err := strconv.Atoi(args[0])
		ts.Check(err)
		re, err := regexp.Compile(args[1])
		ts.Check(err)
		ents, err := os.ReadDir(ts.MkAbs(args[2]))
		ts.Check(err)
		n := 0
		for _, e := range ents {
			if !e.Type().IsRegular() {
				continue
			}
			data, err := os.ReadFile(filepath.Join(ts.MkAbs(args[2]), e.Name()))
			ts.Check(err)
			for _, l := range strings.Split(string(data), "\n") {
				if re.MatchString(l) {
					n++
				}
			}
		}
		if n != want {
			ts.Fatalf("%d lines in %s match %q, want %d", n, args[2], args[1], want)
		}
	}
}

func diffLines(want, got []string) string {
	var b strings.Builder
	w, g := map[string]bool{}, map[string]bool{}
	for _, l := range want {
		w[l] = true
	}
	for _, l := range got {
		g[l] = true
	}
	n := 0
	for _, l := range want {
		if !g[l] && n < 20 {
			fmt.Fprintf(&b, "  missing: %s\n", l)
			n++
		}
	}
	for _, l := range got {
		if !w[l] && n < 40 {
			fmt.Fprintf(&b, "  extra:   %s\n", l)
			n++
		}
	}
	fmt.Fprintf(&b, "  (%d before, %d now)", len(want), len(got))
	return b.String()
}
