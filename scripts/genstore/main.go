// Command genstore writes a deterministic prompt store for benchmarks:
//
//	go run ./scripts/genstore -out DIR -n 1000000 [-projects 50] [-files 500] [-seed 1]
//	go run ./scripts/genstore -out DIR -n 100000 -plant 'the secret prompt' -copies 20
//	go run ./scripts/genstore -out DIR -n 1000000 -mix realistic
//
// DIR is the store root. It gets projects/<hash>/<uuid>.jsonl capture files
// and registry.json (folders 0700, files 0600). The N prompts are spread
// over the capture files of the projects (project i holds files i, i+P,
// ...), with realistic lengths (mostly 20-400 bytes, some multi-line, a
// few 10-50 KB), about 15% repeats of earlier prompts (some of them
// differing only in case or whitespace, so they share an identity) and
// strictly increasing timestamps. Its words are mostly ASCII with a few
// non-ASCII ones, so most prompts (86% at 1M) hold some non-ASCII text;
// -mix realistic draws ASCII words only and gives one prompt in eight a
// non-ASCII word (an emoji, an accented word, CJK), as typed prompts
// mostly are. -plant adds TEXT -copies more times,
// each in a random file at a random point of the sequence (so the store
// then holds N+copies records).
//
// The same flags always give the same bytes. DIR must not hold a store.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"hist/lib/record"
	"hist/lib/store"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "genstore:", err)
		os.Exit(1)
	}
}

type config struct {
	out      string
	n        int
	projects int
	files    int
	seed     uint64
	plant    string
	copies   int
	start    int64
	mix      string
}

