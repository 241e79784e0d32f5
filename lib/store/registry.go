package store

import (
	"bytes"
	"encoding/json"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"strings"

	"hist/lib/atomicfile"
)

// Registry is an advisory map of project hash -> cwd, used for display
// labels. Each machine writes its own file (registry@<machine>.json);
// readers take the union of registry.json and every machine's file. A
// garbage or unreadable file is read as empty and rebuilt by the next
// capture of its machine.
type Registry map[string]string

// registryFiles lists the root's registry files: registry.json, every
// machine's, and Syncthing's conflict copies of them, this machine's own
// file last.
func (s Store) registryFiles() (others []string, own string, ownCopies []string) {
	own = s.Registry()
	ents, _ := os.ReadDir(s.Root)
	for _, e := range ents {
		name := e.Name()
		orig, conflict := Unconflicted(name)
		if orig != RegistryName && !(strings.HasPrefix(orig, "registry@") && strings.HasSuffix(orig, ".json")) {
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

// maxRegistry bounds what is read of one registry file: 4 MiB names some
// 30,000 projects. A larger one is not a file hist wrote: it is skipped,
// and said once.
const maxRegistry = 4 << 20

func readRegistry(path string, into Registry) {
	data, err := atomicfile.ReadLimited(path, maxRegistry)
	if errors.Is(err, atomicfile.ErrTooLarge) {
		Warn(path, "%s is over 4 MiB, more than hist writes: skipped (the projects it names are shown by their hash)", path)
	}
	if err != nil {
		return
	}
	var r Registry
	if json.Unmarshal(data, &r) != nil {
		return
	}
	maps.Copy(into, r)
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

// says reports whether r maps every hash of entries to its cwd.
func says(r Registry, entries map[string]string) bool {
	for hash, cwd := range entries {
		if r[hash] != cwd {
			return false
		}
	}
	return true
}

// HasProject reports whether the store holds a folder for the project
// hash (its prompts may outlive the project's own folder).
func (s Store) HasProject(hash string) bool {
	_, err := os.Lstat(s.ProjectDir(hash))
	return err == nil
}

// Register records hash -> cwd unless this machine's registry file
// already says so: the usual call reads that one small file and writes
// nothing. Other machines' files are never read here, so a capture's cost
// does not depend on what a peer wrote; each machine's file names the
// projects it captured in.
func (s Store) Register(hash, cwd string) error {
	return s.RegisterAll(map[string]string{hash: cwd})
}

// RegisterAll records every hash -> cwd of entries with one write of this
// machine's registry file (none when it, or a Syncthing conflict copy of
// it, says all of them already), for commands that add many projects at once (hist-seed
// --all-projects). The write takes in the entries of the file's Syncthing
// conflict copies, which it then removes.
func (s Store) RegisterAll(entries map[string]string) error {
	_, own, copies := s.registryFiles()
	mine := Registry{}
	for _, p := range append(copies, own) {
		readRegistry(p, mine)
	}
	if says(mine, entries) {
		return nil
	}
	maps.Copy(mine, entries)
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(mine); err != nil {
		return err
	}
	if err := EnsureDir(s.Root); err != nil {
		return err
	}
	if err := atomicfile.WriteBytes(own, buf.Bytes()); err != nil {
		return err
	}
	for _, p := range copies {
		os.Remove(p)
	}
	return nil
}
