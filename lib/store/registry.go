package store

import (
	"encoding/json"
	"errors"
	"io"
	"maps"
	"os"
	"path/filepath"
	"strings"

	"hist/lib/atomicfile"
)

// Registry is an advisory map of project hash -> cwd, for labels. Each
// machine writes its own registry@<machine>.json; readers take the union
// of every machine's and registry.json. A garbage or unreadable file reads
// as empty, and its machine's next capture rebuilds it.
type Registry map[string]string

// registryFiles lists the root's registry files: this machine's own, the
// conflict copies of it, and the others (registry.json included).
func (s Store) registryFiles() (others []string, own string, ownCopies []string) {
	own = s.Registry()
	ents, _ := os.ReadDir(s.Root)
	for _, e := range ents {
		name := e.Name()
		orig, conflict := Unconflicted(name)
		if orig != RegistryName && !isRegistry(orig) {
			continue
		}
		path := filepath.Join(s.Root, name)
		switch {
		case path == own:
		case conflict && filepath.Join(s.Root, orig) == own:
			ownCopies = append(ownCopies, path)
		default:
			others = append(others, path)
		}
	}
	return others, own, ownCopies
}

// isRegistry reports whether name is a machine's registry file.
func isRegistry(name string) bool {
	return strings.HasPrefix(name, "registry@") && strings.HasSuffix(name, ".json")
}

// maxRegistry bounds a registry file: 4 MiB names some 30,000 projects;
// a larger one is not hist's, and is skipped with a warning.
const maxRegistry = 4 << 20

func readRegistry(path string, into Registry) {
	data, err := atomicfile.ReadLimited(path, maxRegistry)
	if errors.Is(err, atomicfile.ErrTooLarge) {
		Warn(path, "%s is over 4 MiB, more than hist writes: skipped (the projects it names are shown by their hash)", path)
	}
	var r Registry
	if err == nil && json.Unmarshal(data, &r) == nil {
		maps.Copy(into, r)
	}
}

// LoadRegistry reads every machine's registry file; any problem with one
// yields nothing from it.
func (s Store) LoadRegistry() Registry {
	others, own, copies := s.registryFiles()
	r := Registry{}
	for _, p := range append(append(others, copies...), own) {
		readRegistry(p, r)
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

// HasProject reports whether the store holds a folder for the project hash.
func (s Store) HasProject(hash string) bool {
	_, err := os.Lstat(s.ProjectDir(hash))
	return err == nil
}

// Register records hash -> cwd unless this machine's registry file
// already says so: the usual call reads that one small file and writes
// nothing. Other machines' files are not read, so a capture's cost does
// not depend on what a peer wrote.
func (s Store) Register(hash, cwd string) error { return s.RegisterAll(map[string]string{hash: cwd}) }

// RegisterAll records every hash -> cwd of entries with one write of this
// machine's registry file, none when it (or a conflict copy of it) says
// them all already. The write takes in the conflict copies' entries, and
// removes the copies.
func (s Store) RegisterAll(entries map[string]string) error {
	_, own, copies := s.registryFiles()
	mine := Registry{}
	for _, p := range append(copies, own) {
		readRegistry(p, mine)
	}
	says := true
	for hash, cwd := range entries {
		says = says && mine[hash] == cwd
	}
	if says {
		return nil
	}
	maps.Copy(mine, entries)
	if err := EnsureDir(s.Root); err != nil {
		return err
	}
	err := atomicfile.WriteFile(own, func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		return enc.Encode(mine)
	})
	if err != nil {
		return err
	}
	for _, p := range copies {
		os.Remove(p)
	}
	return nil
}
