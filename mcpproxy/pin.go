package mcpproxy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
)

// Pin is a downstream tool as an operator reviewed it: its title,
// description and input schema as the server listed them when the lock
// file was written (intentplane-mcp --pin). A tool whose listing differs
// from its pin is not served (see Mirror.Lock).
type Pin struct {
	// Server and Tool name the tool: the configuration's server name and
	// the tool's name on that server.
	Server string `json:"server"`
	Tool   string `json:"tool"`
	// Title and Description are the server's, as listed.
	Title       string `json:"title,omitempty"`
	Description string `json:"description"`
	// InputSchema is the server's input schema in canonical form: object
	// keys sorted, numbers as written, no insignificant space.
	InputSchema json.RawMessage `json:"input_schema"`
}

// PinOf returns the pin of raw, listed by server. It fails when raw's
// input schema is not a JSON object.
func PinOf(server string, raw RawTool) (Pin, error) {
	schema, err := canonicalSchema(raw.InputSchema)
	if err != nil {
		return Pin{}, fmt.Errorf("mcpproxy: tool %q of server %q: %w", raw.Name, server, err)
	}
	return Pin{Server: server, Tool: raw.Name, Title: raw.Title, Description: raw.Description, InputSchema: schema}, nil
}

// canonicalSchema returns the JSON object b with its keys sorted and no
// insignificant space; numbers keep their spelling.
func canonicalSchema(b json.RawMessage) (json.RawMessage, error) {
	v, err := decodeSchema(b)
	if err != nil {
		return nil, err
	}
	return encodeJSON(v)
}

func decodeSchema(b json.RawMessage) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("input schema is not valid JSON: %v", err)
	}
	if dec.More() {
		return nil, errors.New("input schema is not one JSON value")
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, errors.New("input schema is not a JSON object")
	}
	return m, nil
}

// encodeJSON encodes v with sorted keys and without HTML escaping.
func encodeJSON(v any) (json.RawMessage, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// Lock is the set of pinned tools an operator checked in: at most one pin
// per server and tool. It is read-only once built, so safe for concurrent
// use.
type Lock struct {
	pins map[[2]string]Pin
}

// LockVersion is the lock file's format version ("intentplane_tool_lock").
const LockVersion = 1

// lockFile is the lock file's JSON form.
type lockFile struct {
	Version *int  `json:"intentplane_tool_lock"`
	Tools   []Pin `json:"tools"`
}

// ErrLockInvalid is wrapped by the errors of ParseLock.
var ErrLockInvalid = errors.New("mcpproxy: invalid tool lock")

// NewLock returns a lock holding pins; a later pin of the same server and
// tool replaces an earlier one.
func NewLock(pins ...Pin) *Lock {
	l := &Lock{pins: make(map[[2]string]Pin, len(pins))}
	for _, p := range pins {
		l.pins[[2]string{p.Server, p.Tool}] = p
	}
	return l
}

// ParseLock reads a lock file: a JSON object
//
//	{"intentplane_tool_lock": 1, "tools": [{"server": "bank", "tool": "send_money",
//	  "title": "…", "description": "…", "input_schema": {…}}, …]}
//
// Unknown keys, another version, a pin without server or tool, a schema
// that is not a JSON object and a tool pinned twice are refused with an
// error wrapping ErrLockInvalid. Schemas are kept in canonical form, so a
// lock file reformatted by hand still matches.
func ParseLock(b []byte) (*Lock, error) {
	if err := lockKeys(b); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrLockInvalid, err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var f lockFile
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrLockInvalid, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("%w: more than one JSON value", ErrLockInvalid)
	}
	if f.Version == nil || *f.Version != LockVersion {
		return nil, fmt.Errorf("%w: \"intentplane_tool_lock\" must be %d", ErrLockInvalid, LockVersion)
	}
	l := NewLock()
	for i, p := range f.Tools {
		if p.Server == "" || p.Tool == "" {
			return nil, fmt.Errorf("%w: tools[%d] needs a server and a tool", ErrLockInvalid, i)
		}
		key := [2]string{p.Server, p.Tool}
		if _, dup := l.pins[key]; dup {
			return nil, fmt.Errorf("%w: tool %q of server %q is pinned twice", ErrLockInvalid, p.Tool, p.Server)
		}
		schema, err := canonicalSchema(p.InputSchema)
		if err != nil {
			return nil, fmt.Errorf("%w: tool %q of server %q: %v", ErrLockInvalid, p.Tool, p.Server, err)
		}
		p.InputSchema = schema
		l.pins[key] = p
	}
	return l, nil
}

