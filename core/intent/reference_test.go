package intent_test

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/intentplane/intentplane/core/intent"
)

// referenceString is the canonical encoding of a string as first written:
// refused unless valid UTF-8, then each byte looked at alone. The
// Encoder's one-pass, eight-bytes-at-a-time version must agree with it on
// every input.
func referenceString(s string) (string, bool) {
	if !utf8.ValidString(s) {
		return "", false
	}
	const hex = "0123456789abcdef"
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c < 0x20:
			b.WriteString(`\u00`)
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&0xf])
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String(), true
}

// checkString encodes s with an Encoder, as a value and as a key, and
// compares both with referenceString.
func checkString(t *testing.T, s string) {
	t.Helper()
	want, ok := referenceString(s)
	got, err := intent.Canonical(s)
	if ok != (err == nil) || ok && string(got) != want {
		t.Fatalf("Canonical(%q) = %s, %v; want %s (valid UTF-8: %v)", s, got, err, want, ok)
	}
	if err != nil && !errors.Is(err, intent.ErrNotCanonical) {
		t.Fatalf("Canonical(%q) error = %v, want ErrNotCanonical", s, err)
	}
	var e intent.Encoder
	e.Reset([]byte("prefix"))
	e.BeginObject()
	e.Key(s)
	e.Null()
	e.EndObject()
	got, err = e.Bytes()
	if ok != (err == nil) || ok && string(got) != "prefix{"+want+":null}" {
		t.Fatalf("key %q = %s, %v; want %s", s, got, err, want)
	}
}

func TestStringReference(t *testing.T) {
	t.Parallel()
	// Each special byte at each position of an eight-byte word, and words
	// that are all but one plain.
	specials := []string{"\x00", "\x1f", " ", "\"", "\\", "\x7f", "\x80", "é", "\u2028", "\ufffd", "\xff", "\xed\xa0\x80", "\xc0\xaf", "𝄞"}
	for _, sp := range specials {
		for pre := 0; pre <= 17; pre++ {
			for _, post := range []int{0, 1, 7, 8, 9} {
				checkString(t, strings.Repeat("a", pre)+sp+strings.Repeat("z", post))
			}
		}
	}
	for c := 0; c < 256; c++ {
		checkString(t, strings.Repeat("!", 8)+string(rune(c))+strings.Repeat("#", 8))
		checkString(t, strings.Repeat("!", 8)+string([]byte{byte(c)})+strings.Repeat("#", 8))
	}
	checkString(t, "")
	checkString(t, strings.Repeat("0123456789", 100))
}

func FuzzString(f *testing.F) {
	for _, s := range []string{"", "plain ascii text", "quote\"back\\slash", "ctl\x01\x1f", "é<>&\u2028", "bad\xffbyte", "12345678\"", "\xed\xa0\x80surrogate"} {
		f.Add(s)
	}
	f.Fuzz(checkString)
}

// TestEncoderDeepNesting crosses the levels an Encoder tracks inline
// (nearDepth, 8) in both directions, and checks that Reset leaves nothing
// open.
func TestEncoderDeepNesting(t *testing.T) {
	t.Parallel()
	for _, depth := range []int{1, 7, 8, 9, 16, 40} {
		var v any = "x"
		want := `"x"`
		for i := 0; i < depth; i++ {
			if i%2 == 0 {
				v, want = []any{int64(i), v}, "["+strconv.Itoa(i)+","+want+"]"
			} else {
				v, want = map[string]any{"a": v, "b": true}, `{"a":`+want+`,"b":true}`
			}
		}
		var e intent.Encoder
		for round := 0; round < 2; round++ { // the second after a Reset
			e.Reset(nil)
			e.Any(v)
			got, err := e.Bytes()
			if err != nil || string(got) != want {
				t.Fatalf("depth %d, round %d: %s, %v; want %s", depth, round, got, err, want)
			}
		}
		// Left open at that depth, then closed with the wrong bracket.
		e.Reset(nil)
		for i := 0; i < depth; i++ {
			e.BeginArray()
		}
		if _, err := e.Bytes(); !errors.Is(err, intent.ErrNotCanonical) {
			t.Fatalf("depth %d left open: %v, want ErrNotCanonical", depth, err)
		}
		e.Reset(nil)
		for i := 0; i < depth; i++ {
			e.BeginArray()
		}
		e.EndObject()
		if _, err := e.Bytes(); !errors.Is(err, intent.ErrNotCanonical) {
			t.Fatalf("depth %d closed by }: %v, want ErrNotCanonical", depth, err)
		}
	}
}

// TestName: a Name writes what Key writes, in the same order checks, and a
// Name of invalid UTF-8 is refused when written.
func TestName(t *testing.T) {
	t.Parallel()
	for _, k := range []string{"", "a", "quote\"", "ctl\x01", "é", "0123456789abcdef"} {
		var byKey, byName intent.Encoder
		for _, e := range []*intent.Encoder{&byKey, &byName} {
			e.BeginObject()
		}
		byKey.Key(k)
		byName.Name(intent.NewName(k))
		for _, e := range []*intent.Encoder{&byKey, &byName} {
			e.Null()
			e.EndObject()
		}
		want, err1 := byKey.Bytes()
		got, err2 := byName.Bytes()
		if err1 != nil || err2 != nil || string(got) != string(want) {
			t.Fatalf("Name(%q) = %s, %v; Key = %s, %v", k, got, err2, want, err1)
		}
		if n := intent.NewName(k); n.String() != k {
			t.Fatalf("NewName(%q).String() = %q", k, n.String())
		}
	}
	var e intent.Encoder
	e.BeginObject()
	e.Name(intent.NewName("b"))
	e.Null()
	e.Name(intent.NewName("a"))
	if _, err := e.Bytes(); !errors.Is(err, intent.ErrNotCanonical) {
		t.Fatalf("Name out of order: %v, want ErrNotCanonical", err)
	}
	e.Reset(nil)
	e.BeginObject()
	e.Name(intent.NewName("\xff"))
	if _, err := e.Bytes(); !errors.Is(err, intent.ErrNotCanonical) {
		t.Fatalf("Name of invalid UTF-8: %v, want ErrNotCanonical", err)
	}
}
