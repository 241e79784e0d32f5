package codex

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"

	"hist/lib/transcript"
	"hist/lib/transcript/internal/ttest"
)

// grown is a resumer that keeps only the file that grew, as hist-seed
// keeps the files whose stamp changed (all of them when path is "").
type grown struct {
	ttest.Cursors
	path string
}

func (g grown) Keep(p string, _ fs.FileInfo) bool { return g.path == "" || p == g.path }

// scanSet returns the prompts a scan of root with keep finds, as a set,
// and the bytes it read.
func scanSet(t *testing.T, root string, keep transcript.Keep) (map[transcript.Prompt]bool, int64) {
	t.Helper()
	got, st := ttest.Collect(t, func(root string, emit func(transcript.Prompt) error) (transcript.Stats, error) {
		return ScanKept(root, keep, emit)
	}, root)
	set := map[transcript.Prompt]bool{}
	for _, p := range got {
		set[p] = true
	}
	return set, st.Bytes
}

// cuts returns where to cut data: every line boundary, the middle of
// every line, and just before every newline (a last line that is a whole
// record, not ended yet).
func cuts(data []byte) []int {
	out := []int{0}
	start := 0
	for i, c := range data {
		if c != '\n' {
			continue
		}
		if mid := start + (i-start)/2; mid > start {
			out = append(out, mid)
		}
		if i > start {
			out = append(out, i)
		}
		out = append(out, i+1)
		start = i + 1
	}
	if start < len(data) {
		out = append(out, start+(len(data)-start)/2, len(data))
	}
	return out
}

// checkResume checks, for each file of the rollouts (paths relative to a
// root, and their content) cut at every point of cuts, that reading the
// cut rollouts and then the grown one, from the cursors the first read
// left, finds the prompts reading the grown rollouts whole finds: the
// second read finds none that the whole read does not, and the two
// together find all it finds. It returns how many second reads of each
// file had a cursor to go on from.
func checkResume(t *testing.T, files map[string][]byte) map[string]int {
	t.Helper()
	root := t.TempDir()
	for rel, data := range files {
		write(t, filepath.Join(root, rel), data)
	}
	whole, _ := scanSet(t, root, nil)
	resumed := map[string]int{}
	for rel, data := range files {
		path := filepath.Join(root, rel)
		for _, cut := range cuts(data) {
			for _, keepAll := range []bool{false, true} {
				write(t, path, data[:cut])
				cur := ttest.Cursors{}
				first, _ := scanSet(t, root, cur)
				ttest.Append(t, path, string(data[cut:]))
				g := grown{cur, path}
				if keepAll {
					g.path = ""
				}
				from := cur[path]
				if !keepAll && from.Offset > 0 {
					resumed[rel]++
				}
				second, n := scanSet(t, root, g)
				if want := int64(len(data)) - from.Offset; !keepAll && from.Offset > 0 && n != want {
					t.Errorf("%s cut at %d: read %d bytes from cursor %d, want %d", rel, cut, n, from.Offset, want)
				}
				for p := range second {
					if !whole[p] {
						t.Errorf("%s cut at %d (all kept: %v): resumed read found %+v, which a whole read does not", rel, cut, keepAll, p)
					}
				}
				for p := range whole {
					if !first[p] && !second[p] {
						t.Errorf("%s cut at %d (all kept: %v): %+v missed (cursor %+v)", rel, cut, keepAll, p, from)
					}
				}
			}
		}
	}
	return resumed
}

// The real rollouts resume at every cut: read in two parts, they give
// the prompts a whole read gives.
func TestResumeRealRollouts(t *testing.T) {
	for _, dir := range []string{"testdata/codex", "testdata/codex-tui"} {
		paths, _ := filepathGlob(t, dir+"/sessions/*/*/*/*.jsonl")
		files := map[string][]byte{}
		for _, p := range paths {
			data, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			rel, _ := filepath.Rel(dir, p)
			files[rel] = data
		}
		for rel, n := range checkResume(t, files) {
			if n < bytes.Count(files[rel], []byte("\n"))/2 {
				t.Errorf("%s: read from a cursor after %d cuts of %d lines", rel, n, bytes.Count(files[rel], []byte("\n")))
			}
		}
		for rel := range files {
			// Each file on its own too (the others not there).
			checkResume(t, map[string][]byte{rel: files[rel]})
		}
	}
}

