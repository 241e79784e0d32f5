package filescan

import (
	"errors"
	"fmt"
	"io"
	"strings"
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

func TestDedup(t *testing.T) {
	var got []string
	boom := errors.New("boom")
	d := &Dedup{Emit: func(p transcript.Prompt) error {
		if p.Text == "fail" {
			return boom
		}
		got = append(got, p.Text)
		return nil
	}}
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
	if strings.Join(got, "") != "accd" || d.N != 4 {
		t.Errorf("got %q, count %d", got, d.N)
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

// TestLines: blank lines (white space only, Unicode's included) are not
// handed over but are counted in the index; fn's error is returned as it
// is, a read error as a *transcript.ReadError; the bytes read are counted.
func TestLines(t *testing.T) {
	in := "a\n  \n\u00a0\nb\r\nc"
	var got []string
	var st transcript.Stats
	err := Lines(strings.NewReader(in), "in", &st, func(i int, line []byte) error {
		got = append(got, fmt.Sprintf("%d:%s", i, line))
		return nil
	})
	if want := []string{"0:a", "3:b", "4:c"}; err != nil || st.Bytes != int64(len(in)) || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("Lines = %q, %d, %v; want %q, %d, nil", got, st.Bytes, err, want, len(in))
	}
	stop := errors.New("stop")
	if err := Lines(strings.NewReader(in), "in", &st, func(int, []byte) error { return stop }); err != stop {
		t.Errorf("fn's error: got %v", err)
	}
	boom := errors.New("boom")
	err = Lines(iotest.ErrReader(boom), "in", &st, func(int, []byte) error { return nil })
	if re, ok := errors.AsType[*transcript.ReadError](err); !ok || re.Err != boom || re.Path != "in" {
		t.Errorf("read error: got %#v", err)
	}
}
