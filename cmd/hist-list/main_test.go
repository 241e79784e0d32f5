package main

import (
	"bytes"
	"errors"
	"fmt"
	"testing"
)

func TestWriteAll(t *testing.T) {
	encode := func(buf []byte, i int) []byte { return fmt.Appendf(buf, "line %d\n", i) }
	for _, n := range []int{0, 1, chunk, 4*chunk - 1, 4 * chunk, 10*chunk + 7} {
		var want bytes.Buffer
		for i := range n {
			want.Write(encode(nil, i))
		}
		var got bytes.Buffer
		if err := writeAll(&got, n, encode); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Bytes(), want.Bytes()) {
			t.Errorf("n=%d: output differs (%d bytes, want %d)", n, got.Len(), want.Len())
		}
	}
}

type failWriter struct{ n int }

func (w *failWriter) Write(p []byte) (int, error) {
	if w.n--; w.n < 0 {
		return 0, errors.New("closed")
	}
	return len(p), nil
}

func TestWriteAllStopsOnError(t *testing.T) {
	encode := func(buf []byte, i int) []byte { return append(buf, "x\n"...) }
	if err := writeAll(&failWriter{n: 3}, 20*chunk, encode); err == nil {
		t.Error("a write error was not returned")
	}
}
