package policy

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"hist/lib/store/storetest"
)

func TestParseEnv(t *testing.T) {
	cases := map[string][2]bool{ // value -> {on, forced}
		"1": {true, true}, "true": {true, true}, "on": {true, true}, " TRUE ": {true, true}, "\tOn\n": {true, true}, "oN": {true, true},
		"0": {false, true}, "false": {false, true}, "off": {false, true}, " Off ": {false, true}, "FALSE": {false, true},
		"": {false, false}, " ": {false, false}, "yes": {false, false}, "no": {false, false}, "2": {false, false},
		"enabled": {false, false}, "o n": {false, false}, "10": {false, false}, "truee": {false, false},
	}
	for v, want := range cases {
		on, forced := ParseEnv(v)
		if on != want[0] || forced != want[1] {
			t.Errorf("ParseEnv(%q) = %v, %v; want %v, %v", v, on, forced, want[0], want[1])
		}
	}
}

func writePref(t *testing.T, home, data string) string {
	t.Helper()
	p := PrefPath(home)
	os.MkdirAll(home, 0o700)
	if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestRead(t *testing.T) {
	home := t.TempDir()
	if pol, err := Read(PrefPath(home)); pol != "" || err != nil {
		t.Errorf("no file: %q, %v", pol, err)
	}
	good := map[string]string{
		`{"schema":"gentle-pi.history-capture/v1","policy":"on"}`:                        "on",
		`{"schema":"gentle-pi.history-capture/v1","policy":"off"}`:                       "off",
		" \n{ \"policy\" : \"on\" , \"schema\" : \"gentle-pi.history-capture/v1\" }\n\n": "on",
		`{"schema":"gentle-pi.history-\u0063apture/v1","policy":"o\u006e"}`:              "on",
	}
	for data, want := range good {
		writePref(t, home, data)
		if pol, err := Read(PrefPath(home)); pol != want || err != nil {
			t.Errorf("Read(%s) = %q, %v; want %q", data, pol, err, want)
		}
	}
	bad := []string{
		"", "on", "null", "[]", `"on"`, "{}",
		`{"schema":"gentle-pi.history-capture/v1"}`,
		`{"policy":"on"}`,
		`{"schema":"gentle-pi.history-capture/v2","policy":"on"}`,
		`{"schema":"gentle-pi.history-capture/v1","policy":"ON"}`,
		`{"schema":"gentle-pi.history-capture/v1","policy":true}`,
		`{"schema":"gentle-pi.history-capture/v1","policy":null}`,
		`{"schema":"gentle-pi.history-capture/v1","policy":"on","x":1}`,
		`{"Schema":"gentle-pi.history-capture/v1","policy":"on"}`,
		`{"schema":"gentle-pi.history-capture/v1","policy":"off","policy":"on"}`,
		`{"schema":"gentle-pi.history-capture/v1","policy":"on"}}`,
		`{"schema":"gentle-pi.history-capture/v1","policy":"on"}]`,
		`{"schema":"gentle-pi.history-capture/v1","policy":"on"} {}`,
		`{"schema":"gentle-pi.history-capture/v1","policy":"on"} x`,
		`{"schema":"gentle-pi.history-capture/v1","policy":"on"`,
		`{"schema":"gentle-pi.history-capture/v1",,"policy":"on"}`,
		"\ufeff" + `{"schema":"gentle-pi.history-capture/v1","policy":"on"}`,
	}
	for _, data := range bad {
		writePref(t, home, data)
		if pol, err := Read(PrefPath(home)); pol != "" || err == nil || !strings.HasPrefix(err.Error(), "malformed") {
			t.Errorf("Read(%s) = %q, %v; want malformed", data, pol, err)
		}
	}
	// Unreadable: a folder in its place, a FIFO (refused, not read).
	dir := t.TempDir()
	os.Mkdir(PrefPath(dir), 0o700)
	if _, err := Read(PrefPath(dir)); err == nil || !strings.HasPrefix(err.Error(), "unreadable") {
		t.Errorf("a folder: %v", err)
	}
	fifo := t.TempDir()
	if storetest.Mkfifo(PrefPath(fifo)) == nil {
		if _, err := Read(PrefPath(fifo)); err == nil {
			t.Error("a FIFO was read")
		}
	}
}

func env(vals map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := vals[k]; return v, ok }
}

