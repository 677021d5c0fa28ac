package intent

import (
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"
)

// TimeFormat is the one layout of times in canonical encodings: UTC with
// nanoseconds always written, so that equal instants encode equally.
const TimeFormat = "2006-01-02T15:04:05.000000000Z"

// ErrNotCanonical is returned by Canonical for a value it cannot encode
// canonically: a float, an unsupported type, or a string that is not UTF-8.
// An Encoder returns it too for object keys out of order and for members
// written out of place.
var ErrNotCanonical = errors.New("intent: value has no canonical encoding")

// Canonical returns the canonical encoding of v: JSON with object keys in
// byte order, no insignificant space, integers in decimal, times in UTC as
// TimeFormat strings, and strings escaped only where JSON requires it
// (quote, backslash, and control characters as \u00XX). It is the
// encoding of everything intentplane signs or hashes, but for receipts of
// version 2, which hash package receipt's binary encoding (half the bytes
// to hash); its bytes are frozen by tests and must never change for
// existing fields.
//
// v may be nil, string, bool, int, int64, uint8, Amount, Value, Args,
// time.Time, []string, []any, map[string]string, map[string]any or
// map[string]Value, nested freely. Anything else, floats included, returns
// ErrNotCanonical.
//
// Canonical is written with an Encoder; code that knows its keys in advance
// can use an Encoder directly and build no maps.
func Canonical(v any) ([]byte, error) {
	return AppendCanonical(nil, v)
}

// AppendCanonical appends the canonical encoding of v to dst (see Canonical).
func AppendCanonical(dst []byte, v any) ([]byte, error) {
	e := NewEncoder(dst)
	e.Any(v)
	return e.Bytes()
}

// Encoder writes the canonical encoding (see Canonical) one member at a
// time. Objects are opened with BeginObject, each member is a Key followed
// by one value, and keys must come in strictly ascending byte order: the
// Encoder checks it, so an out-of-order or repeated key is an error, never
// a different encoding. Arrays are opened with BeginArray.
//
// The first error (ErrNotCanonical, wrapped) is kept and returned by Bytes;
// the calls after it do nothing. The zero Encoder appends to a nil slice.
// An Encoder is not safe for concurrent use.
type Encoder struct {
	buf   []byte
	err   error
	depth int              // the number of objects and arrays open
	near  [nearDepth]frame // the frames of the outermost nearDepth levels
	deep  []frame          // the frames below them, innermost last
	ready bool             // a key was written; its value comes next
}

// nearDepth is how many levels of nesting an Encoder tracks without
// allocating; receipts and operations need four.
const nearDepth = 8

// frame is one object or array being written.
type frame struct {
	object bool
	n      int    // members or elements written so far
	key    string // the last key written (objects)
}

// NewEncoder returns an Encoder that appends to dst.
func NewEncoder(dst []byte) *Encoder {
	return &Encoder{buf: dst}
}

// Reset makes e append to dst, as NewEncoder(dst) would, keeping what it
// allocated for deep nesting. It lets a caller keep an Encoder in a
// variable of its own and allocate nothing.
func (e *Encoder) Reset(dst []byte) {
	*e = Encoder{buf: dst, deep: e.deep[:0]}
}

// top returns the innermost open frame; the caller checks depth > 0.
func (e *Encoder) top() *frame {
	if e.depth <= nearDepth {
		return &e.near[e.depth-1]
	}
	return &e.deep[e.depth-1-nearDepth]
}

// push opens a frame.
func (e *Encoder) push(object bool) {
	if e.depth < nearDepth {
		e.near[e.depth] = frame{object: object}
	} else {
		e.deep = append(e.deep, frame{object: object})
	}
	e.depth++
}

// pop closes the innermost frame.
func (e *Encoder) pop() {
	e.depth--
	if e.depth >= nearDepth {
		e.deep = e.deep[:len(e.deep)-1]
	}
}

// Bytes returns the encoding appended so far, and the first error. It
// reports an error if an object or array is still open.
func (e *Encoder) Bytes() ([]byte, error) {
	if e.err == nil && e.depth > 0 {
		e.fail("%d objects or arrays left open", e.depth)
	}
	return e.buf, e.err
}

func (e *Encoder) fail(format string, a ...any) {
	if e.err == nil {
		e.err = fmt.Errorf("%w: %s", ErrNotCanonical, fmt.Sprintf(format, a...))
	}
}

