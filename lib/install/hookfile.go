package install

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/tailscale/hujson"
)

// entry is hist's hook entry, running cmd, as in
// scripts/claude/settings.json and scripts/cursor/hooks.json.
func (h hooked) entry(cmd string) json.RawMessage {
	if h.cursor {
		return json.RawMessage(`{"command":` + jsonString(cmd) + `}`)
	}
	return json.RawMessage(`{"hooks":[{"type":"command","command":` + jsonString(cmd) + `,"timeout":10}]}`)
}

// fresh is the file --install creates where there was none.
func (h hooked) fresh(cmd string) []byte {
	version := ""
	if h.cursor {
		version = `"version":1,`
	}
	f := `{` + version + `"hooks":{` + jsonString(h.event) + `:[` + string(h.entry(cmd)) + `]}}`
	return []byte(render(json.RawMessage(f), "", "  ") + "\n")
}

// What an edit of a settings file did.
const (
	none    = iota // nothing to do: already installed, or not installed
	created        // a new file
	added          // the hook added to the file
	updated        // hist's hook made to run this binary
	removed        // hist's hooks taken out
	theirs         // only hooks of the user's that run hist-capture: left alone
)

type edit struct {
	kind   int
	data   []byte   // the new content
	gone   bool     // the file goes (it held what --install created, and nothing else)
	from   string   // the hist backup whose bytes data is (an exact undo)
	was    string   // the command hist's hook ran before (updated)
	theirs []string // the user's own hooks that run hist-capture
}

// addHook is old (nil: no file) with hist's hook, running cmd, under
// h.event.
func (h hooked) addHook(old []byte, cmd string) (edit, error) {
	if len(bytes.TrimSpace(old)) == 0 {
		return edit{kind: created, data: h.fresh(cmd)}, nil
	}
	d, err := parseHooks(old, h.event)
	if err != nil {
		return edit{}, err
	}
	if slices.ContainsFunc(d.refs, func(r hookRef) bool { return r.own && r.command == cmd }) {
		return edit{}, nil
	}
	if own := d.own(); own != nil {
		data := old
		for i := len(d.refs) - 1; i >= 0; i-- { // the last first: the offsets before it hold
			if r := d.refs[i]; r.own {
				data = splice(data, r.lit.StartOffset, r.lit.EndOffset, jsonString(cmd))
			}
		}
		return h.checked(edit{kind: updated, data: data, was: own.command}, cmd)
	}
	if mine := d.theirs(); len(mine) > 0 {
		return edit{kind: theirs, theirs: mine}, nil
	}
	var data []byte
	switch entry := h.entry(cmd); {
	case d.hooks == nil:
		data = d.insert(&d.root, "hooks", map[string][]any{h.event: {entry}})
	case d.arr == nil:
		data = d.insert(d.hooks, h.event, []any{entry})
	default:
		data = d.insert(d.arr, "", entry)
	}
	return h.checked(edit{kind: added, data: data}, cmd)
}

// checked makes sure an edit reads back as a file with hist's hook.
func (h hooked) checked(e edit, cmd string) (edit, error) {
	d, err := parseHooks(e.data, h.event)
	if err == nil && d.own() != nil && d.own().command == cmd {
		return e, nil
	}
	return edit{}, fmt.Errorf("editing it gave a file without the hook (%v): it was left as it was", err)
}

// backup is a copy --install or --uninstall kept of a settings file.
type backup struct {
	path string
	data []byte
}

// removeHook is old without hist's hooks under h.event. When old is
// exactly what --install made of one of backups (newest first), or of no
// file at all, that is given back, byte for byte; otherwise each of
// hist's hooks is cut out, with the entry, the event's array and "hooks"
// when nothing else is left in them (the file itself stays).
func (h hooked) removeHook(old []byte, backups []backup, linked bool) (edit, error) {
	if len(bytes.TrimSpace(old)) == 0 {
		return edit{}, nil
	}
	d, err := parseHooks(old, h.event)
	if err != nil {
		return edit{}, err
	}
	own, mine := d.own(), d.theirs()
	if own == nil {
		return edit{kind: theirs, theirs: mine}, nil
	}
	for _, b := range backups {
		if e, err := h.addHook(b.data, own.command); err == nil && (e.kind == added || e.kind == created) && bytes.Equal(e.data, old) {
			return edit{kind: removed, data: b.data, from: b.path, theirs: mine}, nil
		}
	}
	if bytes.Equal(old, h.fresh(own.command)) && !linked {
		return edit{kind: removed, gone: true, theirs: mine}, nil
	}
	for ; own != nil; own = d.own() {
		if d, err = parseHooks(d.removeRef(*own), h.event); err != nil {
			return edit{}, fmt.Errorf("editing it gave a file that does not read back (%v): it was left as it was", err)
		}
	}
	return edit{kind: removed, data: d.data, theirs: mine}, nil
}

// removeRef is d's bytes without the hook r: the hook from its entry's
// list, or the entry, or the event's array, or "hooks" itself, the
// smallest of them that keeps something else.
func (d *hooksDoc) removeRef(r hookRef) []byte {
	entries := children(d.arr)
	if list := entries[r.entry].value.Find("/hooks"); r.inner >= 0 && len(children(list)) > 1 {
		return d.cut(list, r.inner)
	}
	if len(entries) > 1 {
		return d.cut(d.arr, r.entry)
	}
	if len(children(d.hooks)) > 1 {
		return d.cut(d.hooks, indexOf(d.hooks, d.arr))
	}
	return d.cut(&d.root, indexOf(&d.root, d.hooks))
}

// indexOf is the place of v among c's children.
func indexOf(c, v *hujson.Value) int {
	return slices.IndexFunc(children(c), func(k child) bool { return k.value == v })
}
