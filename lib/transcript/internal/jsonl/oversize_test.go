package jsonl

import (
	"io"
	"strings"
	"testing"
)

func TestOversizeLine(t *testing.T) {
	for _, tail := range []string{"\n{\"b\":2}\n", ""} {
		big := strings.Repeat("y", MaxLine+10)
		r := NewReader(strings.NewReader("{\"a\":1}\n" + big + tail))
		var got []string
		for {
			l, err := r.Line()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, string(l))
		}
		want := []string{`{"a":1}`, string(Oversize)}
		if tail != "" {
			want = append(want, `{"b":2}`)
		}
		if len(got) != len(want) {
			t.Fatalf("got %d lines, want %d", len(got), len(want))
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("line %d: got %.40q, want %.40q", i, got[i], want[i])
			}
		}
		if r.Bytes() != int64(len("{\"a\":1}\n")+len(big)+len(tail)) {
			t.Fatalf("Bytes = %d", r.Bytes())
		}
	}
}
