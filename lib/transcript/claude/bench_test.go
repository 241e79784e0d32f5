package claude

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"hist/lib/transcript/internal/ttest"
)

// benchCorpus writes copies of the real transcripts (each copy's uuids and
// prompts made distinct, each followed by extra) until about size bytes,
// and returns the folder and its size.
func benchCorpus(b *testing.B, size int, extra func(i int) []byte) (string, int64) {
	return ttest.BenchCorpus(b, size, "testdata/*/projects/*/*.jsonl", func(i, j int, data []byte) (string, []byte) {
		tag := []byte(fmt.Sprintf("%04x%04x", i, j))
		data = bytes.ReplaceAll(data, []byte(`"uuid":"`), append([]byte(`"uuid":"`), tag...))
		data = bytes.ReplaceAll(data, []byte("[cc"), append([]byte("[cc"), tag...))
		if extra != nil {
			data = append(data, extra(i)...)
		}
		return filepath.Join(fmt.Sprintf("-copy-%04d", i), fmt.Sprintf("%04d-%04d.jsonl", i, j)), data
	})
}

// BenchmarkScan reads the real transcripts (vendor records dropped),
// replicated to 32 MB.
func BenchmarkScan(b *testing.B) {
	root, size := benchCorpus(b, 32<<20, nil)
	ttest.BenchScan(b, Scan, root, size)
}

// BenchmarkScanToolHeavy adds to every transcript what makes up the bulk of
// real ones: a 64 KB file read as a tool result (a "type":"user" record)
// and an assistant answer of the same size.
func BenchmarkScanToolHeavy(b *testing.B) {
	body := strings.Repeat(`func f() { return \"user\" }\n`, 64<<10/29)
	extra := func(i int) []byte {
		return []byte(fmt.Sprintf(
			`{"parentUuid":"p","isSidechain":false,"type":"user","message":{"role":"user","content":[{"tool_use_id":"t%d","type":"tool_result","content":"%s","is_error":false}]},"uuid":"r%d","timestamp":"2026-11-30T01:27:00.631Z","toolUseResult":{"stdout":"%s","stderr":""},"sourceToolAssistantUUID":"p","userType":"external","entrypoint":"cli","cwd":"/w","sessionId":"s","version":"2.1.332"}`+"\n"+
				`{"parentUuid":"r%d","isSidechain":false,"message":{"model":"m","id":"msg","type":"message","role":"assistant","content":[{"type":"text","text":"%s"}]},"type":"assistant","uuid":"a%d","timestamp":"2026-11-30T01:27:01.000Z","cwd":"/w","sessionId":"s"}`+"\n",
			i, body, i, body, i, body, i))
	}
	root, size := benchCorpus(b, 64<<20, extra)
	ttest.BenchScan(b, Scan, root, size)
}
