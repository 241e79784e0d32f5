package tombstone

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"unicode"
	"unicode/utf8"

	"hist/lib/identity"
	"hist/lib/store"
	"hist/lib/store/storetest"
)

func write(t *testing.T, data string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "hidden.json")
	if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLoadMissing(t *testing.T) {
	s, err := Load(filepath.Join(t.TempDir(), "hidden.json"))
	if err != nil || s.Exists || !s.Empty() || s.Hidden("x") {
		t.Fatalf("missing file: %+v, %v", s, err)
	}
}

func TestLoadUntrusted(t *testing.T) {
	for _, data := range []string{"", " ", "null", "{}", `"x"`, "[", `["a",`, `[1]`, `["a",null]`, `[["a"]]`,
		`["a"] ["b"]`, `["a"]x`, `{"a":1}`, "\xef\xbb\xbf[]", `[true]`} {
		p := write(t, data)
		s, err := Load(p)
		var u *UntrustedError
		if !errors.As(err, &u) || s != nil {
			t.Errorf("Load(%q) = %v, %v; want *UntrustedError", data, s, err)
			continue
		}
		if u.Path != p || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), "restore the file or delete it yourself") {
			t.Errorf("message does not name the file and the recovery: %v", err)
		}
	}
	// Unreadable: a folder in its place.
	dir := filepath.Join(t.TempDir(), "hidden.json")
	os.Mkdir(dir, 0o700)
	if _, err := Load(dir); !errors.As(err, new(*UntrustedError)) || !errors.Is(err, syscall.EISDIR) {
		t.Errorf("a folder: %v", err)
	}
	// A FIFO is refused, not read (which would block).
	fifo := filepath.Join(t.TempDir(), "hidden.json")
	if err := storetest.Mkfifo(fifo); err == nil {
		if _, err := Load(fifo); !errors.As(err, new(*UntrustedError)) {
			t.Errorf("a FIFO: %v", err)
		}
	}
}