// The shapes the reader knows, resumed where that is safe and read whole
// where it is not.
func TestResumeShapes(t *testing.T) {
	parent := "0199aaaa-0000-7000-8000-00000000000a"
	child := "0199aaaa-0000-7000-8000-00000000000b"
	at := func(id string) string {
		return "sessions/2026/01/02/rollout-2026-01-02T03-04-05-" + id + ".jsonl"
	}
	oldestHead := `{"id":"5973b6c0-94b8-487b-a530-2aeb6098ae0e","timestamp":"2025-05-07T17:24:21.123Z","instructions":"be brief"}`
	for _, tc := range []struct {
		name   string
		files  map[string][]byte
		resume map[string]bool // the files read from a cursor at some cut
	}{
		{"pairs and mixed shapes", map[string][]byte{at(sess): (&rb{}).meta(sess, "/meta", nil).
			resp("2026-01-02T03:04:06.000Z", "user", "<environment_context>\n  <cwd>/w</cwd>\n</environment_context>").
			resp("2026-01-02T03:04:06.100Z", "user", "hello there").
			userMsg("2026-01-02T03:04:06.200Z", "hello there", nil).
			item("2026-01-02T03:04:06.201Z", "i1", "hello there").
			turn("2026-01-02T03:04:07.000Z", "/turn/one").
			userMsg("2026-01-02T03:04:08.000Z", "same", map[string]any{"kind": "plain"}).
			userMsg("2026-01-02T03:04:08.500Z", "dropped", map[string]any{"kind": "environment_context"}).
			item("2026-01-02T03:04:09.000Z", "i2", "same").
			resp("2026-01-02T03:04:10.000Z", "user", "a response item after events").
			turn("2026-01-02T03:04:11.000Z", "").
			item("2026-01-02T03:04:12.000Z", "i3", "item first").
			userMsg("2026-01-02T03:04:12.001Z", "item first", nil).
			userMsg("2026-01-02T03:04:13.000Z", "item first", nil).
			raw(`{"timestamp":"not a time","type":"event_msg","payload":{"type":"user_message","message":"no time of its own"}}`).
			raw(`not json`).
			raw(`{"payload":{"message":"reordered keys","type":"user_message"},"type":"event_msg","timestamp":"2026-01-02T03:04:14.000Z"}`).
			turn("2026-01-02T03:04:15.000Z", "/turn/two").
			item("2026-01-02T03:04:16.000Z", "i4", "last").bytes()},
			map[string]bool{at(sess): true}},
		{"session other than the file name's", map[string][]byte{at(child): (&rb{}).meta(parent, "/p", nil).
			userMsg("2026-01-02T04:00:00.000Z", "A", nil).
			userMsg("2026-01-02T04:01:00.000Z", "B", nil).bytes()}, map[string]bool{at(child): true}},
		{"no session_meta", map[string][]byte{at(sess): (&rb{}).
			userMsg("2026-01-02T03:04:06.000Z", "before any meta", nil).
			userMsg("2026-01-02T03:04:07.000Z", "second", nil).bytes()}, nil},
		{"response items only", map[string][]byte{at(sess): (&rb{}).meta(sess, "/w", nil).
			resp("2026-01-02T03:04:06.000Z", "user", "old style prompt").
			agent("2026-01-02T03:04:07.000Z", "ok").
			resp("2026-01-02T03:04:08.000Z", "user", "second old prompt").bytes()}, nil},
		{"subagent", map[string][]byte{at(sess): (&rb{}).meta(sess, "/w", map[string]any{"source": map[string]any{"subagent": "review"}}).
			userMsg("2026-01-02T03:04:06.000Z", "review this", nil).bytes()}, nil},
		{"oldest format", map[string][]byte{"sessions/rollout-2025-05-07T17-24-21-5973b6c0-94b8-487b-a530-2aeb6098ae0e.jsonl": (&rb{}).raw(oldestHead).
			raw(`{"record_type":"state"}`).
			raw(oldestItem("user", "<environment_context>\n  <cwd>/w/old</cwd>\n</environment_context>")).
			raw(oldestItem("user", "list the files")).
			raw(oldestItem("assistant", "a and b")).
			raw(oldestItem("user", "list the files")).bytes()}, nil},
		{"legacy fork and its parent", map[string][]byte{
			at(parent): (&rb{}).meta(parent, "/p", nil).
				userMsg("2026-01-02T03:00:00.000Z", "A", nil).agent("2026-01-02T03:00:01.000Z", "a").
				userMsg("2026-01-02T03:01:00.000Z", "B", nil).
				userMsg("2026-01-02T03:02:00.000Z", "C", nil).bytes(),
			at(child): (&rb{}).meta(child, "/p", map[string]any{"forked_from_id": parent}).
				meta(parent, "/p", nil).
				userMsg("2026-01-02T04:00:00.000Z", "A", nil).agent("2026-01-02T04:00:00.000Z", "a").
				userMsg("2026-01-02T04:00:00.001Z", "B", nil).
				userMsg("2026-01-02T04:05:00.000Z", "D", nil).
				userMsg("2026-01-02T04:06:00.000Z", "B", nil).bytes(),
		}, map[string]bool{at(parent): true}},
		{"paginated fork", map[string][]byte{at(child): (&rb{}).meta(child, "/p", map[string]any{"forked_from_id": parent, "history_mode": "paginated"}).
			userMsg("2026-01-02T04:00:00.000Z", "A", nil).
			userMsg("2026-01-02T04:01:00.000Z", "B", nil).bytes()}, map[string]bool{at(child): true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resumed := checkResume(t, tc.files)
			for rel := range tc.files {
				if got := resumed[rel] > 0; got != tc.resume[rel] {
					t.Errorf("%s: read from a cursor %d times, want it %v", filepath.Base(rel), resumed[rel], tc.resume[rel])
				}
			}
		})
	}
}

