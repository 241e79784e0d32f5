package jsonscan

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// fixtureLines returns the lines of the real transcripts the pi and claude
// readers test with (the fuzz seeds).
func fixtureLines(f testing.TB) [][]byte {
	var files []string
	for _, pattern := range []string{
		"../transcript/pi/testdata/sessions/*/*.jsonl",
		"../transcript/claude/testdata/*/projects/*/*.jsonl",
	} {
		m, _ := filepath.Glob(pattern)
		if len(m) == 0 {
			f.Fatalf("no fixture transcripts %s", pattern)
		}
		files = append(files, m...)
	}
	var out [][]byte
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		out = append(out, bytes.Split(bytes.TrimSuffix(b, []byte("\n")), []byte("\n"))...)
	}
	return out
}

// walk decodes a JSON value with the reader in json.go into the shapes
// encoding/json gives with UseNumber, so the two can be compared.
func walk(v []byte) (any, bool) {
	t := bytes.TrimSpace(v)
	if len(t) == 0 {
		return nil, false
	}
	switch t[0] {
	case '{': // EachMember takes the white space around
		out := map[string]any{}
		ok := true
		if !EachMember(v, func(k, val []byte) {
			x, good := walk(val)
			ok = ok && good
			out[string(k)] = x
		}) {
			return nil, false
		}
		return out, ok
	}
	switch v[0] {
	case '[':
		out := []any{}
		ok := true
		if !EachElement(v, func(el []byte) {
			x, good := walk(el)
			ok = ok && good
			out = append(out, x)
		}) {
			return nil, false
		}
		return out, ok
	case '"':
		return StringValue(v)
	case 't':
		return true, string(v) == "true"
	case 'f':
		return false, string(v) == "false"
	case 'n':
		return nil, string(v) == "null"
	}
	end, ok := skipValue(v, 0, 0)
	return json.Number(v), ok && end == len(v)
}

func decodeStd(b []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var x any
	err := d.Decode(&x)
	return x, err
}

func checkWalk(t *testing.T, b []byte) {
	t.Helper()
	trimmed := bytes.TrimSpace(b)
	var got any
	var ok bool
	if len(trimmed) > 0 && trimmed[0] == '{' {
		got, ok = walk(b) // EachMember takes the white space around
	} else {
		if !json.Valid(b) {
			walk(trimmed) // must not panic
			return
		}
		got, ok = walk(trimmed)
	}
	if !json.Valid(b) {
		return
	}
	want, err := decodeStd(b)
	if err != nil {
		t.Fatalf("encoding/json: %v", err)
	}
	if !ok {
		t.Fatalf("valid JSON rejected: %q", b)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%q:\n got %#v\nwant %#v", b, got, want)
	}
}

