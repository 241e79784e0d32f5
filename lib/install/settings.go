package install

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/tailscale/hujson"
)

// The agents' settings files (Claude Code's settings.json, Codex's and
// Cursor's hooks.json) are edited as the bytes they are: hujson parses
// them (JSON, and JSONC's comments and trailing commas) into a syntax tree
// that keeps the offset of every value, and each edit is one splice of
// those bytes: text inserted after the last member of an object or
// element of an array, a range cut out, a string replaced. Every byte
// outside the splice stays as it was: comments, key order, indentation,
// and values that are not valid UTF-8 or hold lone surrogates.

// maxDepth bounds how deeply objects and arrays may nest in a settings
// file that is edited; the agents' own files nest six levels deep.
const maxDepth = 200

// refused says why a file is left alone (hist-capture exits 4): what is
// wrong and what to do, as the end of a sentence that starts with the
// file's path.
type refused struct{ msg string }

func (e *refused) Error() string { return e.msg }

// doc is a settings file parsed; the offsets of root's values index data.
type doc struct {
	data []byte
	root hujson.Value
}

// parseDoc parses data, refusing what an agent would not read as one
// object, or would read differently than hist (a key given twice).
func parseDoc(data []byte) (*doc, error) {
	if line := tooDeep(data); line > 0 {
		return nil, &refused{fmt.Sprintf("nests objects and arrays more than %d levels deep (line %d): fix or move it, then run again", maxDepth, line)}
	}
	v, err := hujson.Parse(data)
	if err != nil {
		return nil, &refused{fmt.Sprintf("is not valid JSON (%s): fix or move it, then run again", strings.TrimPrefix(err.Error(), "hujson: "))}
	}
	if _, ok := v.Value.(*hujson.Object); !ok {
		return nil, &refused{"is not a JSON object: fix or move it, then run again"}
	}
	d := &doc{data: data, root: v}
	if err := d.duplicates(&d.root); err != nil {
		return nil, err
	}
	return d, nil
}

// tooDeep is the line where data's objects and arrays nest more than
// maxDepth levels deep, or 0 (strings and comments are skipped), so that
// the parser's recursion stays shallow.
func tooDeep(data []byte) int {
	depth := 0
	for i := 0; i < len(data); i++ {
		switch c := data[i]; c {
		case '"':
			for i++; i < len(data) && data[i] != '"'; i++ {
				if data[i] == '\\' {
					i++
				}
			}
		case '/':
			if i+1 < len(data) && data[i+1] == '/' {
				for i < len(data) && data[i] != '\n' {
					i++
				}
			} else if i+1 < len(data) && data[i+1] == '*' {
				end := bytes.Index(data[i+2:], []byte("*/"))
				if end < 0 {
					return 0 // the parser says where it is not JSON
				}
				i += end + 3
			}
		case '{', '[':
			if depth++; depth > maxDepth {
				return lineAt(data, i)
			}
		case '}', ']':
			depth--
		}
	}
	return 0
}

func lineAt(data []byte, off int) int {
	return 1 + bytes.Count(data[:min(off, len(data))], []byte("\n"))
}

// duplicates refuses an object that names a key twice: agents read one of
// the two, and an edit of the other would be lost on them.
func (d *doc) duplicates(v *hujson.Value) error {
	switch t := v.Value.(type) {
	case *hujson.Object:
		seen := map[string]int{}
		for i := range t.Members {
			m := &t.Members[i]
			k := m.Name.Value.(hujson.Literal).String()
			if first, ok := seen[k]; ok {
				return &refused{fmt.Sprintf("has the key %s twice (lines %d and %d): an agent reads only one of them; keep one, then run again",
					jsonString(k), first, lineAt(d.data, m.Name.StartOffset))}
			}
			seen[k] = lineAt(d.data, m.Name.StartOffset)
			if err := d.duplicates(&m.Value); err != nil {
				return err
			}
		}
	case *hujson.Array:
		for i := range t.Elements {
			if err := d.duplicates(&t.Elements[i]); err != nil {
				return err
			}
		}
	}
	return nil
}

// member is the value of obj's member key, or nil.
func member(v *hujson.Value, key string) *hujson.Value {
	obj, ok := v.Value.(*hujson.Object)
	if !ok {
		return nil
	}
	for i := range obj.Members {
		if obj.Members[i].Name.Value.(hujson.Literal).String() == key {
			return &obj.Members[i].Value
		}
	}
	return nil
}

// arrayOf is v's array, when v is one.
func arrayOf(v *hujson.Value) *hujson.Array {
	if v == nil {
		return nil
	}
	a, _ := v.Value.(*hujson.Array)
	return a
}

// stringOf is v's string, when v is one.
func stringOf(v *hujson.Value) (string, bool) {
	if v == nil {
		return "", false
	}
	lit, ok := v.Value.(hujson.Literal)
	if !ok || lit.Kind() != '"' {
		return "", false
	}
	return lit.String(), true
}

// event finds root → "hooks" → name: the "hooks" object and the array
// (each nil when missing), refusing a file laid out otherwise than the
// agent reads it.
func (d *doc) event(name string) (hooks, arr *hujson.Value, err error) {
	hooks = member(&d.root, "hooks")
	if hooks == nil {
		return nil, nil, nil
	}
	if _, ok := hooks.Value.(*hujson.Object); !ok {
		return nil, nil, &refused{`has a "hooks" that is not an object: fix or move it, then run again`}
	}
	arr = member(hooks, name)
	if arr == nil {
		return hooks, nil, nil
	}
	if _, ok := arr.Value.(*hujson.Array); !ok {
		return nil, nil, &refused{fmt.Sprintf(`has a "hooks" → %s that is not an array: fix or move it, then run again`, jsonString(name))}
	}
	return hooks, arr, nil
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
	if arr == nil {
		return nil
	}
	add := func(v *hujson.Value, entry, inner int) {
		if c, ok := stringOf(member(v, "command")); ok {
			bin, own := ownCommand(c)
			out = append(out, hookRef{command: c, lit: member(v, "command"), entry: entry, inner: inner, own: own, bin: bin})
		}
	}
	for i := range arr.Value.(*hujson.Array).Elements {
		en := &arr.Value.(*hujson.Array).Elements[i]
		add(en, i, -1)
		if list := arrayOf(member(en, "hooks")); list != nil {
			for j := range list.Elements {
				add(&list.Elements[j], i, j)
			}
		}
	}
	return out
}
