package filescan

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"testing/iotest"

	"hist/lib/jsonscan"
	"hist/lib/transcript"
)

func readAll(t *testing.T, lr *LineReader) []string {
	t.Helper()
	var got []string
	for {
		l, err := lr.Next()
		if err == io.EOF {
			return got
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, string(l))
	}
}

func TestLineReader(t *testing.T) {
	const size = 16 // the smallest buffer bufio allows
	long := strings.Repeat("x", 5*size+3)
	in := "a\n\n" + long + "\r\nb\r\n\r\n" + long + "\nc\rd\nlast"
	want := []string{"a", "", long, "b", "", long, "c\rd", "last"}
	for name, r := range map[string]io.Reader{
		"whole":    strings.NewReader(in),
		"one byte": iotest.OneByteReader(strings.NewReader(in)),
	} {
		lr := NewLineReader(r, size)
		got := readAll(t, lr)
		if strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("%s: got %q", name, got)
		}
		if lr.Bytes() != int64(len(in)) {
			t.Errorf("%s: %d bytes, want %d", name, lr.Bytes(), len(in))
		}
		if _, err := lr.Next(); err != io.EOF {
			t.Errorf("%s: after the end: %v", name, err)
		}
	}
	for in, want := range map[string][]string{"": nil, "\n": {""}, "x": {"x"}, long: {long}, "x\r": {"x\r"}} {
		if got := readAll(t, NewLineReader(strings.NewReader(in), size)); strings.Join(got, "|") != strings.Join(want, "|") || len(got) != len(want) {
			t.Errorf("%.20q: got %q", in, got)
		}
	}
}

// Complete tells a last line not ended yet from the others, a long one
// and one of many read calls included.
func TestLineReaderComplete(t *testing.T) {
	long := strings.Repeat("x", 100)
	lr := NewLineReader(iotest.OneByteReader(strings.NewReader("a\n"+long+"\r\n\n"+long)), 16)
	for i, want := range []bool{true, true, true, false} {
		if _, err := lr.Next(); err != nil || lr.Complete() != want {
			t.Errorf("line %d: err %v, complete %v", i, err, lr.Complete())
		}
	}
}

func TestLineReaderError(t *testing.T) {
	boom := errors.New("boom")
	lr := NewLineReader(io.MultiReader(strings.NewReader("ok\n"+strings.Repeat("y", 40)), iotest.ErrReader(boom)), 16)
	if l, err := lr.Next(); err != nil || string(l) != "ok" {
		t.Fatalf("%q %v", l, err)
	}
	if _, err := lr.Next(); !errors.Is(err, boom) {
		t.Fatalf("err %v", err)
	}
}

// A long line SkipLong says no use for is read through and not handed
// out; the others, and the short lines, are handed out as usual.
func TestSkipLong(t *testing.T) {
	const size = 16
	keep, drop := "k"+strings.Repeat("x", 3*size), "s"+strings.Repeat("y", 3*size)
	for _, in := range []string{
		"a\n" + drop + "\n" + keep + "\ns\n" + drop,
		"a\n" + drop + "\r\n" + keep + "\ns\n" + drop + "\n",
	} {
		var asked []string
		lr := NewLineReader(iotest.OneByteReader(strings.NewReader(in)), size)
		lr.SkipLong(func(prefix []byte) bool {
			asked = append(asked, string(prefix))
			return prefix[0] == 's'
		})
		got := readAll(t, lr)
		if want := []string{"a", keep, "s"}; strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("%.20q: got %q, want %q", in, got, want)
		}
		if len(asked) != 3 || len(asked[0]) != size {
			t.Errorf("%.20q: asked about %q", in, asked)
		}
		if lr.Bytes() != int64(len(in)) {
			t.Errorf("%.20q: %d bytes, want %d", in, lr.Bytes(), len(in))
		}
	}
}

