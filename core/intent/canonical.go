package intent

import (
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
var ErrNotCanonical = errors.New("intent: value has no canonical encoding")

// Canonical returns the canonical encoding of v: JSON with object keys in
// byte order, no insignificant space, integers in decimal, times in UTC as
// TimeFormat strings, and strings escaped only where JSON requires it
// (quote, backslash, and control characters as \u00XX). It is the single
// encoding of everything intentplane hashes or signs; its bytes are frozen
// by tests and must never change for existing fields.
//
// v may be nil, string, bool, int, int64, uint8, Amount, Value, Args,
// time.Time, []string, []any, map[string]string, map[string]any or
// map[string]Value, nested freely. Anything else, floats included, returns
// ErrNotCanonical.
func Canonical(v any) ([]byte, error) {
	return AppendCanonical(nil, v)
}

// AppendCanonical appends the canonical encoding of v to dst (see Canonical).
func AppendCanonical(dst []byte, v any) ([]byte, error) {
	switch x := v.(type) {
	case nil:
		return append(dst, "null"...), nil
	case string:
		return appendString(dst, x)
	case bool:
		return strconv.AppendBool(dst, x), nil
	case int:
		return strconv.AppendInt(dst, int64(x), 10), nil
	case int64:
		return strconv.AppendInt(dst, x, 10), nil
	case uint8:
		return strconv.AppendUint(dst, uint64(x), 10), nil
	case Amount:
		return strconv.AppendInt(dst, int64(x), 10), nil
	case time.Time:
		return appendString(dst, x.UTC().Format(TimeFormat))
	case Value:
		switch x.Kind {
		case KindString:
			return appendString(dst, x.Str)
		case KindInt, KindAmount:
			return strconv.AppendInt(dst, x.Int, 10), nil
		case KindBool:
			return strconv.AppendBool(dst, x.Bool), nil
		}
		return dst, fmt.Errorf("%w: value of invalid kind %d", ErrNotCanonical, x.Kind)
	case Args:
		return appendMap(dst, x)
	case []string:
		dst = append(dst, '[')
		for i, s := range x {
			if i > 0 {
				dst = append(dst, ',')
			}
			var err error
			if dst, err = appendString(dst, s); err != nil {
				return dst, err
			}
		}
		return append(dst, ']'), nil
	case []any:
		dst = append(dst, '[')
		for i, e := range x {
			if i > 0 {
				dst = append(dst, ',')
			}
			var err error
			if dst, err = AppendCanonical(dst, e); err != nil {
				return dst, err
			}
		}
		return append(dst, ']'), nil
	case map[string]string:
		return appendMap(dst, x)
	case map[string]Value:
		return appendMap(dst, x)
	case map[string]any:
		return appendMap(dst, x)
	}
	return dst, fmt.Errorf("%w: %T", ErrNotCanonical, v)
}

// appendMap writes m as an object with its keys in byte order.
func appendMap[M ~map[string]V, V any](dst []byte, m M) ([]byte, error) {
	var buf [16]string
	keys := buf[:0]
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	dst = append(dst, '{')
	for i, k := range keys {
		if i > 0 {
			dst = append(dst, ',')
		}
		var err error
		if dst, err = appendString(dst, k); err != nil {
			return dst, err
		}
		dst = append(dst, ':')
		if dst, err = AppendCanonical(dst, any(m[k])); err != nil {
			return dst, err
		}
	}
	return append(dst, '}'), nil
}

const hexDigits = "0123456789abcdef"

func appendString(dst []byte, s string) ([]byte, error) {
	if !utf8.ValidString(s) {
		return dst, fmt.Errorf("%w: string is not valid UTF-8", ErrNotCanonical)
	}
	dst = append(dst, '"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			dst = append(dst, '\\', c)
		case c < 0x20:
			dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		default:
			dst = append(dst, c)
		}
	}
	return append(dst, '"'), nil
}