// lockKeys refuses a lock file that gives a key twice in one object, or a
// key of the file or of a pin in another case than its own
// ("DESCRIPTION"): encoding/json would keep the last of two, and match
// keys ignoring case, so a reviewer of the file would read one
// description and the proxy pin another.
func lockKeys(b []byte) error {
	if k, at, dup := duplicateKey(b); dup {
		return fmt.Errorf("the key %q is given twice (at %s)", k, at)
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(b, &top); err != nil {
		return nil // refused by the decoding that follows
	}
	known := map[string]bool{"intentplane_tool_lock": true, "tools": true}
	for k := range top {
		if !known[k] {
			return fmt.Errorf("unknown key %q", k)
		}
	}
	var tools []map[string]json.RawMessage
	if err := json.Unmarshal(top["tools"], &tools); err != nil {
		return nil
	}
	known = map[string]bool{"server": true, "tool": true, "title": true, "description": true, "input_schema": true}
	for i, t := range tools {
		for k := range t {
			if !known[k] {
				return fmt.Errorf("tools[%d]: unknown key %q", i, k)
			}
		}
	}
	return nil
}

// Marshal returns the lock file: the pins sorted by server and tool,
// indented by two spaces (so that a change reads well in a diff), with a
// final newline.
func (l *Lock) Marshal() ([]byte, error) {
	pins := l.Pins()
	v := LockVersion
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(lockFile{Version: &v, Tools: pins}); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Pins returns the pins sorted by server and tool; never nil.
func (l *Lock) Pins() []Pin {
	out := make([]Pin, 0, len(l.pins))
	for _, p := range l.pins {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Server != out[j].Server {
			return out[i].Server < out[j].Server
		}
		return out[i].Tool < out[j].Tool
	})
	return out
}

// Pin returns the pin of tool on server; ok is false when there is none.
func (l *Lock) Pin(server, tool string) (p Pin, ok bool) {
	p, ok = l.pins[[2]string{server, tool}]
	return p, ok
}

// Verify compares raw, as server lists it now, with its pin. It returns
// pinned false when the tool has no pin, and otherwise the difference
// (Pin.Diff), empty when raw matches its pin.
func (l *Lock) Verify(server string, raw RawTool) (diff string, pinned bool) {
	want, ok := l.Pin(server, raw.Name)
	if !ok {
		return "", false
	}
	got, err := PinOf(server, raw)
	if err != nil {
		return "input schema: " + err.Error(), true
	}
	return want.Diff(got), true
}

// Diff says how got differs from p in a few lines, for an operator's log:
// the title and description as quoted strings (shortened), and the input
// schema as the paths of the JSON members added, removed or changed (at
// most eight). It returns "" when they are the same.
func (p Pin) Diff(got Pin) string {
	var lines []string
	if p.Title != got.Title {
		lines = append(lines, fmt.Sprintf("title: %s -> %s", quoteShort(p.Title), quoteShort(got.Title)))
	}
	if p.Description != got.Description {
		lines = append(lines, fmt.Sprintf("description: %s -> %s", quoteShort(p.Description), quoteShort(got.Description)))
	}
	if !bytes.Equal(p.InputSchema, got.InputSchema) {
		a, errA := decodeSchema(p.InputSchema)
		b, errB := decodeSchema(got.InputSchema)
		if errA != nil || errB != nil {
			lines = append(lines, "input schema: changed")
		} else {
			var changes []string
			diffJSON("", a, b, &changes)
			for i, c := range changes {
				changes[i] = asciiOnly(c)
			}
			if len(changes) > maxDiffLines {
				changes = append(changes[:maxDiffLines], fmt.Sprintf("… and %d more", len(changes)-maxDiffLines))
			}
			lines = append(lines, "input schema: "+strings.Join(changes, "; "))
		}
	}
	return strings.Join(lines, "\n")
}

const (
	maxDiffLines = 8
	maxQuoted    = 160
)

// quoteShort quotes s, shortened, with Go's ASCII escaping: a look-alike
// (a Cyrillic 'а' for an 'a') or an invisible character shows as \u0430
// or \u200b, so that a change an operator reads is never two strings that
// look the same.
func quoteShort(s string) string { return fmt.Sprintf("%+q", shorten(s)) }

// asciiOnly returns s with every rune outside printable ASCII written as
// \uXXXX (\UXXXXXXXX above the BMP), for the schema's paths and values
// in a diff: see quoteShort.
func asciiOnly(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 0x20 && r < 0x7f:
			b.WriteRune(r)
		case r > 0xffff:
			fmt.Fprintf(&b, "\\U%08x", r)
		default:
			fmt.Fprintf(&b, "\\u%04x", r)
		}
	}
	return b.String()
}

// shorten cuts s to maxQuoted bytes (on a rune boundary), marking the cut
// with "…".
func shorten(s string) string {
	if len(s) <= maxQuoted {
		return s
	}
	cut := maxQuoted
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + "…"
}

// diffJSON appends to out one line per member that differs between a and
// b under path: "+ path = value" (added), "- path" (removed), "~ path:
// old -> new" (changed). Objects are compared member by member, any
// other value as a whole.
func diffJSON(path string, a, b any, out *[]string) {
	am, aok := a.(map[string]any)
	bm, bok := b.(map[string]any)
	if aok && bok {
		keys := map[string]bool{}
		for k := range am {
			keys[k] = true
		}
		for k := range bm {
			keys[k] = true
		}
		sorted := make([]string, 0, len(keys))
		for k := range keys {
			sorted = append(sorted, k)
		}
		sort.Strings(sorted)
		for _, k := range sorted {
			sub := k
			if path != "" {
				sub = path + "." + k
			}
			av, ina := am[k]
			bv, inb := bm[k]
			switch {
			case !ina:
				*out = append(*out, fmt.Sprintf("+ %s = %s", sub, shortJSON(bv)))
			case !inb:
				*out = append(*out, "- "+sub)
			default:
				diffJSON(sub, av, bv, out)
			}
		}
		return
	}
	ab, _ := encodeJSON(a)
	bb, _ := encodeJSON(b)
	if !bytes.Equal(ab, bb) {
		if path == "" {
			path = "(the schema)"
		}
		*out = append(*out, fmt.Sprintf("~ %s: %s -> %s", path, shortJSON(a), shortJSON(b)))
	}
}

// shortJSON encodes v, shortened.
func shortJSON(v any) string {
	b, err := encodeJSON(v)
	if err != nil {
		return "?"
	}
	return shorten(string(b))
}
