package seed

import (
	"bytes"
	"io"
	"math/rand/v2"
	"testing"
	"unsafe"
)

// TestChunked appends runs of every size across chunk boundaries and
// checks what pieces and reader give back, that the chunks are aligned
// for direct writes, and that released chunks are reused.
func TestChunked(t *testing.T) {
	var p pool
	defer p.release()
	rng := rand.New(rand.NewPCG(1, 2))
	var c chunked
	var want []byte
	taken := 0
	for _, n := range []int{0, 1, chunkSize - 1, 1, chunkSize, 3*chunkSize + 5, 70000, 4096} {
		data := make([]byte, n)
		for i := range data {
			data[i] = byte(rng.Uint32())
		}
		taken += c.append(&p, data)
		want = append(want, data...)
	}
	if c.n != len(want) || taken != len(c.cs) || len(c.cs) != (len(want)+chunkSize-1)/chunkSize {
		t.Fatalf("n %d (want %d), %d chunks, %d taken", c.n, len(want), len(c.cs), taken)
	}
	for _, ch := range c.cs {
		if uintptr(unsafe.Pointer(unsafe.SliceData(ch)))%dioAlign != 0 || len(ch) != chunkSize {
			t.Fatalf("chunk at %p, %d bytes: not aligned whole blocks", unsafe.SliceData(ch), len(ch))
		}
	}
	for _, r := range [][2]int{{0, len(want)}, {0, 0}, {5, chunkSize}, {chunkSize, 2 * chunkSize}, {chunkSize - 1, chunkSize + 1}, {100, len(want) - 3}} {
		got := bytes.Join(c.pieces(r[0], r[1]), nil)
		if !bytes.Equal(got, want[r[0]:r[1]]) {
			t.Errorf("pieces(%d, %d): %d bytes differ", r[0], r[1], len(got))
		}
		if r[1] == len(want) {
			rest, _ := io.ReadAll(c.reader(r[0]))
			if !bytes.Equal(rest, want[r[0]:]) {
				t.Errorf("reader(%d): %d bytes differ", r[0], len(rest))
			}
		}
	}
	before := p.chunks
	c.release(&p)
	var d chunked
	d.append(&p, want)
	if p.chunks != before {
		t.Errorf("%d chunks cut after a release, want the %d there were", p.chunks, before)
	}
}

// TestSplit cuts pieces at every byte.
func TestSplit(t *testing.T) {
	pieces := [][]byte{[]byte("abc"), []byte("d"), []byte("efgh")}
	all := "abcdefgh"
	for n := 0; n <= len(all); n++ {
		before, after := split(pieces, n)
		b, a := string(bytes.Join(before, nil)), string(bytes.Join(after, nil))
		if b != all[:n] || a != all[n:] {
			t.Errorf("split at %d: %q %q", n, b, a)
		}
		for _, p := range append(before, after...) {
			if len(p) == 0 {
				t.Errorf("split at %d: an empty piece", n)
			}
		}
	}
}
