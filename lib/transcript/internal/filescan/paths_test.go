//go:build unix

package filescan

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
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

// ScanPaths reads the files in order, drops a prompt whose key an earlier
// one had, passes over a FIFO and a file gone since the listing, counts
// what it read, and stops at emit's error.
func TestScanPaths(t *testing.T) {
	dir := t.TempDir()
	var paths []string
	for i := range 3 {
		p := filepath.Join(dir, fmt.Sprintf("%d.jsonl", i))
		if err := os.WriteFile(p, []byte(fmt.Sprintf("own %d\nshared\n\n", i)), 0o600); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	fifo := filepath.Join(dir, "fifo.jsonl")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	paths = append(paths[:1], append([]string{fifo, filepath.Join(dir, "gone.jsonl")}, paths[1:]...)...)
	var got []string
	var st transcript.Stats
	err := ScanPaths(files(paths...), lineScan, func(p transcript.Prompt) error {
		got = append(got, p.Text)
		return nil
	}, &st)
	if err != nil {
		t.Fatal(err)
	}
	if want := "own 0|shared|own 1|own 2"; strings.Join(got, "|") != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if st.Files != 3 || st.Skipped != 2 || st.Malformed != 3 || st.Prompts != 4 || st.Bytes != 3*int64(len("own 0\nshared\n\n")) {
		t.Errorf("stats %+v", st)
	}
	stop := errors.New("stop")
	if err := ScanPaths(files(paths...), lineScan, func(transcript.Prompt) error { return stop }, &st); err != stop {
		t.Errorf("emit's error: got %v", err)
	}
}

// A file is read up to the size it had when it was opened; a folder opens
// and its read fails with a ReadError naming it.
func TestOpenUpto(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.jsonl")
	if err := os.WriteFile(path, []byte("one\ntwo\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, fi, err := Open(path)
	if err != nil || f == nil {
		t.Fatal(f, err)
	}
	defer f.Close()
	size := fi.Size()
	w, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	w.WriteString("three\n")
	w.Close()
	lr := NewLineReader(Upto(f, size), 16)
	if got := readAll(t, lr); strings.Join(got, "|") != "one|two" || lr.Bytes() != size {
		t.Errorf("got %q, %d bytes", got, lr.Bytes())
	}
	dir := t.TempDir()
	var st transcript.Stats
	err = ScanPaths(files(dir), lineScan, func(transcript.Prompt) error { return nil }, &st)
	if re, ok := errors.AsType[*transcript.ReadError](err); !ok || re.Path != dir {
		t.Errorf("reading a folder: %v", err)
	}
}

// files lists paths as List would, without their information.
func files(paths ...string) []File {
	var out []File
	for _, p := range paths {
		out = append(out, File{Path: p})
	}
	return out
}