// A cursor whose context the reader does not understand, and a .zst
// rollout, are read whole.
func TestResumeReadsWhole(t *testing.T) {
	root := t.TempDir()
	path := filepath.Join(root, rolloutPathRel(sess))
	data := (&rb{}).meta(sess, "/w", nil).userMsg("2026-01-02T03:04:06.000Z", "one", nil).bytes()
	write(t, path, data)
	cur := ttest.Cursors{}
	ttest.ScanCursors(t, ScanKept, cur, root, "one")
	c := cur[path]
	if c.Offset != int64(len(data)) || !strings.HasSuffix(c.Context, " 0  /w") {
		t.Fatalf("cursor %+v", c)
	}
	ttest.Append(t, path, string((&rb{}).userMsg("2026-01-02T03:04:07.000Z", "two", nil).bytes()))
	for _, ctx := range []string{"", "garbage", "2 0 0 u - 1 x /w", "1 0 1 u 00 1 x /w", "1 0 0 u - 9 x /w", "1 0 3 p - 1 x /w", "1 0 0 u - -1 x /w"} {
		cur[path] = transcript.Cursor{Offset: c.Offset, Head: c.Head, Context: ctx}
		ttest.ScanCursors(t, ScanKept, cur, root, "one", "two")
	}
	ttest.ScanCursors(t, ScanKept, cur, root)

	zroot := t.TempDir()
	enc, _ := zstd.NewWriter(nil)
	zpath := filepath.Join(zroot, rolloutPathRel(sess)) + ".zst"
	write(t, zpath, enc.EncodeAll(data, nil))
	zcur := ttest.Cursors{}
	ttest.ScanCursors(t, ScanKept, zcur, zroot, "one")
	if len(zcur) != 0 {
		t.Errorf("a .zst rollout has a cursor: %+v", zcur)
	}
}

func rolloutPathRel(id string) string { return rolloutPath("", id) }
