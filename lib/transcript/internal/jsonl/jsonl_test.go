package jsonl

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

func TestLines(t *testing.T) {
	long := strings.Repeat("x", 3*BufSize+17)
	in := "a\n\n" + long + "\nb\r\nlast"
	for name, r := range map[string]io.Reader{
		"whole":    strings.NewReader(in),
		"one byte": iotest.OneByteReader(strings.NewReader(in)),
	} {
		lr := NewReader(r)
		var got []string
		for {
			l, err := lr.Line()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, string(l))
		}
		want := []string{"a", "", long, "b\r", "last"}
		if len(got) != len(want) {
			t.Fatalf("%s: %d lines", name, len(got))
		}
		for i := range want {
			if got[i] != want[i] {
				t.Errorf("%s: line %d: %.20q…", name, i, got[i])
			}
		}
		if lr.Bytes() != int64(len(in)) {
			t.Errorf("%s: %d bytes", name, lr.Bytes())
		}
	}
}

func TestReadError(t *testing.T) {
	boom := errors.New("boom")
	lr := NewReader(io.MultiReader(strings.NewReader("ok\n"+strings.Repeat("y", BufSize+1)), iotest.ErrReader(boom)))
	if l, err := lr.Line(); err != nil || !bytes.Equal(l, []byte("ok")) {
		t.Fatalf("%q %v", l, err)
	}
	if _, err := lr.Line(); !errors.Is(err, boom) {
		t.Fatalf("err %v", err)
	}
}
