package install

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/tailscale/hujson"
)

// child is a member of an object or an element of an array, by offsets
// into the file: start is where it begins (a member's name), before the
// white space and comments ahead of it, end the byte after its value, and
// after what stands between its value and the comma that follows (nil
// when no comma follows the last one).
type child struct {
	start, end    int
	before, after hujson.Extra
}

func children(c *hujson.Value) []child {
	var out []child
	switch t := c.Value.(type) {
	case *hujson.Object:
		for _, m := range t.Members {
			out = append(out, child{m.Name.StartOffset, m.Value.EndOffset, m.Name.BeforeExtra, m.Value.AfterExtra})
		}
	case *hujson.Array:
		for _, e := range t.Elements {
			out = append(out, child{e.StartOffset, e.EndOffset, e.BeforeExtra, e.AfterExtra})
		}
	}
	return out
}

// splice is data with [start, end) replaced by text.
func splice(data []byte, start, end int, text string) []byte {
	out := make([]byte, 0, len(data)-(end-start)+len(text))
	out = append(out, data[:start]...)
	out = append(out, text...)
	return append(out, data[end:]...)
}

// indentOf is the white space that starts the line holding offset off,
// and whether only that white space stands before off on its line.
func indentOf(data []byte, off int) (string, bool) {
	i := off
	for i > 0 && (data[i-1] == ' ' || data[i-1] == '\t') {
		i--
	}
	first := i == 0 || data[i-1] == '\n'
	j := bytes.LastIndexByte(data[:i], '\n') + 1
	k := j
	for k < len(data) && (data[k] == ' ' || data[k] == '\t') {
		k++
	}
	return string(data[j:k]), first
}

// unit is the file's indentation step: the white space before the root's
// first member, on a line of its own; "" for a file written on one line;
// two spaces for an empty root.
func (d *doc) unit() string {
	kids := children(&d.root)
	if len(kids) == 0 {
		return "  "
	}
	ind, first := indentOf(d.data, kids[0].start)
	if !first {
		return ""
	}
	return ind
}

// render is v as JSON text starting at a line indented by indent, in
// steps of unit (on one line when unit is "").
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

// insertInto is d's bytes with one more member or element at the end of
// container c: item renders it at the indentation it is given (a member
// as `"name": value`). The new one is laid out like its last sibling (on
// a line of its own, or on the same line), or, in an empty container, on
// a line of its own one step deeper than the container's line.
func (d *doc) insertInto(c *hujson.Value, item func(indent, unit string) string) []byte {
	if bytes.Contains(d.data, []byte("\r\n")) { // the file's line ends
		lf := item
		item = func(indent, unit string) string { return strings.ReplaceAll(lf(indent, unit), "\n", "\r\n") }
	}
	return d.insertText(c, item)
}

func (d *doc) insertText(c *hujson.Value, item func(indent, unit string) string) []byte {
	nl := "\n"
	if bytes.Contains(d.data, []byte("\r\n")) {
		nl = "\r\n"
	}
	unit := d.unit()
	kids := children(c)
	if len(kids) == 0 {
		open := c.StartOffset + 1
		if unit == "" {
			return splice(d.data, open, open, item("", ""))
		}
		ind, _ := indentOf(d.data, c.StartOffset)
		closing := ""
		if inner := d.data[open : c.EndOffset-1]; !bytes.Contains(inner, []byte("\n")) {
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

// cut is d's bytes without child i of container c, and the comma that
// went with it.
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

// memberText renders `"name": v`.
func memberText(name string, v any) func(indent, unit string) string {
	return func(indent, unit string) string {
		return jsonString(name) + ": " + render(v, indent, unit)
	}
}

func valueText(v any) func(indent, unit string) string {
	return func(indent, unit string) string { return render(v, indent, unit) }
}
