package install

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/tailscale/hujson"
)

// The agents' settings files are edited as the bytes they are: hujson
// parses them (JSON, JSONC's comments and trailing commas) into a tree
// that keeps every value's offset, and each edit is one splice of those
// bytes. Every other byte stays: comments, key order, indentation, values
// that are not valid UTF-8 or hold lone surrogates.

// maxDepth bounds a settings file's nesting (hujson's parser recurses);
// the agents' own files nest six levels deep.
const maxDepth = 200

// refused says why a file is left alone (hist-capture exits 4), as the
// end of a sentence that starts with the file's path.
type refused struct{ msg string }

func (e *refused) Error() string { return e.msg }

func refuse(format string, args ...any) error {
	return &refused{fmt.Sprintf(format, args...) + ": fix or move it, then run again"}
}

// doc is a settings file parsed; the offsets of root's values index data.
type doc struct {
	data []byte
	root hujson.Value
}

// parseDoc parses data, refusing what an agent would not read as one
// object, or would read otherwise than hist (a key given twice).
func parseDoc(data []byte) (*doc, error) {
	if line := tooDeep(data); line > 0 {
		return nil, refuse("nests objects and arrays more than %d levels deep (line %d)", maxDepth, line)
	}
	v, err := hujson.Parse(data)
	if err != nil {
		return nil, refuse("is not valid JSON (%s)", strings.TrimPrefix(err.Error(), "hujson: "))
	}
	if _, ok := v.Value.(*hujson.Object); !ok {
		return nil, refuse("is not a JSON object")
	}
	d := &doc{data: data, root: v}
	return d, d.duplicates(&d.root)
}

// tooDeep is the line where data's objects and arrays nest more than
// maxDepth levels deep, or 0; strings and comments are skipped.
func tooDeep(data []byte) int {
	depth := 0
	for i := 0; i < len(data); i++ {
		switch c := data[i]; {
		case c == '"':
			for i++; i < len(data) && data[i] != '"'; i++ {
				if data[i] == '\\' {
					i++
				}
			}
		case c == '/' && i+1 < len(data) && (data[i+1] == '/' || data[i+1] == '*'):
			term := map[byte]string{'/': "\n", '*': "*/"}[data[i+1]]
			end := bytes.Index(data[i+2:], []byte(term))
			if end < 0 {
				return 0 // the end of the file, or the parser says where it is not JSON
			}
			i += 2 + end + len(term) - 1
		case c == '{' || c == '[':
			if depth++; depth > maxDepth {
				return lineAt(data, i)
			}
		case c == '}' || c == ']':
			depth--
		}
	}
	return 0
}

func lineAt(data []byte, off int) int { return 1 + bytes.Count(data[:off], []byte("\n")) }

// duplicates refuses an object that names a key twice: agents read one of
// the two, and an edit of the other would be lost on them.
func (d *doc) duplicates(v *hujson.Value) error {
	seen := map[string]int{}
	_, obj := v.Value.(*hujson.Object)
	for _, c := range children(v) {
		if first, ok := seen[c.name]; ok && obj {
			return &refused{fmt.Sprintf("has the key %s twice (lines %d and %d): an agent reads only one of them; keep one, then run again",
				jsonString(c.name), lineAt(d.data, first), lineAt(d.data, c.start))}
		}
		seen[c.name] = c.start
		if err := d.duplicates(c.value); err != nil {
			return err
		}
	}
	return nil
}

// child is a member of an object or an element of an array: start is
// where it begins (after the white space and comments before it), end
// the byte after its value; after is what stands between its value and
// the comma that follows (nil when no comma follows the last).
type child struct {
	name          string // a member's name
	value         *hujson.Value
	start, end    int
	before, after hujson.Extra
}

// children lists c's members or elements (none when c is nil).
func children(c *hujson.Value) (out []child) {
	if c == nil {
		return nil
	}
	switch t := c.Value.(type) {
	case *hujson.Object:
		for i := range t.Members {
			m := &t.Members[i]
			out = append(out, child{m.Name.Value.(hujson.Literal).String(), &m.Value, m.Name.StartOffset, m.Value.EndOffset, m.Name.BeforeExtra, m.Value.AfterExtra})
		}
	case *hujson.Array:
		for i := range t.Elements {
			e := &t.Elements[i]
			out = append(out, child{"", e, e.StartOffset, e.EndOffset, e.BeforeExtra, e.AfterExtra})
		}
	}
	return out
}

// arrayOf is v when it is an array, else nil.
func arrayOf(v *hujson.Value) *hujson.Value {
	if v != nil {
		if _, ok := v.Value.(*hujson.Array); ok {
			return v
		}
	}
	return nil
}

// hooksDoc is a settings file parsed, with root → "hooks" → an event's
// array (nil when missing), and the hook commands in it.
type hooksDoc struct {
	*doc
	hooks, arr *hujson.Value
	refs       []hookRef
}

// parseHooks parses data for the hooks of event, refusing a file laid out
// otherwise than the agent reads it.
func parseHooks(data []byte, event string) (*hooksDoc, error) {
	d, err := parseDoc(data)
	if err != nil {
		return nil, err
	}
	h := &hooksDoc{doc: d, hooks: d.root.Find("/hooks")}
	if h.hooks == nil {
		return h, nil
	}
	if _, ok := h.hooks.Value.(*hujson.Object); !ok {
		return nil, refuse(`has a "hooks" that is not an object`)
	}
	if h.arr = h.hooks.Find("/" + event); h.arr != nil && arrayOf(h.arr) == nil {
		return nil, refuse(`has a "hooks" → %s that is not an array`, jsonString(event))
	}
	h.refs = refs(h.arr)
	return h, nil
}