// value prepares the writing of one value: a comma between array elements,
// and a check that a value inside an object follows its key.
func (e *Encoder) value() bool {
	if e.err != nil {
		return false
	}
	if e.depth == 0 {
		return true
	}
	f := e.top()
	if f.object {
		if !e.ready {
			e.fail("a value inside an object needs a key")
			return false
		}
		e.ready = false
		return true
	}
	if f.n > 0 {
		e.buf = append(e.buf, ',')
	}
	f.n++
	return true
}

// Key writes the key of the next member of the current object. k must be
// greater, in byte order, than the object's previous key.
func (e *Encoder) Key(k string) {
	if e.member(k) {
		e.appendString(k)
		e.buf = append(e.buf, ':')
	}
}

// Name writes the key n of the next member of the current object, as Key
// would write n.String(), from its encoding made once by NewName.
func (e *Encoder) Name(n Name) {
	if n.err != nil {
		e.fail("%v", n.err)
		return
	}
	if e.member(n.s) {
		e.buf = append(e.buf, n.encoded...)
	}
}

// member checks that a member with key k can come next in the current
// object and writes the comma before it, if any; it reports false after
// an error.
func (e *Encoder) member(k string) bool {
	if e.err != nil {
		return false
	}
	if e.depth == 0 || e.ready || !e.top().object {
		e.fail("key %q outside an object or without a value before it", k)
		return false
	}
	f := e.top()
	if f.n > 0 {
		if k <= f.key {
			e.fail("key %q after %q", k, f.key)
			return false
		}
		e.buf = append(e.buf, ',')
	}
	f.n++
	f.key = k
	e.ready = true
	return true
}

// Name is an object key encoded once, for code that writes the same keys
// many times (the members of a receipt or an operation): Encoder.Name
// appends its encoding instead of escaping the key again.
type Name struct {
	s       string
	encoded string // the key as Key writes it, with its colon
	err     error  // why s cannot be a key (not valid UTF-8)
}

// NewName returns the Name of key s. A string that is not valid UTF-8
// makes a Name that Encoder.Name refuses with ErrNotCanonical.
func NewName(s string) Name {
	var e Encoder
	e.BeginObject()
	e.Key(s)
	e.Null()
	e.EndObject()
	b, err := e.Bytes()
	if err != nil {
		return Name{s: s, err: err}
	}
	return Name{s: s, encoded: string(b[1 : len(b)-len("null}")])}
}

// String returns the key.
func (n Name) String() string { return n.s }

// BeginObject opens an object; EndObject closes it.
func (e *Encoder) BeginObject() {
	if e.value() {
		e.buf = append(e.buf, '{')
		e.push(true)
	}
}

// EndObject closes the object BeginObject opened.
func (e *Encoder) EndObject() { e.end(true, '}') }

// BeginArray opens an array; EndArray closes it.
func (e *Encoder) BeginArray() {
	if e.value() {
		e.buf = append(e.buf, '[')
		e.push(false)
	}
}

// EndArray closes the array BeginArray opened.
func (e *Encoder) EndArray() { e.end(false, ']') }

func (e *Encoder) end(object bool, c byte) {
	if e.err != nil {
		return
	}
	if e.depth == 0 || e.ready || e.top().object != object {
		e.fail("%c does not close what is open", c)
		return
	}
	e.pop()
	e.buf = append(e.buf, c)
}

// Null writes null.
func (e *Encoder) Null() {
	if e.value() {
		e.buf = append(e.buf, "null"...)
	}
}

// String writes s as a JSON string. A string that is not valid UTF-8 is an
// error.
func (e *Encoder) String(s string) {
	if e.value() {
		e.appendString(s)
	}
}

// Hex writes b as a JSON string of lowercase hex digits, as String would
// write hex.EncodeToString(b), without building that string.
func (e *Encoder) Hex(b []byte) {
	if e.value() {
		e.buf = append(e.buf, '"')
		e.buf = hex.AppendEncode(e.buf, b)
		e.buf = append(e.buf, '"')
	}
}

// Int writes n in decimal.
func (e *Encoder) Int(n int64) {
	if e.value() {
		e.buf = strconv.AppendInt(e.buf, n, 10)
	}
}

// Uint writes n in decimal.
func (e *Encoder) Uint(n uint64) {
	if e.value() {
		e.buf = strconv.AppendUint(e.buf, n, 10)
	}
}

// Bool writes true or false.
func (e *Encoder) Bool(b bool) {
	if e.value() {
		e.buf = strconv.AppendBool(e.buf, b)
	}
}

// Time writes t in UTC as a TimeFormat string.
func (e *Encoder) Time(t time.Time) {
	if e.value() {
		// TimeFormat writes only digits and ASCII punctuation: nothing to
		// escape.
		e.buf = append(e.buf, '"')
		e.buf = t.UTC().AppendFormat(e.buf, TimeFormat)
		e.buf = append(e.buf, '"')
	}
}

