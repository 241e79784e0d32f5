package pi

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"hist/lib/transcript"
)

// benchCorpus writes copies of the real sessions (each copy's prompts made
// distinct) until about size bytes, plus extra, and returns the folder and
// its size. HIST_BENCH_DIR keeps the corpus in a named folder, to compare
// with other tools (grep -c) over the same files.
func benchCorpus(b *testing.B, size int, extra func(dir string, i int) []byte) (string, int64) {
	b.Helper()
	root := os.Getenv("HIST_BENCH_DIR")
	if root == "" {
		root = b.TempDir()
	}
	files, _ := filepath.Glob("testdata/sessions/*/*.jsonl")
	var src [][]byte
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		src = append(src, data)
	}
	var total int64
	for i := 0; total < int64(size); i++ {
		dir := filepath.Join(root, fmt.Sprintf("--copy-%04d--", i))
		if err := os.MkdirAll(dir, 0o700); err != nil {
			b.Fatal(err)
		}
		for j, data := range src {
			data = bytes.ReplaceAll(data, []byte("[pi"), []byte(fmt.Sprintf("[pi%d.%d", i, j)))
			if extra != nil {
				data = append(data, extra(dir, i)...)
			}
			name := filepath.Join(dir, fmt.Sprintf("2026-11-30T01-26-%02d-000Z_%04d.jsonl", j, i))
			if err := os.WriteFile(name, data, 0o600); err != nil {
				b.Fatal(err)
			}
			total += int64(len(data))
		}
	}
	return root, total
}

func benchScan(b *testing.B, root string, size int64) {
	b.SetBytes(size)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		st, err := Scan(root, func(transcript.Prompt) error { return nil })
		if err != nil || st.Bytes != size || st.Prompts == 0 {
			b.Fatalf("%+v %v", st, err)
		}
	}
}

// BenchmarkScan reads the real sessions, replicated to 32 MB.
func BenchmarkScan(b *testing.B) {
	root, size := benchCorpus(b, 32<<20, nil)
	benchScan(b, root, size)
}

// BenchmarkScanToolHeavy adds large tool results and answers (file reads
// of 64 KB, the bulk of real sessions) to every session.
func BenchmarkScanToolHeavy(b *testing.B) {
	body := strings.Repeat(`func f() { return \"user\" }\n`, 64<<10/29)
	extra := func(dir string, i int) []byte {
		return []byte(fmt.Sprintf(
			`{"type":"message","id":"t%d","parentId":"x","timestamp":"2026-11-30T01:27:00.000Z","message":{"role":"toolResult","toolCallId":"c","toolName":"read","content":[{"type":"text","text":"%s"}],"isError":false,"timestamp":1796002020000}}`+"\n"+
				`{"type":"message","id":"u%d","parentId":"t%d","timestamp":"2026-11-30T01:27:01.000Z","message":{"role":"assistant","content":[{"type":"text","text":"%s"}],"stopReason":"stop","timestamp":1796002021000}}`+"\n",
			i, body, i, i, body))
	}
	root, size := benchCorpus(b, 64<<20, extra)
	benchScan(b, root, size)
}
