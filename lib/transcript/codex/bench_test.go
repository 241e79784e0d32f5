package codex

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sync"
	"testing"

	"github.com/klauspost/compress/zstd"

	"hist/lib/transcript"
)

// benchTarget is the size of the replicated corpus.
const benchTarget = 48 << 20

var uuidRE = regexp.MustCompile(`01a22a1[01]-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)

// benchTmp holds the corpus when HIST_BENCH_DIR is not set. It lasts as
// long as the test binary (TestMain removes it), not one run of a
// benchmark function: the corpus is made once and read by every run.
var benchTmp string

func TestMain(m *testing.M) {
	code := m.Run()
	if benchTmp != "" {
		os.RemoveAll(benchTmp)
	}
	os.Exit(code)
}

// benchCorpus replicates the real rollouts (each copy with its own ids)
// into a CODEX_HOME-like folder of about benchTarget bytes: plain, or
// compressed with zstd. HIST_BENCH_DIR keeps it somewhere (to compare with
// grep); otherwise it lives in a temporary folder.
func benchCorpus(b *testing.B, compress bool) (string, int64) {
	b.Helper()
	base := os.Getenv("HIST_BENCH_DIR")
	if base == "" {
		if benchTmp == "" {
			dir, err := os.MkdirTemp("", "codex-bench-")
			if err != nil {
				b.Fatal(err)
			}
			benchTmp = dir
		}
		base = benchTmp
	}
	root := filepath.Join(base, map[bool]string{false: "plain", true: "zst"}[compress])
	files, _ := filepath.Glob("testdata/*/sessions/*/*/*/*.jsonl")
	var srcs [][]byte
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		srcs = append(srcs, data)
	}
	var enc *zstd.Encoder
	if compress {
		enc, _ = zstd.NewWriter(nil)
	}
	var plain int64
	for n := 0; plain < benchTarget; n++ {
		for i, src := range srcs {
			// Every id gets the copy's number as its first 8 digits, so
			// copies are distinct sessions with distinct items.
			renum := func(b []byte) []byte {
				return uuidRE.ReplaceAllFunc(b, func(u []byte) []byte { return fmt.Appendf(nil, "%08x%s", n, u[8:]) })
			}
			data := renum(src)
			id := string(renum(uuidRE.Find(src)))
			name := filepath.Join(root, "sessions", "2026", "11", fmt.Sprintf("%02d", n%28+1), fmt.Sprintf("rollout-2026-11-30T01-27-%02d-%s.jsonl", i, id))
			if compress {
				data = enc.EncodeAll(data, nil)
				name += ".zst"
			}
			if _, err := os.Stat(name); err != nil {
				if err := os.MkdirAll(filepath.Dir(name), 0o700); err != nil {
					b.Fatal(err)
				}
				if err := os.WriteFile(name, data, 0o600); err != nil {
					b.Fatal(err)
				}
			}
			plain += int64(len(renum(src)))
		}
	}
	return root, plain
}

var benchOnce sync.Map

func benchScan(b *testing.B, compress bool) {
	v, _ := benchOnce.LoadOrStore(compress, &struct {
		sync.Once
		root string
		size int64
	}{})
	c := v.(*struct {
		sync.Once
		root string
		size int64
	})
	c.Do(func() { c.root, c.size = benchCorpus(b, compress) })
	b.SetBytes(c.size) // uncompressed bytes, so both variants compare
	b.ResetTimer()
	var st transcript.Stats
	for i := 0; i < b.N; i++ {
		var err error
		st, err = scanAll(c.root, func(transcript.Prompt) error { return nil })
		if err != nil || st.Files == 0 || st.Prompts == 0 {
			b.Fatalf("%+v %v", st, err) // an empty corpus measures nothing
		}
	}
	b.ReportMetric(float64(st.Prompts), "prompts")
	b.ReportMetric(float64(st.Files), "files")
}

func BenchmarkScan(b *testing.B)     { benchScan(b, false) }
func BenchmarkScanZstd(b *testing.B) { benchScan(b, true) }

// BenchmarkScanReaderLongLines reads one rollout made of multi-megabyte
// tool outputs, the shape of long real sessions.
func BenchmarkScanReaderLongLines(b *testing.B) {
	var buf bytes.Buffer
	r := (&rb{}).meta(sess, "/w", nil)
	out := bytes.Repeat([]byte("drwxr-xr-x  2 root root 4096 Nov 30 01:27 some/dir/name\n"), 40000)
	for i := 0; i < 16; i++ {
		r.item(fmt.Sprintf("2026-01-02T03:04:%02d.000Z", i), fmt.Sprint(i), "prompt number "+fmt.Sprint(i))
		r.add("2026-01-02T03:04:06.500Z", "response_item", map[string]any{"type": "function_call_output", "call_id": "c", "output": string(out)})
		r.agent("2026-01-02T03:04:07.000Z", string(out[:len(out)/4]))
	}
	buf.Write(r.bytes())
	data := buf.Bytes()
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := ScanReader(bytes.NewReader(data), "x", func(transcript.Prompt) error { return nil }); err != nil {
			b.Fatal(err)
		}
	}
}