// Value writes v by its kind: a string, or an integer (KindInt, and
// KindAmount in minor units, without its scale), or a boolean. A Value of
// invalid kind is an error.
func (e *Encoder) Value(v Value) {
	switch v.Kind {
	case KindString:
		e.String(v.Str)
	case KindInt, KindAmount:
		e.Int(v.Int)
	case KindBool:
		e.Bool(v.Bool)
	default:
		e.fail("value of invalid kind %d", v.Kind)
	}
}

// Any writes v, of one of the types Canonical accepts.
func (e *Encoder) Any(v any) {
	if e.scalar(v) {
		return
	}
	switch x := v.(type) {
	case Args:
		writeMap(e, x, e.Value)
	case []string:
		e.BeginArray()
		for _, s := range x {
			e.String(s)
		}
		e.EndArray()
	case []any:
		e.BeginArray()
		for _, v := range x {
			e.Any(v)
		}
		e.EndArray()
	case map[string]string:
		writeMap(e, x, e.String)
	case map[string]Value:
		writeMap(e, x, e.Value)
	case map[string]any:
		writeMap(e, x, e.Any)
	default:
		e.fail("%T", v)
	}
}

// scalar writes v if it is one of the scalar types Canonical accepts (a
// Value included), and reports whether it was.
func (e *Encoder) scalar(v any) bool {
	switch x := v.(type) {
	case nil:
		e.Null()
	case string:
		e.String(x)
	case bool:
		e.Bool(x)
	case int:
		e.Int(int64(x))
	case int64:
		e.Int(x)
	case uint8:
		e.Uint(uint64(x))
	case Amount:
		e.Int(int64(x))
	case time.Time:
		e.Time(x)
	case Value:
		e.Value(x)
	default:
		return false
	}
	return true
}

// writeMap writes m as an object with its keys in byte order, each value
// with write.
func writeMap[M ~map[string]V, V any](e *Encoder, m M, write func(V)) {
	var buf [16]string
	keys := buf[:0]
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	e.BeginObject()
	for _, k := range keys {
		e.Key(k)
		write(m[k])
	}
	e.EndObject()
}

const hexDigits = "0123456789abcdef"

// plainASCII[c] is true for the ASCII bytes a JSON string holds as they
// are: neither a control character, nor '"', nor '\\'.
var plainASCII = func() (t [utf8.RuneSelf]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// appendString writes s as a JSON string, escaping only '"', '\\' and
// control characters (as \u00XX), in one pass that also checks that s is
// valid UTF-8 (as utf8.ValidString does); invalid UTF-8 is an error and
// writes nothing.
func (e *Encoder) appendString(s string) {
	dst := append(e.buf, '"')
	plain := 0 // s[plain:i] is copied as it is
	for i := 0; i < len(s); {
		for i+8 <= len(s) && plainWord(word(s[i:])) {
			i += 8
		}
		if i == len(s) {
			break
		}
		c := s[i]
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 {
				e.fail("string is not valid UTF-8")
				return
			}
			i += size
			continue
		}
		if plainASCII[c] {
			i++
			continue
		}
		dst = append(dst, s[plain:i]...)
		if c < 0x20 {
			dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		} else {
			dst = append(dst, '\\', c)
		}
		i++
		plain = i
	}
	dst = append(dst, s[plain:]...)
	e.buf = append(dst, '"')
}

// plainWord reports whether the 8 bytes of x are all plain ASCII (see
// plainASCII), testing them together. It may report false for a plain
// word (the caller then tests its bytes one by one), never true for
// another.
func plainWord(x uint64) bool {
	// (v - n*ones) &^ v has the high bit of each byte of v that is below n
	// set (and perhaps of bytes above one that is), when no byte of v has
	// its own high bit set: the classic test for a byte less than n.
	q, b := x^(ones*'"'), x^(ones*'\\')
	return (x|(x-ones*0x20)&^x|(q-ones)&^q|(b-ones)&^b)&highs == 0
}

// word returns the 8 bytes of w, little-endian.
func word(w string) uint64 {
	_ = w[7]
	return uint64(w[0]) | uint64(w[1])<<8 | uint64(w[2])<<16 | uint64(w[3])<<24 |
		uint64(w[4])<<32 | uint64(w[5])<<40 | uint64(w[6])<<48 | uint64(w[7])<<56
}

const ones, highs = 0x0101010101010101, 0x8080808080808080
