package store

import (
	"bytes"
	"encoding/json"
	"os"

	"hist/lib/atomicfile"
)

// Registry is registry.json: an advisory map of project hash -> cwd, used
// for display labels. A garbage or unreadable registry is read as empty
// and rebuilt by the next capture.
type Registry map[string]string

// LoadRegistry reads registry.json; any problem yields an empty registry.
func (s Store) LoadRegistry() Registry {
	data, err := atomicfile.ReadRegular(s.Registry())
	if err != nil {
		return Registry{}
	}
	var r Registry
	if json.Unmarshal(data, &r) != nil || r == nil {
		return Registry{}
	}
	return r
}

// Label names a project in messages: its folder, from registry.json, or
// "project HASH" when registry.json does not know it.
func (r Registry) Label(hash string) string {
	if cwd := r[hash]; cwd != "" {
		return cwd
	}
	return "project " + hash
}

// HasProject reports whether the store holds a folder for the project
// hash (its prompts may outlive the project's own folder).
func (s Store) HasProject(hash string) bool {
	_, err := os.Lstat(s.ProjectDir(hash))
	return err == nil
}

// Register records hash -> cwd unless registry.json already says so; the
// usual call reads one small file and writes nothing.
func (s Store) Register(hash, cwd string) error {
	r := s.LoadRegistry()
	if r[hash] == cwd {
		return nil
	}
	r[hash] = cwd
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(r); err != nil {
		return err
	}
	if err := EnsureDir(s.Root); err != nil {
		return err
	}
	return atomicfile.WriteBytes(s.Registry(), buf.Bytes())
}

// RegisterAll records every hash -> cwd of entries with one write (none
// when registry.json already says all of them), for commands that add many
// projects at once (hist-seed --all-projects).
func (s Store) RegisterAll(entries map[string]string) error {
	r := s.LoadRegistry()
	changed := false
	for hash, cwd := range entries {
		if r[hash] != cwd {
			r[hash] = cwd
			changed = true
		}
	}
	if !changed {
		return nil
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(r); err != nil {
		return err
	}
	if err := EnsureDir(s.Root); err != nil {
		return err
	}
	return atomicfile.WriteBytes(s.Registry(), buf.Bytes())
}
