package intent

import (
	"sort"
	"strconv"
)

// Kind is the type of a decoded argument Value.
type Kind uint8

// The kinds of Value. The zero Kind is invalid.
const (
	KindString Kind = iota + 1
	KindInt
	KindAmount
	KindBool
)

// String returns the kind's lowercase name ("string", "int", "amount", "bool").
func (k Kind) String() string {
	switch k {
	case KindString:
		return "string"
	case KindInt:
		return "int"
	case KindAmount:
		return "amount"
	case KindBool:
		return "bool"
	}
	return "invalid"
}

// Value is one decoded argument. Exactly the field that matches Kind is
// meaningful: Str for KindString, Int for KindInt, Int and Scale for
// KindAmount (Int is then the amount in minor units and Scale the number of
// decimal places of the minor unit, 2 for cents), Bool for KindBool.
type Value struct {
	// The one-byte fields come first, so that a Value takes 32 bytes, not
	// 40: every map of arguments and facts holds them by value.
	Kind  Kind
	Scale uint8
	Bool  bool
	Str   string
	Int   int64
}

// Str returns a string Value.
func Str(s string) Value { return Value{Kind: KindString, Str: s} }

// Int returns an integer Value.
func Int(n int64) Value { return Value{Kind: KindInt, Int: n} }

// Bool returns a boolean Value.
func Bool(b bool) Value { return Value{Kind: KindBool, Bool: b} }

// AmountValue returns an amount Value of a minor units at the given scale.
func AmountValue(a Amount, scale uint8) Value {
	return Value{Kind: KindAmount, Int: int64(a), Scale: scale}
}

// String formats v for people: amounts as exact decimals ("1250.00").
func (v Value) String() string {
	switch v.Kind {
	case KindString:
		return v.Str
	case KindInt:
		return strconv.FormatInt(v.Int, 10)
	case KindAmount:
		return FormatAmount(Amount(v.Int), v.Scale)
	case KindBool:
		return strconv.FormatBool(v.Bool)
	}
	return "<invalid>"
}

// Args are decoded arguments by parameter name.
type Args map[string]Value

// Names returns the argument names in sorted order.
func (a Args) Names() []string {
	names := make([]string, 0, len(a))
	for k := range a {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

// Clone returns a copy of a that shares nothing with it.
func (a Args) Clone() Args {
	c := make(Args, len(a))
	for k, v := range a {
		c[k] = v
	}
	return c
}

// FormatAmount formats a minor-unit amount as an exact decimal with scale
// fraction digits: FormatAmount(125000, 2) is "1250.00".
func FormatAmount(a Amount, scale uint8) string {
	neg := a < 0
	u := uint64(a)
	if neg {
		u = uint64(-(a + 1)) + 1 // also right for math.MinInt64
	}
	s := strconv.FormatUint(u, 10)
	if scale > 0 {
		for len(s) <= int(scale) {
			s = "0" + s
		}
		s = s[:len(s)-int(scale)] + "." + s[len(s)-int(scale):]
	}
	if neg {
		s = "-" + s
	}
	return s
}
