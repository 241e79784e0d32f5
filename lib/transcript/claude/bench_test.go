package claude

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"hist/lib/transcript"
)

// benchCorpus writes copies of the real transcripts (each copy's uuids and
// prompts made distinct) until about size bytes, each copy followed by
// extra, and returns the folder and its size. HIST_BENCH_DIR keeps the
// corpus in a named folder, to compare with other tools (grep -c) over the
// same files.
func benchCorpus(b *testing.B, size int, extra func(i int) []byte) (string, int64) {
	b.Helper()
	root := os.Getenv("HIST_BENCH_DIR")
	if root == "" {
		root = b.TempDir()
	}
	files, _ := filepath.Glob("testdata/*/projects/*/*.jsonl")
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
		dir := filepath.Join(root, fmt.Sprintf("-copy-%04d", i))
		if err := os.MkdirAll(dir, 0o700); err != nil {
			b.Fatal(err)
		}
		for j, data := range src {
			tag := []byte(fmt.Sprintf("%04x%04x", i, j))
			data = bytes.ReplaceAll(data, []byte(`"uuid":"`), append([]byte(`"uuid":"`), tag...))
			data = bytes.ReplaceAll(data, []byte("[cc"), append([]byte("[cc"), tag...))
			if extra != nil {
				data = append(data, extra(i)...)
			}
			name := filepath.Join(dir, fmt.Sprintf("%04d-%04d.jsonl", i, j))
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

// BenchmarkScan reads the real transcripts (vendor records dropped),
// replicated to 32 MB.
func BenchmarkScan(b *testing.B) {
	root, size := benchCorpus(b, 32<<20, nil)
	benchScan(b, root, size)
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
	benchScan(b, root, size)
}
