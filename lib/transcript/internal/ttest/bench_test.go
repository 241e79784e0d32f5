package ttest_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"hist/lib/transcript"
	"hist/lib/transcript/claude"
	"hist/lib/transcript/pi"
)

// benchCorpus writes copies of the files pattern matches until about size
// bytes: copy i of file j is written where file(i, j, data) says, with the
// content it returns (given the original). It returns the folder and the
// bytes written. HIST_BENCH_DIR keeps the corpus in a named folder, to
// compare with other tools (grep -c) over the same files.
func benchCorpus(b *testing.B, size int, pattern string, file func(i, j int, data []byte) (rel string, out []byte)) (string, int64) {
	b.Helper()
	root := os.Getenv("HIST_BENCH_DIR")
	if root == "" {
		root = b.TempDir()
	}
	files, _ := filepath.Glob(pattern)
	if len(files) == 0 {
		b.Fatalf("no files %s", pattern)
	}
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
		for j, data := range src {
			rel, data := file(i, j, bytes.Clone(data))
			name := filepath.Join(root, rel)
			if err := os.MkdirAll(filepath.Dir(name), 0o700); err != nil {
				b.Fatal(err)
			}
			if err := os.WriteFile(name, data, 0o600); err != nil {
				b.Fatal(err)
			}
			total += int64(len(data))
		}
	}
	return root, total
}

// benchScan measures scan over root, which holds size bytes: every pass
// must read them all and find prompts.
func benchScan(b *testing.B, scan func(string, transcript.Keep, func(transcript.Prompt) error) (transcript.Stats, error), root string, size int64) {
	b.SetBytes(size)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		st, err := scan(root, nil, func(transcript.Prompt) error { return nil })
		if err != nil || st.Bytes != size || st.Prompts == 0 {
			b.Fatalf("%+v %v", st, err)
		}
	}
}

// toolBody is a 64 KB file read, the bulk of real sessions.
var toolBody = strings.Repeat(`func f() { return \"user\" }\n`, 64<<10/29)

// piCorpus writes copies of the real pi sessions (each copy's prompts made
// distinct, each followed by extra) until about size bytes.
func piCorpus(b *testing.B, size int, extra func(i int) []byte) (string, int64) {
	return benchCorpus(b, size, "../../pi/testdata/sessions/*/*.jsonl", func(i, j int, data []byte) (string, []byte) {
		data = bytes.ReplaceAll(data, []byte("[pi"), []byte(fmt.Sprintf("[pi%d.%d", i, j)))
		if extra != nil {
			data = append(data, extra(i)...)
		}
		return filepath.Join(fmt.Sprintf("--copy-%04d--", i), fmt.Sprintf("2026-11-30T01-26-%02d-000Z_%04d.jsonl", j, i)), data
	})
}

// BenchmarkPiScan reads the real pi sessions, replicated to 32 MB.
func BenchmarkPiScan(b *testing.B) {
	root, size := piCorpus(b, 32<<20, nil)
	benchScan(b, pi.Scan, root, size)
}

// BenchmarkPiScanToolHeavy adds large tool results and answers to every
// pi session.
func BenchmarkPiScanToolHeavy(b *testing.B) {
	extra := func(i int) []byte {
		return []byte(fmt.Sprintf(
			`{"type":"message","id":"t%d","parentId":"x","timestamp":"2026-11-30T01:27:00.000Z","message":{"role":"toolResult","toolCallId":"c","toolName":"read","content":[{"type":"text","text":"%s"}],"isError":false,"timestamp":1796002020000}}`+"\n"+
				`{"type":"message","id":"u%d","parentId":"t%d","timestamp":"2026-11-30T01:27:01.000Z","message":{"role":"assistant","content":[{"type":"text","text":"%s"}],"stopReason":"stop","timestamp":1796002021000}}`+"\n",
			i, toolBody, i, i, toolBody))
	}
	root, size := piCorpus(b, 64<<20, extra)
	benchScan(b, pi.Scan, root, size)
}

// claudeCorpus writes copies of the real Claude Code transcripts (each
// copy's uuids and prompts made distinct, each followed by extra) until
// about size bytes.
func claudeCorpus(b *testing.B, size int, extra func(i int) []byte) (string, int64) {
	return benchCorpus(b, size, "../../claude/testdata/*/projects/*/*.jsonl", func(i, j int, data []byte) (string, []byte) {
		tag := []byte(fmt.Sprintf("%04x%04x", i, j))
		data = bytes.ReplaceAll(data, []byte(`"uuid":"`), append([]byte(`"uuid":"`), tag...))
		data = bytes.ReplaceAll(data, []byte("[cc"), append([]byte("[cc"), tag...))
		if extra != nil {
			data = append(data, extra(i)...)
		}
		return filepath.Join(fmt.Sprintf("-copy-%04d", i), fmt.Sprintf("%04d-%04d.jsonl", i, j)), data
	})
}

// BenchmarkClaudeScan reads the real Claude Code transcripts (vendor
// records dropped), replicated to 32 MB.
func BenchmarkClaudeScan(b *testing.B) {
	root, size := claudeCorpus(b, 32<<20, nil)
	benchScan(b, claude.Scan, root, size)
}

// BenchmarkClaudeScanToolHeavy adds to every transcript what makes up the
// bulk of real ones: a 64 KB file read as a tool result (a "type":"user"
// record) and an assistant answer of the same size.
func BenchmarkClaudeScanToolHeavy(b *testing.B) {
	extra := func(i int) []byte {
		return []byte(fmt.Sprintf(
			`{"parentUuid":"p","isSidechain":false,"type":"user","message":{"role":"user","content":[{"tool_use_id":"t%d","type":"tool_result","content":"%s","is_error":false}]},"uuid":"r%d","timestamp":"2026-11-30T01:27:00.631Z","toolUseResult":{"stdout":"%s","stderr":""},"sourceToolAssistantUUID":"p","userType":"external","entrypoint":"cli","cwd":"/w","sessionId":"s","version":"2.1.332"}`+"\n"+
				`{"parentUuid":"r%d","isSidechain":false,"message":{"model":"m","id":"msg","type":"message","role":"assistant","content":[{"type":"text","text":"%s"}]},"type":"assistant","uuid":"a%d","timestamp":"2026-11-30T01:27:01.000Z","cwd":"/w","sessionId":"s"}`+"\n",
			i, toolBody, i, toolBody, i, toolBody, i))
	}
	root, size := claudeCorpus(b, 64<<20, extra)
	benchScan(b, claude.Scan, root, size)
}
