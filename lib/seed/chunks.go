package seed

import (
	"bytes"
	"io"
	"sync"
	"unsafe"
)

// chunkSize is the size of the pieces the buckets' records wait in before
// a spill writes them: a multiple of dioAlign, so that whole chunks are
// whole blocks for direct writes, which take a bucket's chunks as they are
// (one writev, no copy).
const chunkSize = 16 << 10

// arenaSize is how much memory the pool maps at a time.
const arenaSize = 2 << 20

// pool hands out the chunks. They are cut from arenas mapped outside the Go
// heap: the records waiting for a spill (up to spillAt bytes, twice that
// while a spill is in flight) would otherwise count in the garbage
// collector's goal, which lets the heap grow by as much again in garbage,
// and every page a process touches for the first time is a fault (dear in
// a virtual machine). Chunks go back to the pool once written, so a run
// touches its arenas' pages once. The arenas are page-aligned, as direct
// writes need (stageSkew moves the chunks off, for tests).
type pool struct {
	mu     sync.Mutex
	free   [][]byte
	arenas [][]byte // the mapped ones, to unmap
	chunks int      // chunks cut so far
}

// get returns a chunk (len and cap chunkSize).
func (p *pool) get() []byte {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.free) == 0 {
		a, unmap := newArena(arenaSize)
		if unmap != nil {
			p.arenas = append(p.arenas, unmap)
		}
		i := int(uintptr(unsafe.Pointer(unsafe.SliceData(a))) & (dioAlign - 1))
		if i != 0 {
			i = dioAlign - i
		}
		for i += stageSkew; i+chunkSize <= len(a); i += chunkSize {
			p.free = append(p.free, a[i:i+chunkSize:i+chunkSize])
			p.chunks++
		}
	}
	c := p.free[len(p.free)-1]
	p.free = p.free[:len(p.free)-1]
	return c
}

// put takes chunks back.
func (p *pool) put(cs [][]byte) {
	if len(cs) == 0 {
		return
	}
	p.mu.Lock()
	p.free = append(p.free, cs...)
	p.mu.Unlock()
}

// release unmaps the arenas: no chunk may be used afterwards.
func (p *pool) release() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, a := range p.arenas {
		freeArena(a)
	}
	p.arenas, p.free = nil, nil
}

// chunked is a run of bytes held in chunks: each one full but the last.
type chunked struct {
	cs [][]byte
	n  int
}

// append copies data to the end of c, and returns how many chunks it took
// from p for it.
func (c *chunked) append(p *pool, data []byte) (taken int) {
	for len(data) > 0 {
		if c.n == len(c.cs)*chunkSize {
			c.cs = append(c.cs, p.get())
			taken++
		}
		k := copy(c.cs[c.n/chunkSize][c.n%chunkSize:], data)
		data = data[k:]
		c.n += k
	}
	return taken
}

// pieces returns the bytes [from, to) of c as slices of its chunks.
func (c *chunked) pieces(from, to int) [][]byte {
	var out [][]byte
	for from < to {
		i, at := from/chunkSize, from%chunkSize
		k := min(chunkSize-at, to-from)
		out = append(out, c.cs[i][at:at+k])
		from += k
	}
	return out
}

// reader reads c from byte from on.
func (c *chunked) reader(from int) io.Reader {
	rs := make([]io.Reader, 0, len(c.cs))
	for _, p := range c.pieces(from, c.n) {
		rs = append(rs, bytes.NewReader(p))
	}
	return io.MultiReader(rs...)
}

// release gives c's chunks back to p and empties c.
func (c *chunked) release(p *pool) {
	p.put(c.cs)
	*c = chunked{}
}
