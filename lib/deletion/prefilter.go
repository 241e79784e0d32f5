package deletion

import (
	"bytes"
	"io"
	"os"
	"sort"
	"strings"
	"unicode/utf8"
	"unsafe"

	"hist/lib/identity"
)

// A file can hold a copy of a prompt only if its bytes hold each word of
// the prompt (a run of ASCII letters and digits in its normalized form),
// in any letter case, unless the file uses \u escapes or one of the four
// non-ASCII letters whose case fold is ASCII (İ and ı fold to i, ſ to s,
// the Kelvin sign to k). So the prefilter reads a file as fast as a byte
// search can, and only a file that may hold a copy is parsed line by line:
// an exact test, never a guess.
//
// Why it is exact: a copy's decoded text normalizes to the prompt, so it
// holds, for a word w of the prompt, consecutive characters whose folds
// are w's letters (no white space between them, or the normalized form
// would hold a space there). In the JSON line each is written as itself,
// or as a \u escape (no other escape writes a letter or digit). Written as
// itself, an ASCII letter is w's letter in either case; any other
// character folding to an ASCII letter is one of the four above.

// foldsToASCII lists the UTF-8 of the non-ASCII runes whose case fold
// (identity.Fold) is an ASCII letter or digit, by that letter. A test
// checks it against every rune.
var foldsToASCII = map[byte][]string{
	'i': {"\u0130", "\u0131"},
	's': {"\u017f"},
	'k': {"\u212a"},
}

// Words of a prompt the prefilter searches: the longest few.
const (
	prefilterWords   = 3
	prefilterMinWord = 3
	prefilterMaxWord = 64 // bytes of a word searched
	prefilterTargets = 16 // more prompts than this: every file is parsed
)

type prefilter struct {
	targets [][][]byte // per prompt, its words (lower case)
	special [][]byte   // byte sequences that make the test inconclusive
	overlap int
}

// newPrefilter returns nil when the prompts give it nothing to search for.
func newPrefilter(norms []string) *prefilter {
	if len(norms) == 0 || len(norms) > prefilterTargets {
		return nil
	}
	pf := &prefilter{special: [][]byte{[]byte(`\u`)}, overlap: 3}
	seen := map[string]bool{}
	for _, n := range norms {
		words := asciiWords(n)
		if len(words) == 0 {
			return nil // a prompt with no word to look for: parse every file
		}
		sort.SliceStable(words, func(i, j int) bool { return len(words[i]) > len(words[j]) })
		if len(words) > prefilterWords {
			words = words[:prefilterWords]
		}
		for _, w := range words {
			pf.overlap = max(pf.overlap, len(w))
			for c, folds := range foldsToASCII {
				if bytes.IndexByte(w, c) < 0 {
					continue
				}
				for _, s := range folds {
					if !seen[s] {
						seen[s] = true
						pf.special = append(pf.special, []byte(s))
					}
				}
			}
		}
		pf.targets = append(pf.targets, words)
	}
	return pf
}

// asciiWords returns the runs of ASCII lower-case letters and digits of a
// normalized text, at least prefilterMinWord long, each cut to its first
// prefilterMaxWord bytes.
func asciiWords(norm string) [][]byte {
	var out [][]byte
	start := -1
	for i := 0; i <= len(norm); i++ {
		if i < len(norm) && (norm[i] >= 'a' && norm[i] <= 'z' || norm[i] >= '0' && norm[i] <= '9') {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 && i-start >= prefilterMinWord {
			// A file that holds a word holds its start: a long word is
			// searched by its start alone.
			out = append(out, []byte(norm[start:min(i, start+prefilterMaxWord)]))
		}
		start = -1
	}
	return out
}

const prefilterChunk = 1 << 20

// mayHold reports whether the file can hold a copy of one of the prompts.
func (pf *prefilter) mayHold(f *os.File, buf []byte) (bool, []byte, error) {
	if cap(buf) < prefilterChunk+pf.overlap {
		buf = make([]byte, prefilterChunk+pf.overlap)
	}
	buf = buf[:cap(buf)]
	found := make([][]bool, len(pf.targets))
	for i, ws := range pf.targets {
		found[i] = make([]bool, len(ws))
	}
	var off int64
	keep := 0 // bytes carried over from the last chunk
	for {
		n, err := f.ReadAt(buf[keep:], off)
		off += int64(n)
		data := buf[:keep+n]
		for _, s := range pf.special {
			if bytes.Contains(data, s) {
				return true, buf, nil
			}
		}
		for i, ws := range pf.targets {
			all := true
			for j, w := range ws {
				if !found[i][j] {
					found[i][j] = containsFold(data, w)
				}
				all = all && found[i][j]
			}
			if all {
				return true, buf, nil
			}
		}
		if err == io.EOF || n == 0 {
			return false, buf, nil
		}
		if err != nil {
			return false, buf, err
		}
		keep = min(pf.overlap-1, len(data))
		copy(buf, data[len(data)-keep:])
	}
}

// rarity ranks ASCII letters by how rarely they occur in English text.
const byFrequency = "etaoinsrhldcumfpgwybvkxjqz"

// containsFold reports whether data holds w (lower-case ASCII letters and
// digits) in any letter case.
func containsFold(data, w []byte) bool {
	// Search for w's rarest byte, in both cases, and check around it.
	p, best := 0, -1
	for i, c := range w {
		rank := 100 // digits: rare
		if c >= 'a' && c <= 'z' {
			rank = strings.IndexByte(byFrequency, c)
		}
		if rank > best {
			p, best = i, rank
		}
	}
	pivots := []byte{w[p]}
	if w[p] >= 'a' && w[p] <= 'z' {
		pivots = append(pivots, w[p]-'a'+'A')
	}
	for _, c := range pivots {
		for i := 0; ; {
			j := bytes.IndexByte(data[i:], c)
			if j < 0 {
				break
			}
			at := i + j - p
			if at >= 0 && at+len(w) <= len(data) && equalFoldASCII(data[at:at+len(w)], w) {
				return true
			}
			i += j + 1
		}
	}
	return false
}

func equalFoldASCII(b, lower []byte) bool {
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}

// prefixLen is how much of a line's text is normalized first: when that
// start already differs from every prompt, the rest is not looked at.
const prefixLen = 24

// maybePrefix reports whether the normalized form of text could be one of
// the sorted prompts, from the normalized form of its first bytes (cut at
// a character boundary, so that it is a prefix of the whole text's).
func (m *matcher) maybePrefix(text string) bool {
	if len(text) <= prefixLen {
		return true
	}
	k := prefixLen
	for k > 0 && !utf8.RuneStart(text[k]) {
		k--
	}
	m.norm = identity.AppendNormalized(m.norm[:0], text[:k])
	p := unsafe.String(unsafe.SliceData(m.norm), len(m.norm))
	i := sort.SearchStrings(m.sorted, p)
	return i < len(m.sorted) && strings.HasPrefix(m.sorted[i], p)
}