func TestLoadValid(t *testing.T) {
	s, err := Load(write(t, "\n [ \"a\" , \"sha256:"+strings.Repeat("0", 64)+"\", \"\\u00e9\" ]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if !s.Exists || len(s.Entries) != 3 || s.Entries[2] != "é" {
		t.Errorf("entries %q", s.Entries)
	}
	s, err = Load(write(t, "[]"))
	if err != nil || !s.Empty() || !s.Exists {
		t.Errorf("[]: %+v, %v", s, err)
	}
}

func set(t *testing.T, entries ...string) *Set {
	t.Helper()
	data, _ := json.Marshal(entries)
	s, err := Load(write(t, string(data)))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestHiddenKeys(t *testing.T) {
	key := identity.Key("Deploy to prod")
	s := set(t, key, strings.ToUpper(key[:7])+"x", "sha256:"+strings.ToUpper(identity.Key("upper hex")[7:]), "sha256:short")
	for _, p := range []string{"deploy to prod", "  DEPLOY  to\nprod ", "Upper  HEX", "sha256:short", "SHA256:SHORT"} {
		if !s.Hidden(p) {
			t.Errorf("%q should be hidden", p)
		}
	}
	for _, p := range []string{"deploy to prod!", "deploy", "upper hex x", "sha256:shorter"} {
		if s.Hidden(p) {
			t.Errorf("%q should not be hidden", p)
		}
	}
}

func TestHiddenLegacy(t *testing.T) {
	long := strings.Repeat("abcdefghij", 15) // 150 characters
	cut := long[:120]
	spaced := strings.Repeat("word ", 24) // 120 characters ending in a space
	emoji := strings.Repeat("🙂", 60)      // 60 runes, 120 UTF-16 code units
	s := set(t,
		"Short Secret",                    // exact
		cut,                               // prefix
		spaced,                            // prefix cut after a space
		emoji,                             // prefix by UTF-16 count
		strings.Repeat("é", 119)+"\uFFFD", // cut inside a surrogate pair
		strings.Repeat(" ", 130),          // blank: hides nothing
	)
	hidden := []string{
		"short secret", "  SHORT   secret\n",
		cut, long, cut + " and more", strings.ToUpper(long),
		spaced + "and more", strings.TrimSpace(spaced) + "   and more",
		emoji, emoji + " more",
		strings.Repeat("é", 119) + "x",
	}
	for _, p := range hidden {
		if !s.Hidden(p) {
			t.Errorf("%.40q... should be hidden", p)
		}
	}
	visible := []string{
		"short secret and more", "a short secret", "short",
		cut[:119], cut[:119] + "X", "x" + cut,
		strings.TrimSpace(spaced), // the prompt stopped where the cut is: not one that went on
		strings.Repeat("🙂", 59),
		strings.Repeat("é", 118),
		"anything at all",
	}
	for _, p := range visible {
		if s.Hidden(p) {
			t.Errorf("%.40q... should not be hidden", p)
		}
	}
}

func TestHiddenLongerEntry(t *testing.T) {
	// Earlier builds never wrote more than 120 characters; a longer entry
	// is read as its first 120.
	long := strings.Repeat("0123456789", 20)
	s := set(t, long)
	if !s.Hidden(long[:120]+"different tail") || s.Hidden(long[:119]) {
		t.Error("a longer legacy entry is not its 120-character prefix")
	}
}

func TestIsPrefixEntry(t *testing.T) {
	cases := map[string]bool{
		strings.Repeat("a", 119):                false,
		strings.Repeat("a", 120):                true,
		strings.Repeat("é", 120):                true,
		strings.Repeat("🙂", 59) + "a":           false, // 60 runes, 119 code units
		strings.Repeat("🙂", 59) + "ab":          true,  // 61 runes, 120 code units
		strings.Repeat("a", 118) + "\U0001F600": true,
	}
	for e, want := range cases {
		if got := isPrefixEntry(e); got != want {
			t.Errorf("isPrefixEntry(%d runes) = %v", utf8.RuneCountInString(e), got)
		}
	}
}

func TestAddAndSave(t *testing.T) {
	p := filepath.Join(t.TempDir(), "hidden.json")
	s, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Save(); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(p); string(data) != "[]\n" {
		t.Errorf("empty set saved as %q", data)
	}
	s.Entries = []string{"legacy plain entry"}
	k1 := s.Add("first prompt")
	k2 := s.Add("Second  prompt")
	if k1 != identity.Key("first prompt") || !s.Hidden("FIRST PROMPT") || !s.Hidden("second prompt") || !s.Hidden("legacy plain entry") {
		t.Fatal("Add does not hide")
	}
	s.Add("  first PROMPT ") // moves to the end
	want := []string{"legacy plain entry", k2, k1}
	if strings.Join(s.Entries, ",") != strings.Join(want, ",") {
		t.Errorf("entries %q, want %q", s.Entries, want)
	}
	if err := s.Save(); err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(p)
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", fi.Mode())
	}
	ents, _ := os.ReadDir(filepath.Dir(p))
	if len(ents) != 2 || ents[1].Name() != "hidden.json.prev" {
		t.Errorf("not the file and its previous version: %v", ents)
	}
	if prev, _ := os.ReadFile(p + PrevSuffix); string(prev) != "[]\n" {
		t.Errorf("the previous version holds %q", prev)
	}
	back, err := Load(p)
	if err != nil || strings.Join(back.Entries, ",") != strings.Join(want, ",") {
		t.Errorf("reloaded %q, %v", back.Entries, err)
	}
}

func TestCap(t *testing.T) {
	s, _ := Load(filepath.Join(t.TempDir(), "hidden.json"))
	x := func(i int) string { return strings.Repeat("x", i) }
	for i := range Cap + 5 {
		s.Add(x(i + 1))
	}
	// Entries that still hide stored prompts are kept past the cap.
	if dropped := s.Trim(func(string) bool { return true }); len(dropped) != 0 || len(s.Entries) != Cap+5 {
		t.Fatalf("%d dropped, %d entries", len(dropped), len(s.Entries))
	}
	// The others older than the newest Cap go.
	dropped := s.Trim(func(e string) bool { return e == identity.Key(x(2)) })
	if len(dropped) != 4 || len(s.Entries) != Cap+1 {
		t.Fatalf("%d dropped, %d entries", len(dropped), len(s.Entries))
	}
	if s.Hidden(x(1)) || !s.Hidden(x(2)) || s.Hidden(x(5)) || !s.Hidden(x(6)) || !s.Hidden(x(Cap+5)) {
		t.Error("not the oldest entries dropped")
	}
	// Re-adding the oldest kept entry moves it to the end, so it survives the next drop.
	s.Add(x(2))
	s.Add("new")
	s.Trim(func(string) bool { return false })
	if !s.Hidden(x(2)) || s.Hidden(x(7)) || !s.Hidden(x(8)) || len(s.Entries) != Cap {
		t.Error("move-to-end does not protect an entry from the cap")
	}
}

// FuzzParse checks the hidden.json parser against encoding/json: a file is
// trusted exactly when it is a JSON array of strings, with the same
// entries.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"[]", `["a","sha256:00"]`, " [\"\\u00e9\"] ", "null", `[1]`, `["a",]`, `[] []`, `{"a":"b"}`, `[null]`, "\ufeff[]"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var got []string
		err := parse(data, &got)
		if !utf8.Valid(data) {
			return
		}
		var raw any
		jerr := json.Unmarshal(data, &raw)
		arr, isArr := raw.([]any)
		ok := jerr == nil && isArr
		var want []string
		for _, v := range arr {
			s, isStr := v.(string)
			if !isStr {
				ok = false
				break
			}
			want = append(want, s)
		}
		if ok != (err == nil) {
			t.Fatalf("parse(%q) error %v; encoding/json says array of strings = %v", data, err, ok)
		}
		if ok && strings.Join(got, "\x00") != strings.Join(want, "\x00") {
			t.Fatalf("parse(%q) = %q, want %q", data, got, want)
		}
		if ok {
			s := &Set{Entries: got}
			s.index() // never panics, whatever the entries
			for _, e := range got {
				_, isKey := parseKey(e)
				last, _ := utf8.DecodeLastRuneInString(e)
				if isKey || identity.IsBlank(e) || (isPrefixEntry(e) && unicode.IsSpace(last)) {
					continue // a key hides its hash's prompt; a cut after a space hides longer prompts
				}
				if !s.Hidden(e) {
					t.Fatalf("entry %q does not hide itself", e)
				}
			}
		}
	})
}

