package histseed

import (
	"fmt"
	"hist/lib/words"
	"os"
	"sync"
	"time"

	"hist/lib/seed"
	"hist/lib/termsafe"
)

// startProgress draws a progress line on the terminal f every 200ms until
// the returned function is called, which clears it. The bytes read come
// from /proc/self/io (rchar), so that they grow during a long scan.
func startProgress(f *os.File, name string, p *seed.Progress) (stop func()) {
	start := time.Now()
	base, haveIO := readChars()
	done := make(chan struct{})
	draw := func() {
		bytesRead := p.Bytes.Load()
		if haveIO {
			if n, ok := readChars(); ok && n-base > bytesRead {
				bytesRead = n - base
			}
		}
		secs := time.Since(start).Seconds()
		rate := 0.0
		if secs > 0 {
			rate = float64(bytesRead) / 1e6 / secs
		}
		src := termsafe.Line(p.Source())
		if src == "" {
			src = "…"
		}
		fmt.Fprintf(f, "\r\033[K%s: reading %s: %s, %.1f MB, %s, %.0f MB/s",
			name, src, words.Plural(int(p.Files.Load()), "file", "files"), float64(bytesRead)/1e6, prompts(int(p.Prompts.Load())), rate)
	}
	draw() // before the reading starts
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		t := time.NewTicker(200 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				fmt.Fprint(f, "\r\033[K")
				return
			case <-t.C:
				draw()
			}
		}
	}()
	var once sync.Once
	return func() { once.Do(func() { close(done); <-stopped }) }
}

// readChars returns the bytes this process has read so far (rchar, the
// first line of /proc/self/io).
func readChars() (n int64, ok bool) {
	data, err := os.ReadFile("/proc/self/io")
	if err == nil {
		_, err = fmt.Sscanf(string(data), "rchar: %d", &n)
	}
	return n, err == nil
}
