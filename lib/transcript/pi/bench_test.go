package pi

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"hist/lib/transcript/internal/ttest"
)

// benchCorpus writes copies of the real sessions (each copy's prompts made
// distinct, each followed by extra) until about size bytes, and returns the
// folder and its size.
func benchCorpus(b *testing.B, size int, extra func(i int) []byte) (string, int64) {
	return ttest.BenchCorpus(b, size, "testdata/sessions/*/*.jsonl", func(i, j int, data []byte) (string, []byte) {
		data = bytes.ReplaceAll(data, []byte("[pi"), []byte(fmt.Sprintf("[pi%d.%d", i, j)))
		if extra != nil {
			data = append(data, extra(i)...)
		}
		return filepath.Join(fmt.Sprintf("--copy-%04d--", i), fmt.Sprintf("2026-11-30T01-26-%02d-000Z_%04d.jsonl", j, i)), data
	})
}

// BenchmarkScan reads the real sessions, replicated to 32 MB.
func BenchmarkScan(b *testing.B) {
	root, size := benchCorpus(b, 32<<20, nil)
	ttest.BenchScan(b, Scan, root, size)
}

// BenchmarkScanToolHeavy adds large tool results and answers (file reads
// of 64 KB, the bulk of real sessions) to every session.
func BenchmarkScanToolHeavy(b *testing.B) {
	body := strings.Repeat(`func f() { return \"user\" }\n`, 64<<10/29)
	extra := func(i int) []byte {
		return []byte(fmt.Sprintf(
			`{"type":"message","id":"t%d","parentId":"x","timestamp":"2026-11-30T01:27:00.000Z","message":{"role":"toolResult","toolCallId":"c","toolName":"read","content":[{"type":"text","text":"%s"}],"isError":false,"timestamp":1796002020000}}`+"\n"+
				`{"type":"message","id":"u%d","parentId":"t%d","timestamp":"2026-11-30T01:27:01.000Z","message":{"role":"assistant","content":[{"type":"text","text":"%s"}],"stopReason":"stop","timestamp":1796002021000}}`+"\n",
			i, body, i, i, body))
	}
	root, size := benchCorpus(b, 64<<20, extra)
	ttest.BenchScan(b, Scan, root, size)
}