// A file over maxRead is read from its end: its newest entries, found
// even when an entry's text ends with a comma; it is said once.
func TestBigFileReadFromItsEnd(t *testing.T) {
	var warned bytes.Buffer
	store.WarnTo = &warned
	defer func() { store.WarnTo = os.Stderr }()
	var entries []string
	for i := 0; len(entries)*40 < maxRead+maxRead/2; i++ {
		entries = append(entries, identity.Key(fmt.Sprint("prompt ", i)), fmt.Sprintf("legacy %d, ", i))
	}
	entries = append(entries, `a "quoted", one,`)
	data, _ := json.Marshal(entries)
	p := write(t, string(data))
	for range 2 {
		s, err := Load(p)
		if err != nil {
			t.Fatal(err)
		}
		last := len(entries)/2 - 1
		if !s.Hidden(fmt.Sprint("prompt ", last)) || !s.Hidden(fmt.Sprintf("legacy %d, ", last)) || !s.Hidden(`a "quoted", one,`) || s.Hidden("prompt 0") {
			t.Fatalf("%d entries read, from %q", len(s.Entries), s.Entries[0])
		}
		if s.Exists != true || s.raw != nil {
			t.Errorf("exists %v, raw kept", s.Exists)
		}
	}
	if n := strings.Count(warned.String(), "more than hist writes"); n != 1 {
		t.Errorf("warned %d times: %s", n, warned.String())
	}
	// Garbage at its end: untrusted.
	garbage := append(bytes.Repeat([]byte(" "), maxRead+10), "junk]"...)
	if _, err := Load(write(t, string(append([]byte("["), garbage...)))); !errors.As(err, new(*UntrustedError)) {
		t.Errorf("garbage trusted: %v", err)
	}
}