func TestJSONScan(t *testing.T) {
	for _, s := range []string{
		`{}`, ` { } `, `{"a":1}`, `{"a":{"b":[1,2,{"c":null}]},"d":true,"e":false}`,
		`{"a":1,"a":2}`, `{"k\u0065y":"v"}`, `{"a":"\u00e9\ud83d\ude80\"\\\/\b\f\n\r\t"}`,
		`{"a":"\ud800"}`, `{"a":"\udc00\ud800x"}`, `{"a":"\ud83d\u0041"}`, "{\"a\":\"\xff\xfe ok\"}",
		`{"a":[]}`, `{"a":[ ]}`, `{"a":-1.5e+10}`, `[1,"x",{"y":[]}]`, `"just a string"`, `12`, `null`,
		`{"a":"` + strings.Repeat(`\n`, 1000) + `"}`, `{"a":"` + strings.Repeat(`x\"`, 1000) + `"}`,
		`{"a":"\\"}`, `{"a":"\\\\\""}`,
		"{\"k\xce\":{\"\xff\":1}}",
	} {
		if !json.Valid([]byte(s)) {
			t.Fatalf("test input %q is not valid JSON", s)
		}
		checkWalk(t, []byte(s))
	}
	for _, s := range []string{
		``, `{`, `}`, `{"a"}`, `{"a":}`, `{"a":1,}`, `{"a":1 "b":2}`, `{"a":1}x`, `{"a":1}}`,
		`{"a":tru}`, `{"a":nul}`, `{"a":"x}`, `{"a":"\x"}`, `{"a":"\u12"}`, `{"a":[1,]}`, `{"a":[1 2]}`,
		`{"a":{"b":1]}`, `{a:1}`, `{"a":+1}`, `{"a":.5}`, `{"a":"\`, `{"a":[` + strings.Repeat("[", maxDepth) + strings.Repeat("]", maxDepth) + `]}`,
	} {
		got, ok := walk([]byte(s))
		if ok {
			t.Errorf("%q accepted as %#v", s, got)
		}
	}
	// Deep nesting is refused, not a stack overflow.
	deep := []byte(`{"a":` + strings.Repeat("[", 5_000_000))
	if EachMember(deep, func(k, v []byte) {}) {
		t.Error("deep nesting accepted")
	}
}

// FuzzJSONScan compares the reader with encoding/json on every valid input
// and checks it never panics on the others.
func FuzzJSONScan(f *testing.F) {
	for _, l := range fixtureLines(f) {
		f.Add(l)
	}
	f.Add([]byte(`{"a":"\ud83d\ude80","b":[{"c":1e5}],"c":"\u00"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		checkWalk(t, b)
		checkNested(t, b)
	})
}

// checkNested checks EachMemberNested against EachMember called on the
// object, then on each value of the nested member that is an object. A
// nested object EachMember cannot walk (a key with a bad escape, which
// skipping the value does not decode) makes the whole object rejected.
func checkNested(t *testing.T, b []byte) {
	t.Helper()
	for _, nest := range []string{"message", "a", "k"} {
		var want []string
		innerBad := false
		wantOK := EachMember(b, func(k, v []byte) {
			if string(k) == nest && len(v) > 0 && v[0] == '{' {
				if !EachMember(v, func(k2, v2 []byte) { want = append(want, "inner "+string(k2)+"="+string(v2)) }) {
					innerBad = true
				}
			}
			want = append(want, string(k)+"="+string(v))
		})
		wantOK = wantOK && !innerBad
		var got []string
		gotOK := EachMemberNested(b, nest, func(k, v []byte) {
			got = append(got, string(k)+"="+string(v))
		}, func(k, v []byte) {
			got = append(got, "inner "+string(k)+"="+string(v))
		})
		if gotOK != wantOK || (wantOK && !slices.Equal(got, want)) {
			t.Fatalf("%q nested in %q: %v %q, want %v %q", b, nest, gotOK, got, wantOK, want)
		}
	}
}

func TestEachMemberNested(t *testing.T) {
	for _, s := range []string{
		`{}`, `{"message":{"role":"user","content":"hi"},"id":"x"}`,
		`{"message":{"a":1},"message":null}`, `{"message":null,"message":{"a":{"b":[1]}}}`,
		`{"message":{"a":1,}}`, `{"message":{"a":1}`, `{"message":{"a":1}} x`, ` {"message" : { "k\u0065y" : "v" } } `,
		`{"m\u0065ssage":{"a":"b"}}`, `{"message":{}}`, `{"message":[{"a":1}]}`, `{"a":{"a":{"a":1}}}`,
		`{"message":{"\0":0}}`, `{"message":{"\0":0}`,
	} {
		checkNested(t, []byte(s))
	}
	for _, l := range fixtureLines(t) {
		checkNested(t, l)
	}
}

// TestplainPrefix checks the word-at-a-time scan against a byte loop: every
// byte value at every position of strings of 0 to 24 bytes, past a run of
// plain bytes or after other flagged bytes.
func TestPlainPrefix(t *testing.T) {
	ref := func(s []byte) int {
		for i, c := range s {
			if c < 0x20 || c >= 0x80 || c == '"' || c == '\\' {
				return i
			}
		}
		return len(s)
	}
	for n := 0; n <= 24; n++ {
		for pos := 0; pos < max(n, 1); pos++ {
			for c := 0; c < 256; c++ {
				s := []byte(strings.Repeat("a", n))
				if pos < n {
					s[pos] = byte(c)
					if pos+1 < n {
						s[pos+1] = '"' // a second flagged byte after the first
					}
				}
				if got, want := plainPrefix(s), ref(s); got != want {
					t.Fatalf("%q: plainPrefix %d, want %d", s, got, want)
				}
			}
		}
	}
}

// TestStringValueEscapes checks the decoding of strings with escapes (the
// vector-scan path for valid UTF-8, the byte path for the rest) against
// encoding/json, and that broken escapes are refused.
func TestStringValueEscapes(t *testing.T) {
	for _, in := range []string{
		`"plain"`, `"a\nb"`, `"\n"`, `"a\\"`, `"\\\\\\\""`, `"\/x\/"`, `"\b\f\r\t"`,
		`"\u00e9t\u00C9"`, `"\ud83d\ude00!"`, `"\ud83d"`, `"\ud83dx"`, `"\ude00\ud83d"`,
		`"\ud83d\u0041"`, `"é\n€"`, "\"\xff\\n\"", "\"a\xc3\\n\"", `"x\u0000y"`,
		`"` + strings.Repeat(`line of text\n`, 300) + `"`,
	} {
		got, ok := StringValue([]byte(in))
		var want string
		if err := json.Unmarshal([]byte(in), &want); err != nil {
			t.Fatalf("%q: encoding/json: %v", in, err)
		}
		if !ok || got != want {
			t.Errorf("StringValue(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
	for _, in := range []string{`"abc\"`, `"\x"`, `"\u12"`, `"\u12g4"`, `"a\`, `"\`} {
		if s, ok := StringValue([]byte(in + `"`)); ok && !json.Valid([]byte(in+`"`)) {
			t.Errorf("StringValue(%q) = %q, accepted", in+`"`, s)
		}
	}
}

func TestObjectShaped(t *testing.T) {
	for in, want := range map[string][2]bool{
		`{}`: {true, false}, " \t{\"a\":1}\r": {true, false}, "": {false, true}, " \r\t": {false, true},
		`{"a":1`: {false, false}, `[]`: {false, false}, `x{}`: {false, false}, `}{`: {false, false},
	} {
		if ok, blank := ObjectShaped([]byte(in)); ok != want[0] || blank != want[1] {
			t.Errorf("ObjectShaped(%q) = %v, %v", in, ok, blank)
		}
	}
}

func TestHasControl(t *testing.T) {
	for n := range 20 {
		for pos := range n {
			for c := range 256 {
				b := bytes.Repeat([]byte{'a'}, n)
				b[pos] = byte(c)
				if pos > 0 {
					b[pos-1] = 0xff // high bytes around never count
				}
				if got, want := HasControl(b), c < 0x20; got != want {
					t.Fatalf("HasControl(%q) = %v", b, got)
				}
			}
		}
	}
}

func FuzzStrictString(f *testing.F) {
	for _, s := range []string{`"plain"`, `"a\"b\\c\/d\b\f\n\r\t"`, `"\u00e9\ud83d\ude80"`, `"\ud83d"`, `"\ud83dx"`, `"\ud83d\u0041"`, `"\xff\xfe"`, `"caf\u00e9 日本"`, `"\'"`, "\"a\x01\"", `"\u12"`, `"\ud800\udc00\udfff"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if len(bytes.TrimSpace(raw)) != len(raw) {
			return // located values come without surrounding space
		}
		got, ok := StrictString(raw)
		var want string
		err := json.Unmarshal(raw, &want)
		if (err == nil) != ok {
			t.Fatalf("%q: StrictString ok=%v, json err=%v", raw, ok, err)
		}
		if ok && got != want {
			t.Fatalf("%q: StrictString %q, json %q", raw, got, want)
		}
	})
}