func run() error {
	var c config
	flag.StringVar(&c.out, "out", "", "store root to create (required)")
	flag.IntVar(&c.n, "n", 10000, "number of prompts")
	flag.IntVar(&c.projects, "projects", 50, "number of projects")
	flag.IntVar(&c.files, "files", 500, "number of capture files (spread over the projects)")
	flag.Uint64Var(&c.seed, "seed", 1, "random seed")
	flag.StringVar(&c.plant, "plant", "", "a prompt to add -copies times in random files")
	flag.IntVar(&c.copies, "copies", 20, "how many copies of -plant to add")
	flag.Int64Var(&c.start, "start", 1700000000000, "timestamp (unix ms) of the first prompt")
	flag.StringVar(&c.mix, "mix", "default", "the prompts' characters: default (mostly with some non-ASCII) or realistic (mostly ASCII)")
	flag.Parse()
	switch {
	case c.mix != "default" && c.mix != "realistic":
		return fmt.Errorf("-mix %s: choose default or realistic", c.mix)
	case c.out == "":
		return errors.New("-out DIR is required")
	case c.n < 0 || c.projects < 1 || c.files < 1 || c.copies < 0:
		return errors.New("-n and -copies must be >= 0, -projects and -files >= 1")
	}
	if c.files < c.projects {
		c.projects = c.files
	}
	if _, err := os.Stat(filepath.Join(c.out, store.ProjectsDir)); err == nil {
		return fmt.Errorf("%s already holds a store: remove it first", c.out)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return generate(c)
}

// vocabulary: mostly ASCII words of code-talk, a few non-ASCII ones and
// characters JSON must escape.
var words = strings.Fields(`the a to of and in for is that this it with on be as
	function file test error fix add remove refactor update use make should can why how what
	please check run build go npm cargo make docker git commit branch merge rebase diff
	struct interface method type return value pointer slice map channel goroutine mutex
	handler server client request response json yaml config env variable path folder
	README CHANGELOG main.go lib/store/store.go src/index.ts app.py Makefile Dockerfile
	TODO FIXME bug panic nil null undefined segfault timeout retry cache index query
	database table column migration schema sqlite postgres redis kafka http grpc api
	write read parse encode decode format lint vet bench profile optimise allocate
	café naïve résumé Größe straße 日本語 测试 проверка ошибка ✓ → … 🙂 🚀
	"quoted" 'single' back\slash tab	here {"k":1} <html> &amp; 100% $HOME ~/x`)

// asciiWords are the words of -mix realistic, and foreign the non-ASCII
// ones it puts in one prompt in eight.
var (
	asciiWords = func() []string {
		var out []string
		for _, w := range words {
			if strings.IndexFunc(w, func(c rune) bool { return c >= 0x80 }) < 0 {
				out = append(out, w)
			}
		}
		return out
	}()
	foreign = strings.Fields(`🙂 🚀 👍 🎉 ✅ café naïve résumé Größe straße façade señor 日本語 测试 漢字 한국어`)
	vocab   = words
)

// sprinkle puts a non-ASCII word in one prompt in eight of b's.
func sprinkle(b []byte, r *rand.Rand) []byte {
	if r.IntN(8) != 0 {
		return b
	}
	w := foreign[r.IntN(len(foreign))]
	k := r.IntN(len(b) + 1)
	at := bytes.IndexByte(b[k:], ' ')
	if at < 0 {
		return append(append(b, ' '), w...)
	}
	return slices.Insert(b, k+at, []byte(" "+w)...)
}

// sentence appends words to b until it is about n bytes long.
func sentence(b []byte, r *rand.Rand, n int) []byte {
	start := len(b)
	for len(b)-start < n {
		if len(b) > start {
			b = append(b, ' ')
		}
		b = append(b, vocab[r.IntN(len(vocab))]...)
	}
	return b
}

// prompt appends one new prompt to b.
func prompt(b []byte, r *rand.Rand) []byte {
	switch x := r.IntN(10000); {
	case x < 8: // 0.08%: a pasted log or file, 10-50 KB
		size := 10<<10 + r.IntN(40<<10)
		start := len(b)
		for len(b)-start < size {
			b = sentence(b, r, 40+r.IntN(80))
			b = append(b, '\n')
		}
		return b[:len(b)-1]
	case x < 800: // 8%: multi-line, 2-8 lines
		lines := 2 + r.IntN(7)
		for i := range lines {
			if i > 0 {
				b = append(b, '\n')
				if r.IntN(4) == 0 {
					b = append(b, "  "...)
				}
			}
			b = sentence(b, r, 10+r.IntN(120))
		}
		return b
	case x < 9000: // 82%: 20-400 bytes, skewed short
		n := 20 + r.IntN(100) + r.IntN(100) + r.IntN(181)*r.IntN(2)
		return sentence(b, r, n)
	default: // 10%: short, 5-20 bytes
		return sentence(b, r, 5+r.IntN(15))
	}
}

// variant appends a copy of p that has p's identity: the same text, or
// the text with its case or whitespace changed.
func variant(b []byte, r *rand.Rand, p string) []byte {
	switch r.IntN(10) {
	case 0:
		return append(b, strings.ToUpper(p)...)
	case 1:
		b = append(b, "  "...)
		b = append(b, strings.ReplaceAll(p, " ", "  ")...)
		return append(b, '\n')
	}
	return append(b, p...)
}

type file struct {
	w   *bufio.Writer
	f   *os.File
	buf []byte
}

func uuidOf(r *rand.Rand) string {
	var u [16]byte
	for i := range u {
		u[i] = byte(r.Uint32())
	}
	u[6] = u[6]&0x0f | 0x40
	u[8] = u[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", u[0:4], u[4:6], u[6:8], u[8:10], u[10:16])
}

func generate(c config) error {
	if c.mix == "realistic" {
		vocab = asciiWords
	}
	r := rand.New(rand.NewPCG(c.seed, 0x9e3779b97f4a7c15))
	root := c.out
	if err := os.MkdirAll(filepath.Join(root, store.ProjectsDir), 0o700); err != nil {
		return err
	}
	if err := os.Chmod(root, 0o700); err != nil {
		return err
	}
	reg := map[string]string{}
	hashes := make([]string, c.projects)
	for i := range hashes {
		cwd := fmt.Sprintf("/home/dev/src/project-%02d", i)
		if i%7 == 3 {
			cwd = fmt.Sprintf("/home/dev/work/client %02d/app", i) // a space in the path
		}
		hashes[i] = store.Hash(cwd)
		reg[hashes[i]] = cwd
		if err := os.Mkdir(filepath.Join(root, store.ProjectsDir, hashes[i]), 0o700); err != nil {
			return err
		}
	}
	files := make([]*file, c.files)
	for i := range files {
		p := filepath.Join(root, store.ProjectsDir, hashes[i%c.projects], uuidOf(r)+".jsonl")
		f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			return err
		}
		files[i] = &file{f: f, w: bufio.NewWriterSize(f, 32<<10)}
	}
	// Where the planted copies go: before prompt plantAt[k].
	plantAt := map[int]int{}
	if c.plant != "" {
		for range c.copies {
			plantAt[r.IntN(c.n+1)]++
		}
	}
	// Earlier prompts, for repeats: the last few thousand and a sample of
	// older ones.
	const recent = 4096
	var pool []string
	var text []byte
	ts := c.start
	emit := func(t []byte) error {
		ts += 1 + int64(r.IntN(3000))
		fl := files[r.IntN(len(files))]
		fl.buf = record.Append(fl.buf[:0], record.Record{Text: string(t), TS: ts})
		_, err := fl.w.Write(fl.buf)
		return err
	}
	for i := 0; i <= c.n; i++ {
		for range plantAt[i] {
			if err := emit([]byte(c.plant)); err != nil {
				return err
			}
		}
		if i == c.n {
			break
		}
		text = text[:0]
		if len(pool) > 0 && r.IntN(100) < 15 {
			var p string
			if r.IntN(2) == 0 {
				p = pool[len(pool)-1-r.IntN(min(len(pool), recent))]
			} else {
				p = pool[r.IntN(len(pool))]
			}
			text = variant(text, r, p)
		} else {
			text = prompt(text, r)
			if c.mix == "realistic" {
				text = sprinkle(text, r)
			}
			if len(text) < 2000 && (len(pool) < 1<<16 || r.IntN(8) == 0) {
				if len(pool) >= 1<<17 {
					pool[r.IntN(len(pool))] = string(text)
				} else {
					pool = append(pool, string(text))
				}
			}
		}
		if err := emit(text); err != nil {
			return err
		}
	}
	for _, fl := range files {
		if err := fl.w.Flush(); err != nil {
			return err
		}
		if err := fl.f.Close(); err != nil {
			return err
		}
	}
	data, err := json.MarshalIndent(reg, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(root, store.RegistryName), append(data, '\n'), 0o600)
}