// own is the first of hist's own hooks, or nil.
func (h *hooksDoc) own() *hookRef {
	for i := range h.refs {
		if h.refs[i].own {
			return &h.refs[i]
		}
	}
	return nil
}

// theirs lists the user's own hooks that run hist-capture: reported, never changed.
func (h *hooksDoc) theirs() []string {
	var out []string
	for _, r := range h.refs {
		if !r.own && strings.Contains(r.command, "hist-capture") {
			out = append(out, r.command)
		}
	}
	return out
}

// hookRef is one hook command found under an event: in an entry itself
// (Cursor's {"command"}) or in its "hooks" list (Claude Code's and
// Codex's {"hooks": [{"type": "command", "command"}]}).
type hookRef struct {
	command string
	lit     *hujson.Value // the command's string
	entry   int           // its entry in the event's array
	inner   int           // its place in the entry's "hooks" list; -1 in the entry itself
	own     bool          // a command --install writes (ownCommand)
	bin     string        // the binary it names, for the own ones
}

// refs lists the hook commands of the event array arr.
func refs(arr *hujson.Value) []hookRef {
	var out []hookRef
	add := func(v *hujson.Value, entry, inner int) {
		if lit := v.Find("/command"); lit != nil {
			if s, ok := lit.Value.(hujson.Literal); ok && s.Kind() == '"' {
				bin, own := ownCommand(s.String())
				out = append(out, hookRef{s.String(), lit, entry, inner, own, bin})
			}
		}
	}
	for i, en := range children(arr) {
		add(en.value, i, -1)
		for j, h := range children(arrayOf(en.value.Find("/hooks"))) {
			add(h.value, i, j)
		}
	}
	return out
}

// splice is data with [start, end) replaced by text.
func splice(data []byte, start, end int, text string) []byte {
	return slices.Concat(data[:start], []byte(text), data[end:])
}

// indentOf is the white space that starts the line holding offset off,
// and whether only that white space stands before off on its line.
func indentOf(data []byte, off int) (string, bool) {
	i := off
	for i > 0 && (data[i-1] == ' ' || data[i-1] == '\t') {
		i--
	}
	j := bytes.LastIndexByte(data[:i], '\n') + 1
	k := j
	for k < len(data) && (data[k] == ' ' || data[k] == '\t') {
		k++
	}
	return string(data[j:k]), i == 0 || data[i-1] == '\n'
}

// render is v as JSON text on lines indented by indent, in steps of unit
// (on one line when unit is ""), with <, > and & as they are.
func render(v any, indent, unit string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if unit != "" {
		enc.SetIndent(indent, unit)
	}
	enc.Encode(v) // hist's own values always encode
	return strings.TrimSuffix(b.String(), "\n")
}

func jsonString(s string) string { return render(s, "", "") }

// insert is d's bytes with one more member name: v (an element v when
// name is "") at the end of container c, laid out like its last sibling;
// in an empty container, on a line of its own one step (the indentation
// of the root's first member) deeper than the container's line.
func (d *doc) insert(c *hujson.Value, name string, v any) []byte {
	nl := "\n"
	if bytes.Contains(d.data, []byte("\r\n")) {
		nl = "\r\n"
	}
	item := func(indent, unit string) string {
		s := render(v, indent, unit)
		if name != "" {
			s = jsonString(name) + ": " + s
		}
		return strings.ReplaceAll(s, "\n", nl)
	}
	unit := "  "
	if kids := children(&d.root); len(kids) > 0 {
		if ind, first := indentOf(d.data, kids[0].start); first {
			unit = ind
		} else {
			unit = ""
		}
	}
	kids := children(c)
	if len(kids) == 0 {
		open := c.StartOffset + 1
		if unit == "" {
			return splice(d.data, open, open, item("", ""))
		}
		ind, _ := indentOf(d.data, c.StartOffset)
		closing := ""
		if !bytes.Contains(d.data[open:c.EndOffset-1], []byte("\n")) {
			closing = nl + ind
		}
		return splice(d.data, open, open, nl+ind+unit+item(ind+unit, unit)+closing)
	}
	last := kids[len(kids)-1]
	ind, first := indentOf(d.data, last.start)
	before := nl + ind
	if !first {
		before, ind, unit = "", "", ""
		if len(bytes.Trim(last.before, " \t")) == 0 {
			before = string(last.before)
		}
	}
	if last.after != nil { // a trailing comma: the new one goes after it, and keeps one
		pos := last.end + len(last.after) + 1
		return splice(d.data, pos, pos, before+item(ind, unit)+",")
	}
	return splice(d.data, last.end, last.end, ","+before+item(ind, unit))
}

// cut is d's bytes without child i of container c and the comma that went with it.
func (d *doc) cut(c *hujson.Value, i int) []byte {
	kids := children(c)
	k := kids[i]
	switch {
	case i > 0: // from the comma after the previous one through its value
		p := kids[i-1]
		return splice(d.data, p.end+len(p.after), k.end, "")
	case len(kids) > 1: // through the comma, up to the next one
		n := kids[1]
		return splice(d.data, k.start-len(k.before), n.start-len(n.before), "")
	}
	end := k.end
	if k.after != nil {
		end += len(k.after) + 1
	}
	return splice(d.data, k.start-len(k.before), end, "")
}

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

// addHook is old (nil: no file) with hist's hook, running cmd, under h.event.
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
// file, that is given back; otherwise each of hist's hooks is cut out,
// with its entry, array and "hooks" when they are left empty.
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

// removeRef is d's bytes without the hook r, cut with the smallest of
// the hook, its entry, the event's array and "hooks" that leaves
// something else in its container.
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
