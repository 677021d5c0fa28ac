package contract

import "unicode/utf8"

// maxDepth is the deepest nesting of arrays and objects validJSON accepts:
// encoding/json's limit, so that the two agree.
const maxDepth = 10000

// validJSON reports whether b is one JSON value (RFC 8259), with white
// space around it, and valid UTF-8: what json.Valid(b) && utf8.Valid(b)
// report, in one pass over b instead of two, and without encoding/json's
// state machine (a third of the cost of decoding a proposal).
// FuzzValidJSON checks it against those two.
func validJSON(b []byte) bool {
	v := jsonValidator{b: b}
	v.space()
	if !v.value(0) {
		return false
	}
	v.space()
	return v.i == len(v.b)
}

// jsonValidator reads b from i; each method reports whether what it read
// is well formed and leaves i after it.
type jsonValidator struct {
	b []byte
	i int
}

func (v *jsonValidator) space() {
	for v.i < len(v.b) {
		switch v.b[v.i] {
		case ' ', '\t', '\n', '\r':
			v.i++
		default:
			return
		}
	}
}

// peek returns the next byte, or 0 at the end (which no valid JSON text
// holds outside a string).
func (v *jsonValidator) peek() byte {
	if v.i < len(v.b) {
		return v.b[v.i]
	}
	return 0
}

func (v *jsonValidator) value(depth int) bool {
	switch c := v.peek(); {
	case c == '{' || c == '[':
		if depth == maxDepth {
			return false
		}
		return v.container(c, depth+1)
	case c == '"':
		return v.string()
	case c == '-' || c >= '0' && c <= '9':
		return v.number()
	case c == 't':
		return v.literal("true")
	case c == 'f':
		return v.literal("false")
	case c == 'n':
		return v.literal("null")
	}
	return false
}

// container reads an object (open '{') or an array (open '[').
func (v *jsonValidator) container(open byte, depth int) bool {
	end := byte(']')
	if open == '{' {
		end = '}'
	}
	v.i++
	v.space()
	if v.peek() == end {
		v.i++
		return true
	}
	for {
		if open == '{' {
			if v.peek() != '"' || !v.string() {
				return false
			}
			v.space()
			if v.peek() != ':' {
				return false
			}
			v.i++
			v.space()
		}
		if !v.value(depth) {
			return false
		}
		v.space()
		switch v.peek() {
		case ',':
			v.i++
			v.space()
		case end:
			v.i++
			return true
		default:
			return false
		}
	}
}

func (v *jsonValidator) literal(word string) bool {
	if len(v.b)-v.i < len(word) || string(v.b[v.i:v.i+len(word)]) != word {
		return false
	}
	v.i += len(word)
	return true
}

// number reads -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?.
func (v *jsonValidator) number() bool {
	if v.peek() == '-' {
		v.i++
	}
	switch c := v.peek(); {
	case c == '0':
		v.i++
	case c >= '1' && c <= '9':
		v.digits()
	default:
		return false
	}
	if v.peek() == '.' {
		v.i++
		if !v.digits() {
			return false
		}
	}
	if c := v.peek(); c == 'e' || c == 'E' {
		v.i++
		if c := v.peek(); c == '+' || c == '-' {
			v.i++
		}
		if !v.digits() {
			return false
		}
	}
	return true
}

// digits reads [0-9]* and reports whether it read one at least.
func (v *jsonValidator) digits() bool {
	start := v.i
	for v.i < len(v.b) && v.b[v.i] >= '0' && v.b[v.i] <= '9' {
		v.i++
	}
	return v.i > start
}

// string reads a string: no control character, known escapes only, and
// valid UTF-8.
func (v *jsonValidator) string() bool {
	b, i := v.b, v.i+1 // after the '"'
	for i < len(b) {
		c := b[i]
		if plain[c] {
			i++
			continue
		}
		switch {
		case c == '"':
			v.i = i + 1
			return true
		case c == '\\':
			v.i = i
			if !v.escape() {
				return false
			}
			i = v.i
		case c < 0x20:
			return false
		default:
			r, n := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && n == 1 {
				return false
			}
			i += n
		}
	}
	return false
}

// plain holds the bytes a string holds as they are: printable ASCII but
// the quote and the backslash.
var plain = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// escape reads a backslash and what it escapes.
func (v *jsonValidator) escape() bool {
	v.i++
	switch v.peek() {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		v.i++
		return true
	case 'u':
		if len(v.b)-v.i < 5 {
			return false
		}
		for _, h := range v.b[v.i+1 : v.i+5] {
			if !(h >= '0' && h <= '9' || h >= 'a' && h <= 'f' || h >= 'A' && h <= 'F') {
				return false
			}
		}
		v.i += 5
		return true
	}
	return false
}