// TestEffective is README's "Capture is opt-in" table.
func TestEffective(t *testing.T) {
	on := `{"schema":"gentle-pi.history-capture/v1","policy":"on"}`
	off := `{"schema":"gentle-pi.history-capture/v1","policy":"off"}`
	bad := `{"policy":"on"}`
	type row struct {
		env    *string
		pref   string // "" none
		on     bool
		source Source
	}
	s := func(v string) *string { return &v }
	rows := []row{
		{s("1"), off, true, FromEnv}, {s("true"), "", true, FromEnv}, {s(" ON "), bad, true, FromEnv},
		{s("0"), on, false, FromEnv}, {s("false"), "", false, FromEnv}, {s("Off"), bad, false, FromEnv},
		{nil, on, true, FromPreference}, {s(""), on, true, FromPreference}, {s("yes"), on, true, FromPreference},
		{nil, off, false, FromPreference}, {s("maybe"), off, false, FromPreference},
		{nil, "", false, NoPreference}, {s("x"), "", false, NoPreference},
		{nil, bad, false, InvalidPreference}, {s(""), bad, false, InvalidPreference},
	}
	for i, r := range rows {
		home := filepath.Join(t.TempDir(), "cfg")
		if r.pref != "" {
			writePref(t, home, r.pref)
		}
		vals := map[string]string{}
		if r.env != nil {
			vals[EnvVar] = *r.env
		}
		st := Effective(env(vals), home)
		if st.On != r.on || st.Source != r.source || st.PrefPath != PrefPath(home) {
			t.Errorf("row %d (env %v, pref %q): got on=%v source=%v", i, r.env, r.pref, st.On, st.Source)
		}
		if (st.Source == InvalidPreference) != (st.PrefErr != nil && r.source == InvalidPreference) {
			t.Errorf("row %d: PrefErr %v", i, st.PrefErr)
		}
		if d := st.Describe(); d == "" {
			t.Errorf("row %d: empty Describe", i)
		}
		hint := st.OffHint()
		switch st.Source {
		case FromEnv:
			if !strings.Contains(hint, EnvVar) || !strings.Contains(st.Describe(), EnvVar) {
				t.Errorf("row %d: hint %q does not name the variable", i, hint)
			}
		case InvalidPreference:
			if !strings.Contains(hint, PrefPath(home)) || strings.Contains(hint, "--enable") {
				t.Errorf("row %d: hint %q does not name the file", i, hint)
			}
		default:
			if !strings.Contains(hint, "hist-capture --enable") {
				t.Errorf("row %d: hint %q does not name --enable", i, hint)
			}
		}
	}
}

func TestSave(t *testing.T) {
	home := filepath.Join(t.TempDir(), "a", "cfg")
	if err := Save(home, true); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(PrefPath(home))
	if string(data) != `{"schema":"gentle-pi.history-capture/v1","policy":"on"}`+"\n" {
		t.Errorf("saved %q", data)
	}
	for p, mode := range map[string]os.FileMode{home: 0o700, PrefPath(home): 0o600} {
		if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != mode {
			t.Errorf("%s: %v, %v", p, fi.Mode(), err)
		}
	}
	if err := Save(home, false); err != nil {
		t.Fatal(err)
	}
	if pol, _ := Read(PrefPath(home)); pol != "off" {
		t.Errorf("after Save(false): %q", pol)
	}
	ents, _ := os.ReadDir(home)
	if len(ents) != 1 {
		t.Errorf("temp files left: %v", ents)
	}
	// A malformed file is never rewritten.
	p := writePref(t, home, `{"policy":"on"}`)
	err := Save(home, true)
	if !errors.Is(err, ErrInvalidPreference) || !strings.Contains(err.Error(), p) {
		t.Errorf("Save over a malformed file: %v", err)
	}
	if data, _ := os.ReadFile(p); string(data) != `{"policy":"on"}` {
		t.Errorf("malformed file rewritten: %q", data)
	}
}
