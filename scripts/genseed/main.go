// Command genseed writes agents' transcripts for scripts/bench-seed.sh by
// replicating fixture transcripts until -mb megabytes are written. Copy i
// gets fresh ids, a fresh prompt tag (so every copy is a distinct prompt
// event), its times moved by i seconds (unless -same-times) and cwds spread
// over -projects projects:
//
//	genseed -src pi -in testscripts/testdata/seed/pi -out DIR -mb 1024 -want 9
//	genseed -src opencode -in testscripts/testdata/seed/opencode -in testscripts/testdata/seed/opencode-tui -out DIR -want 15
//	genseed -src cursor -out DIR -mb 20
//
// pi, claude and codex (JSONL) copy every file under -in. opencode writes
// one database, DIR/opencode/opencode.db, in WAL mode as opencode 1.x does,
// holding the rows of every opencode.db under -in, copy after copy.
// cursor writes chat stores, DIR/chats/<md5 of the workspace>/<chat
// id>/store.db (SQLite in WAL mode), from the chats of the cursor reader's
// tests (cursor-agent cannot be installed here, so they are its only
// fixtures; see cursorChats).
//
// It prints "BYTES FILES PROMPTS": what it wrote, and the prompts hist-seed
// should import from it (copies times -want, the prompts one copy of the
// fixtures yields; cursor's chats say their own).
//
// With -append FILE it adds one typed prompt, -text at -ms, to a cursor
// chat store or an opencode database, as the agent does (a store or a
// session in -cwd is made when missing).
package main

import (
	"bytes"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	_ "modernc.org/sqlite"
)

type options struct {
	src       string
	in        []string
	out       string
	mb        int64
	projects  int
	sameTimes bool
	want      int
}

func main() {
	var o options
	flag.StringVar(&o.src, "src", "pi", "pi, claude, codex, opencode or cursor")
	flag.Func("in", "fixture folder (repeatable)", func(s string) error { o.in = append(o.in, s); return nil })
	flag.StringVar(&o.out, "out", "", "output folder")
	flag.Int64Var(&o.mb, "mb", 1024, "megabytes to write")
	flag.IntVar(&o.projects, "projects", 200, "projects")
	flag.BoolVar(&o.sameTimes, "same-times", false, "keep the fixtures' times in every copy")
	flag.IntVar(&o.want, "want", 0, "prompts hist-seed imports from one copy of the fixtures")
	appendTo := flag.String("append", "", "add one prompt to this cursor store or opencode database")
	text := flag.String("text", "", "the appended prompt")
	ms := flag.Int64("ms", 0, "the appended prompt's time, unix milliseconds")
	cwd := flag.String("cwd", "", "the project of a store or session -append makes")
	flag.Parse()
	var err error
	switch {
	case *appendTo != "" && o.src == "cursor":
		err = appendCursor(*appendTo, *text, *ms, *cwd)
	case *appendTo != "" && o.src == "opencode":
		err = appendOpencode(*appendTo, *text, *ms, *cwd)
	case *appendTo != "":
		err = fmt.Errorf("-append is for cursor and opencode")
	default:
		var w written
		w, err = generate(o)
		fmt.Printf("%d %d %d\n", w.bytes, w.files, w.prompts)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "genseed:", err)
		os.Exit(1)
	}
}

type written struct {
	bytes   int64
	files   int
	prompts int
}

func generate(o options) (written, error) {
	tag := map[string]string{"pi": "[pi", "claude": "[cc", "codex": "[cx", "opencode": "[oc", "cursor": "[cu"}[o.src]
	if tag == "" {
		return written{}, fmt.Errorf("unknown source %q", o.src)
	}
	switch o.src {
	case "opencode":
		return genOpencode(o, tag)
	case "cursor":
		return genCursor(o, tag)
	}
	return genJSONL(o, tag)
}

// copier makes copy i of the fixtures' bytes.
type copier struct {
	i, slot   int
	tag       string
	sameTimes bool
	epoch     *regexp.Regexp // the keys of epoch times to move
}

