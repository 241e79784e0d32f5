package filescan

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"syscall"
	"testing"

	"hist/lib/transcript"
)

// lineScan emits each line as a prompt keyed by its text, so that repeats
// across files are dropped by ScanPaths' dedup (which keeps the first).
func lineScan(lr *LineReader, name string, add func(transcript.Prompt) error) (transcript.Stats, error) {
	var st transcript.Stats
	for {
		line, err := lr.Next()
		if err == io.EOF {
			st.Files, st.Bytes = 1, lr.Bytes()
			return st, nil
		}
		if err != nil {
			return st, &transcript.ReadError{Path: name, Err: err}
		}
		if len(line) == 0 {
			st.Malformed++
			continue
		}
		if err := add(transcript.Prompt{Text: string(line), Key: string(line), Session: name}); err != nil {
			return st, err
		}
	}
}

// TestScanPathsParallelEqualsSerial reads the same files with one CPU (in
// turn) and with several (batches read ahead): the same prompts, from the
// same files, in the same order, the same counts and the same errors.
func TestScanPathsParallelEqualsSerial(t *testing.T) {
	dir := t.TempDir()
	var paths []string
	for i := range 150 {
		p := filepath.Join(dir, fmt.Sprintf("%03d.jsonl", i))
		// Lines repeat across files (the first copy wins), some are blank.
		data := fmt.Sprintf("own %d\nshared %d\n\nall\n", i, i/10)
		if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	// A FIFO and a file that is gone: passed over.
	fifo := filepath.Join(dir, "fifo.jsonl")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	paths = append(paths[:70], append([]string{fifo, filepath.Join(dir, "gone.jsonl")}, paths[70:]...)...)

	type out struct {
		prompts []transcript.Prompt
		st      transcript.Stats
		err     error
	}
	scan := func(procs int, paths []string, stopAt int) out {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
		var o out
		o.err = ScanPaths(paths, nil, nil, lineScan, func(p transcript.Prompt) error {
			if len(o.prompts) == stopAt {
				return errStopHere
			}
			o.prompts = append(o.prompts, p)
			return nil
		}, &o.st)
		return o
	}
	serial := scan(1, paths, -1)
	if serial.err != nil || len(serial.prompts) != 150+15+1 || serial.st.Skipped != 2 || serial.st.Malformed != 150 {
		t.Fatalf("serial: %d prompts, %+v, %v", len(serial.prompts), serial.st, serial.err)
	}
	for _, procs := range []int{2, 4} {
		for range 3 {
			if got := scan(procs, paths, -1); !reflect.DeepEqual(got, serial) {
				t.Fatalf("%d CPUs: %d prompts %+v %v, serial %d %+v", procs, len(got.prompts), got.st, got.err, len(serial.prompts), serial.st)
			}
			// emit's error stops the scan at the same prompt.
			if got := scan(procs, paths, 37); got.err != errStopHere || len(got.prompts) != 37 || !reflect.DeepEqual(got.prompts, serial.prompts[:37]) {
				t.Fatalf("%d CPUs, stopped: %d prompts, %v", procs, len(got.prompts), got.err)
			}
		}
	}
	// A file that cannot be read in the middle (a link to a folder):
	// the same ReadError, after the same prompts.
	bad := filepath.Join(dir, "bad.jsonl")
	if err := os.Symlink(t.TempDir(), bad); err != nil {
		t.Fatal(err)
	}
	withBad := append(append(append([]string{}, paths[:100]...), bad), paths[100:]...)
	want := scan(1, withBad, -1)
	var re *transcript.ReadError
	if !errors.As(want.err, &re) || re.Path != bad {
		t.Fatalf("serial: err %v", want.err)
	}
	for _, procs := range []int{2, 4} {
		if got := scan(procs, withBad, -1); !reflect.DeepEqual(got, want) {
			t.Fatalf("%d CPUs with a bad file: %d prompts %v, want %d %v", procs, len(got.prompts), got.err, len(want.prompts), want.err)
		}
	}
}

var errStopHere = errors.New("stop here")

// TestScanPathsKnownSizes: with the sizes a listing found, a file is read
// up to its listed size (not what was appended since), and one that
// became a FIFO since reads as empty without blocking, on one CPU and on
// several.
func TestScanPathsKnownSizes(t *testing.T) {
	dir := t.TempDir()
	var paths []string
	var sizes []int64
	for i := range 40 {
		p := filepath.Join(dir, fmt.Sprintf("%02d.jsonl", i))
		listed := fmt.Sprintf("a%d\nb%d\n", i, i)
		if err := os.WriteFile(p, []byte(listed+"appended later\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		paths, sizes = append(paths, p), append(sizes, int64(len(listed)))
	}
	// A transcript replaced by a FIFO after the listing.
	fifo := filepath.Join(dir, "fifo.jsonl")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	paths, sizes = append(paths[:20:20], append([]string{fifo}, paths[20:]...)...), append(sizes[:20:20], append([]int64{100}, sizes[20:]...)...)
	for _, procs := range []int{1, 2} {
		prev := runtime.GOMAXPROCS(procs)
		var got []string
		var st transcript.Stats
		err := ScanPaths(paths, sizes, nil, lineScan, func(p transcript.Prompt) error {
			got = append(got, p.Text)
			return nil
		}, &st)
		runtime.GOMAXPROCS(prev)
		if err != nil || len(got) != 80 || st.Files != 41 {
			t.Fatalf("%d CPUs: %d prompts, %+v, %v", procs, len(got), st, err)
		}
		for _, text := range got {
			if text == "appended later" {
				t.Fatalf("%d CPUs: read past the listed size", procs)
			}
		}
	}
}

// resumer gives the cursors of an earlier scan (read only while files are
// read, as hist-seed's keeper does) and records the new ones.
type resumer struct{ from, reached map[string]transcript.Cursor }

func (r *resumer) Keep(string, fs.FileInfo) bool         { return true }
func (r *resumer) From(path string) transcript.Cursor    { return r.from[path] }
func (r *resumer) Reached(p string, c transcript.Cursor) { r.reached[p] = c }

// With several CPUs, files read from their cursors yield only what was
// appended since, a torn last line left to the next scan.
func TestScanPathsResumes(t *testing.T) {
	dir := t.TempDir()
	var paths []string
	for i := range 3 * batchFiles {
		p := filepath.Join(dir, fmt.Sprintf("f%02d", i))
		os.WriteFile(p, []byte(fmt.Sprintf("a%d\nb%d\n", i, i)), 0o600)
		paths = append(paths, p)
	}
	prev := runtime.GOMAXPROCS(4)
	defer runtime.GOMAXPROCS(prev)
	r := &resumer{from: map[string]transcript.Cursor{}, reached: map[string]transcript.Cursor{}}
	scan := func() []string {
		t.Helper()
		var got []string
		var st transcript.Stats
		if err := ScanPaths(paths, nil, r, lineScan, func(p transcript.Prompt) error {
			got = append(got, p.Text)
			return nil
		}, &st); err != nil {
			t.Fatal(err)
		}
		r.from, r.reached = r.reached, map[string]transcript.Cursor{}
		return got
	}
	if got := scan(); len(got) != 2*len(paths) {
		t.Fatalf("first scan: %d lines", len(got))
	}
	for i, p := range paths {
		f, _ := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
		fmt.Fprintf(f, "c%d\nd%d", i, i) // d: torn
		f.Close()
	}
	var want []string
	for i := range paths {
		want = append(want, fmt.Sprintf("c%d", i), fmt.Sprintf("d%d", i))
	}
	if got := scan(); !reflect.DeepEqual(got, want) {
		t.Fatalf("after appends: %q", got)
	}
	// The torn lines are read again, whole now.
	want = want[:0]
	for i, p := range paths {
		f, _ := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
		f.WriteString("\n")
		f.Close()
		want = append(want, fmt.Sprintf("d%d", i))
	}
	if got := scan(); !reflect.DeepEqual(got, want) {
		t.Fatalf("after the torn lines ended: %q", got)
	}
}
