// Package policy decides whether capture is on (README.md, "Capture is
// opt-in"). The environment variable GENTLE_PI_HISTORY_CAPTURE forces a
// value when it is 1/true/on or 0/false/off (trimmed, case-insensitive);
// otherwise the saved preference decides; no preference means off; a
// preference file that is malformed or unreadable means off (fail closed),
// is reported, and is never rewritten.
package policy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"hist/lib/atomicfile"
)

const (
	EnvVar   = "GENTLE_PI_HISTORY_CAPTURE"    // forces capture on or off
	Schema   = "gentle-pi.history-capture/v1" // the preference file's schema
	FileName = "history-capture.json"         // the preference file, in the config home
)

// Source says what decided the effective state.
type Source int

const (
	FromEnv           Source = iota // the variable forces the value
	FromPreference                  // the saved preference
	NoPreference                    // no preference saved: off
	InvalidPreference               // the preference file is malformed or unreadable: off
)

// State is the effective capture policy.
type State struct {
	On       bool
	Source   Source
	EnvValue string // the variable's raw value, when it is set
	Pref     string // the saved preference: "on", "off", "" (none or invalid)
	PrefPath string // the preference file
	PrefErr  error  // why the preference file is invalid or unreadable
}

// ParseEnv reports what an environment value forces: on, off, or nothing.
func ParseEnv(v string) (on, forced bool) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "1", "true", "on":
		return true, true
	case "0", "false", "off":
		return false, true
	}
	return false, false
}

// PrefPath is the preference file for a config home.
func PrefPath(configHome string) string { return filepath.Join(configHome, FileName) }

// Read reads the preference file: "on", "off", "" when there is none, or
// an error when it is malformed or unreadable.
func Read(path string) (string, error) {
	data, err := atomicfile.ReadRegular(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("unreadable: %v", err)
	}
	return parse(data)
}

// parse checks the strict shape {"schema":Schema,"policy":"on"|"off"}: one
// JSON object, exactly those two keys (each once), nothing after it.
func parse(data []byte) (string, error) {
	notObject := errors.New("malformed: not a JSON object")
	shape := fmt.Errorf(`malformed: want exactly {"schema":%q,"policy":"on"|"off"}`, Schema)
	d := json.NewDecoder(bytes.NewReader(data))
	if tok, err := d.Token(); err != nil || tok != json.Delim('{') {
		return "", notObject
	}
	vals := map[string]json.RawMessage{}
	for d.More() {
		tok, err := d.Token()
		var raw json.RawMessage
		if err != nil || d.Decode(&raw) != nil {
			return "", notObject
		}
		key, _ := tok.(string)
		if key != "schema" && key != "policy" {
			return "", shape
		} else if vals[key] != nil {
			return "", fmt.Errorf("malformed: %q given twice", key)
		}
		vals[key] = raw
	}
	if tok, err := d.Token(); err != nil || tok != json.Delim('}') {
		return "", notObject
	}
	if _, err := d.Token(); err != io.EOF {
		return "", errors.New("malformed: trailing data")
	}
	if len(vals) < 2 {
		return "", shape
	}
	var sc, p string
	if json.Unmarshal(vals["schema"], &sc) != nil || sc != Schema {
		return "", fmt.Errorf("malformed: schema is not %q", Schema)
	}
	if json.Unmarshal(vals["policy"], &p) != nil || (p != "on" && p != "off") {
		return "", errors.New(`malformed: policy is not "on" or "off"`)
	}
	return p, nil
}

// Effective computes the state from the environment value (lookup) and the
// config home.
func Effective(getenv func(string) (string, bool), configHome string) State {
	st := State{PrefPath: PrefPath(configHome)}
	st.Pref, st.PrefErr = Read(st.PrefPath)
	if v, ok := getenv(EnvVar); ok {
		st.EnvValue = v
		if on, forced := ParseEnv(v); forced {
			st.On, st.Source = on, FromEnv
			return st
		}
	}
	switch {
	case st.PrefErr != nil:
		st.Source = InvalidPreference
	case st.Pref == "":
		st.Source = NoPreference
	default:
		st.On, st.Source = st.Pref == "on", FromPreference
	}
	return st
}

// Describe says in words what decided the state.
func (s State) Describe() string {
	switch s.Source {
	case FromEnv:
		return fmt.Sprintf("%s=%s forces it", EnvVar, strings.TrimSpace(s.EnvValue))
	case FromPreference:
		return "the saved preference in " + s.PrefPath
	case NoPreference:
		return "no preference saved (" + s.PrefPath + ")"
	default:
		return fmt.Sprintf("the preference in %s is invalid or unreadable (%v)", s.PrefPath, s.PrefErr)
	}
}

// OffHint is the one-line warning a reader prints when capture is off: it
// names the control that decides.
func (s State) OffHint() string {
	switch s.Source {
	case FromEnv:
		return fmt.Sprintf("prompt history is off: %s=%s forces it off; unset it or set it to 1", EnvVar, strings.TrimSpace(s.EnvValue))
	case InvalidPreference:
		return fmt.Sprintf("prompt history is off: the preference file %s is invalid or unreadable (%v): fix or remove it by hand", s.PrefPath, s.PrefErr)
	default:
		return "prompt history is off: turn capture on with 'hist-capture --enable' (or " + EnvVar + "=1 for one session)"
	}
}

// ErrInvalidPreference is returned by Save when the existing file is
// malformed: it is never rewritten.
var ErrInvalidPreference = errors.New("the preference file is invalid or unreadable")

// Save writes the preference atomically, refusing to replace a malformed
// or unreadable file.
func Save(configHome string, on bool) error {
	path := PrefPath(configHome)
	if _, err := Read(path); err != nil {
		return fmt.Errorf("%w: %s: %v", ErrInvalidPreference, path, err)
	}
	if err := os.MkdirAll(configHome, atomicfile.DirPerm); err != nil {
		return err
	}
	pol := map[bool]string{false: "off", true: "on"}[on]
	data := fmt.Appendf(nil, `{"schema":%q,"policy":%q}`+"\n", Schema, pol)
	sweepTemps(path)
	return atomicfile.WriteBytes(path, data)
}

// sweepTemps removes the temp files of path that killed saves left
// behind (their process is gone), and nothing else.
func sweepTemps(path string) {
	dir, base := filepath.Split(path)
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		name := e.Name()
		if e.Type().IsRegular() && strings.HasPrefix(name, "."+base+".tmp-") && atomicfile.Stale(name) {
			os.Remove(filepath.Join(dir, name))
		}
	}
}