// A buffer grown by a huge line is not kept for the lines after it.
func TestLineReaderReleasesHugeBuffer(t *testing.T) {
	huge := strings.Repeat("z", keepLongCap+1)
	lr := NewLineReader(strings.NewReader(huge+"\nshort\n"), 1<<10)
	if l, err := lr.Next(); err != nil || len(l) != len(huge) {
		t.Fatalf("%d %v", len(l), err)
	}
	if l, err := lr.Next(); err != nil || string(l) != "short" {
		t.Fatalf("%q %v", l, err)
	}
	if cap(lr.long) > keepLongCap {
		t.Errorf("kept a buffer of %d bytes", cap(lr.long))
	}
}

// ResetFile reads only what the file held when it was opened.
func TestResetFileStopsAtSize(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.jsonl")
	if err := os.WriteFile(path, []byte("one\ntwo\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, size, skip, err := open(path)
	if err != nil || skip {
		t.Fatal(skip, err)
	}
	defer f.Close()
	w, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.WriteString("three\n"); err != nil {
		t.Fatal(err)
	}
	w.Close()
	lr := NewLineReader(nil, 16)
	lr.ResetFile(f, size, transcript.Cursor{})
	if got := readAll(t, lr); strings.Join(got, "|") != "one|two" || lr.Bytes() != size {
		t.Errorf("got %q, %d bytes", got, lr.Bytes())
	}
	if _, _, skip, err := open(filepath.Join(t.TempDir(), "gone")); !skip || err != nil {
		t.Errorf("missing file: skip %v, err %v", skip, err)
	}
	// A FIFO is passed over at once (a blocking open would wait for a
	// writer forever).
	fifo := filepath.Join(t.TempDir(), "fifo.jsonl")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	if f, _, skip, err := open(fifo); !skip || err != nil || f != nil {
		t.Errorf("FIFO: skip %v, err %v", skip, err)
	}
	// A folder opens; reading it fails with a ReadError naming it.
	dir := t.TempDir()
	df, dsize, skip, err := open(dir)
	if err != nil || skip {
		t.Fatalf("folder: skip %v, err %v", skip, err)
	}
	defer df.Close()
	lr.ResetFile(df, dsize, transcript.Cursor{})
	if _, err := lr.Next(); err == nil || !strings.Contains(err.Error(), dir) {
		t.Errorf("reading a folder: %v", err)
	}
}

func TestDedup(t *testing.T) {
	var got []string
	boom := errors.New("boom")
	d := NewDedup(func(p transcript.Prompt) error {
		if p.Text == "fail" {
			return boom
		}
		got = append(got, p.Text)
		return nil
	})
	for _, p := range []transcript.Prompt{
		{Text: "a", Key: "k1"}, {Text: "b", Key: "k1"}, {Text: "c"}, {Text: "c"}, {Text: "d", Key: "k2"},
	} {
		if err := d.Add(p); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.Add(transcript.Prompt{Text: "fail"}); !errors.Is(err, boom) {
		t.Fatalf("err %v", err)
	}
	if strings.Join(got, "") != "accd" || d.Count() != 4 {
		t.Errorf("got %q, count %d", got, d.Count())
	}
}

// A line longer than MaxLine is read through, not held, and handed out
// as oversize, whether a newline ends it or the file does.
func TestOversizeLineSkipped(t *testing.T) {
	big := strings.Repeat("x", MaxLine+5)
	for _, tail := range []string{"\n{\"b\":2}\n", ""} {
		in := "{\"a\":1}\n" + big + tail
		lr := NewLineReader(strings.NewReader(in), 64<<10)
		got := readAll(t, lr)
		want := []string{`{"a":1}`, string(oversize)}
		if tail != "" {
			want = append(want, `{"b":2}`)
		}
		if strings.Join(got, "|") != strings.Join(want, "|") {
			t.Fatalf("got %d lines: %.40q", len(got), got)
		}
		if lr.Bytes() != int64(len(in)) {
			t.Errorf("Bytes = %d, want %d", lr.Bytes(), len(in))
		}
	}
	if ok, _ := jsonscan.ObjectShaped(oversize); ok {
		t.Fatal("oversize looks like a record")
	}
}

// makeFolders makes folders d0 ... under root with files 0.jsonl ... in
// each, every one holding its own path as its one line, and returns the
// files' paths.
func makeFolders(t *testing.T, root string, folders, files int) []string {
	t.Helper()
	var paths []string
	for i := range folders {
		dir := filepath.Join(root, fmt.Sprint("d", i))
		if err := os.Mkdir(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		for j := range files {
			p := filepath.Join(dir, fmt.Sprint(j, ".jsonl"))
			if err := os.WriteFile(p, []byte(p+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			paths = append(paths, p)
		}
	}
	return paths
}

// TestOpener checks that an Opener opens what Open opens, and passes over
// what Open passes over, across more folders than it keeps open, and that
// Close releases the folders.
func TestOpener(t *testing.T) {
	defer func(n int) { maxDirs = n }(maxDirs)
	maxDirs = 8
	root := t.TempDir()
	paths := makeFolders(t, root, maxDirs+10, 2)
	fifo := filepath.Join(root, "d0", "fifo.jsonl")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(root, "d1", "sub.jsonl")
	if err := os.Mkdir(sub, 0o700); err != nil {
		t.Fatal(err)
	}
	rel, err := filepath.Rel(mustGetwd(t), paths[3])
	if err != nil {
		t.Fatal(err)
	}
	var op Opener
	// Twice over: the folders kept are used again, the others reopened.
	for round := range 2 {
		for _, p := range paths {
			f, size, skip, err := op.Open(p)
			if err != nil || skip {
				t.Fatalf("%s: skip %v, err %v", p, skip, err)
			}
			lr := NewLineReader(nil, 64)
			lr.ResetFile(f, size, transcript.Cursor{})
			if got := readAll(t, lr); len(got) != 1 || got[0] != p {
				t.Errorf("%s reads %q", p, got)
			}
			f.Close()
		}
		if len(op.dirs) != maxDirs {
			t.Errorf("round %d: %d folders open, want %d", round, len(op.dirs), maxDirs)
		}
	}
	for _, p := range []string{fifo, filepath.Join(root, "d2", "gone.jsonl"), filepath.Join(root, "nofolder", "x.jsonl")} {
		if f, _, skip, err := op.Open(p); !skip || err != nil || f != nil {
			t.Errorf("%s: skip %v, err %v", p, skip, err)
		}
	}
	for _, p := range []string{sub, rel, paths[0]} {
		f, size, skip, err := op.Open(p)
		if err != nil || skip {
			t.Fatalf("%s: skip %v, err %v", p, skip, err)
		}
		f.Close()
		if p == sub && size <= 0 {
			t.Errorf("folder %s: size %d", p, size)
		}
	}
	// A file in place of the folder: an error naming the path.
	notDir := filepath.Join(root, "file")
	os.WriteFile(notDir, nil, 0o600)
	if _, _, _, err := op.Open(filepath.Join(notDir, "x.jsonl")); err == nil || !strings.Contains(err.Error(), notDir) {
		t.Errorf("a file for a folder: %v", err)
	}
	op.Close()
	if len(op.dirs) != 0 {
		t.Errorf("%d folders still open", len(op.dirs))
	}
}

// TestOpenerShared opens files of the same folders from several goroutines
// at once (go test -race): each file reads as itself, and each folder is
// kept open once.
func TestOpenerShared(t *testing.T) {
	paths := makeFolders(t, t.TempDir(), 20, 10)
	var op Opener
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			lr := NewLineReader(nil, 64)
			for k := range paths {
				p := paths[(k*7+g*13)%len(paths)]
				f, size, skip, err := op.Open(p)
				if err != nil || skip {
					t.Errorf("%s: skip %v, err %v", p, skip, err)
					return
				}
				lr.ResetFile(f, size, transcript.Cursor{})
				if got := readAll(t, lr); len(got) != 1 || got[0] != p {
					t.Errorf("%s reads %q", p, got)
				}
				f.Close()
			}
		}()
	}
	wg.Wait()
	if len(op.dirs) != 20 {
		t.Errorf("%d folders kept open, want 20", len(op.dirs))
	}
	op.Close()
}

func mustGetwd(t *testing.T) string {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	return wd
}

func TestKeySet(t *testing.T) {
	var s KeySet
	for i := range 1000 {
		if !s.Add(fmt.Sprint("key ", i)) {
			t.Fatalf("key %d: already in an empty set", i)
		}
	}
	for i := range 1000 {
		if s.Add(fmt.Sprint("key ", i)) {
			t.Fatalf("key %d: added twice", i)
		}
	}
	if !s.Add("") || s.Add("") {
		t.Error("the empty key")
	}
}

// The head sum of a cursor made by a read from the start, taken from the
// bytes as they were read, is the sum of the file's head read again.
func TestStoppedHeadSum(t *testing.T) {
	dir := t.TempDir()
	lr := NewLineReader(nil, 64)
	for _, n := range []int{1, 10, 63, 64, 65, 4095, 4096, 4097, 5000, 20000} {
		for _, torn := range []bool{false, true} {
			var b strings.Builder
			for i := 0; b.Len() < n; i++ {
				fmt.Fprintf(&b, "line %d %s\n", i, strings.Repeat("x", i%97))
			}
			data := b.String()[:n]
			if !torn && !strings.HasSuffix(data, "\n") {
				data += "\n"
			}
			path := filepath.Join(dir, fmt.Sprintf("f%d-%v.jsonl", n, torn))
			if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
				t.Fatal(err)
			}
			f, size, _, err := open(path)
			if err != nil {
				t.Fatal(err)
			}
			from := lr.ResetFile(f, size, transcript.Cursor{})
			readAll(t, lr)
			c := lr.Stopped(f, from)
			if int64(len(lr.tee.head)) < min(c.Offset, transcript.HeadSize) {
				t.Errorf("%d bytes: the head was not kept as it was read (%d bytes kept)", len(data), len(lr.tee.head))
			}
			if want := headSum(f, c.Offset); c.Head != want || c.Offset != int64(strings.LastIndexByte(data, '\n')+1) {
				t.Errorf("%d bytes (torn %v): cursor at %d, head %x; want %d, %x", len(data), torn, c.Offset, c.Head, strings.LastIndexByte(data, '\n')+1, want)
			}
			f.Close()
		}
	}
}

// TestLines: blank lines (white space only, Unicode's included) are not
// handed over but are counted in the index; fn's error is returned as it
// is, a read error as a *ReadError; the bytes read are counted.
func TestLines(t *testing.T) {
	in := "a\n  \n\u00a0\nb\r\nc"
	var got []string
	n, err := Lines(strings.NewReader(in), func(i int, line []byte) error {
		got = append(got, fmt.Sprintf("%d:%s", i, line))
		return nil
	})
	if want := []string{"0:a", "3:b", "4:c"}; err != nil || n != int64(len(in)) || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("Lines = %q, %d, %v; want %q, %d, nil", got, n, err, want, len(in))
	}
	stop := errors.New("stop")
	if _, err := Lines(strings.NewReader(in), func(int, []byte) error { return stop }); err != stop {
		t.Errorf("fn's error: got %v", err)
	}
	boom := errors.New("boom")
	_, err = Lines(iotest.ErrReader(boom), func(int, []byte) error { return nil })
	if re, ok := errors.AsType[*ReadError](err); !ok || re.Err != boom {
		t.Errorf("read error: got %#v", err)
	}
}