var (
	uuidRE = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	isoRE  = regexp.MustCompile(`"([0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2})(\.[0-9]+)?(Z|[+-][0-9]{2}:[0-9]{2})"`)
	// The JSONL agents' epoch times.
	jsonlEpoch = regexp.MustCompile(`"(timestamp|completed_at|completed_at_ms|create_time|sentAtMs|startTime|started_at|started_at_ms)":([0-9]{10}|[0-9]{13})\b`)
)

// fix applies the copy's uuids, project folder, times and tag to b.
func (c copier) fix(b []byte) []byte {
	prefix := fmt.Sprintf("%08x", c.i)
	b = uuidRE.ReplaceAllFunc(b, func(u []byte) []byte { return append([]byte(prefix), u[8:]...) })
	b = c.common(b)
	return b
}

// common applies the copy's project folder (the fixtures' cwds are under
// /tmp/lab/wd; opencode also keeps them without the leading "/"), times and
// tag to b.
func (c copier) common(b []byte) []byte {
	b = bytes.ReplaceAll(b, []byte("tmp/lab/wd/"), []byte(fmt.Sprintf("bench/p%03d/", c.slot)))
	if !c.sameTimes {
		b = c.shift(b, c.i)
	}
	return bytes.ReplaceAll(b, []byte(c.tag), []byte(c.tag+strconv.Itoa(c.i)))
}

// shift moves every time in b by secs seconds (ISO strings, epoch seconds
// and milliseconds), keeping each one's form.
func (c copier) shift(b []byte, secs int) []byte {
	b = isoRE.ReplaceAllFunc(b, func(m []byte) []byte {
		sub := isoRE.FindSubmatch(m)
		layout := "2006-01-02T15:04:05"
		if len(sub[2]) > 0 {
			layout += "." + strings.Repeat("0", len(sub[2])-1)
		}
		layout += "Z07:00"
		t, err := time.Parse(layout, string(m[1:len(m)-1]))
		if err != nil {
			return m
		}
		return []byte(`"` + t.Add(time.Duration(secs)*time.Second).Format(layout) + `"`)
	})
	return c.epoch.ReplaceAllFunc(b, func(m []byte) []byte {
		sub := c.epoch.FindSubmatch(m)
		n, _ := strconv.ParseInt(string(sub[2]), 10, 64)
		return []byte(fmt.Sprintf(`"%s":%d`, sub[1], shiftEpoch(n, secs)))
	})
}

// shiftEpoch moves an epoch time n (seconds, or milliseconds from 1e12 on)
// by secs seconds.
func shiftEpoch(n int64, secs int) int64 {
	if n >= 1e12 {
		return n + int64(secs)*1000
	}
	return n + int64(secs)
}

// genJSONL replicates pi, Claude Code or Codex transcripts: every file
// under the fixture folders, copy after copy.
func genJSONL(o options, tag string) (written, error) {
	type file struct {
		rel  string
		data []byte
	}
	var files []file
	for _, in := range o.in {
		err := filepath.WalkDir(in, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(in, p)
			files = append(files, file{rel, data})
			return nil
		})
		if err != nil {
			return written{}, err
		}
	}
	if len(files) == 0 {
		return written{}, fmt.Errorf("no fixture files in %v", o.in)
	}
	slots := max(o.projects/2, 1) // each fixture set names two projects
	var w written
	for i := 0; w.bytes < o.mb<<20; i++ {
		c := copier{i: i, slot: i % slots, tag: tag, sameTimes: o.sameTimes, epoch: jsonlEpoch}
		for _, f := range files {
			name := string(c.fix([]byte(filepath.Base(f.rel))))
			var dir string
			switch o.src {
			case "pi":
				dir = filepath.Join(o.out, "sessions", fmt.Sprintf("--bench-p%03d--", c.slot))
			case "claude":
				dir = filepath.Join(o.out, "projects", fmt.Sprintf("-bench-p%03d", c.slot))
			case "codex":
				dir = filepath.Join(o.out, "sessions", "2026", "11", fmt.Sprintf("%02d", 1+i%28))
			}
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return w, err
			}
			data := c.fix(f.data)
			if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
				return w, err
			}
			w.bytes += int64(len(data))
			w.files++
		}
		w.prompts += o.want
	}
	return w, nil
}
