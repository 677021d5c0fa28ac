package normalize_test

import (
	"strings"
	"testing"

	"github.com/intentplane/intentplane/core/normalize"
)

func TestIdentifier(t *testing.T) {
	t.Parallel()
	run(t, normalize.KindIdentifier, normalize.Identifier, []test{
		// Valid.
		{name: "bill", in: "INV-2290", want: "INV-2290"},
		{name: "patient", in: "P-1001", want: "P-1001"},
		{name: "digit", in: "7", want: "7"},
		{name: "case kept", in: "inv-2290", want: "inv-2290"},
		{name: "trimmed", in: "  INV-2290 ", want: "INV-2290"},
		{name: "all punctuation", in: "res.partner:42/bank_1-a", want: "res.partner:42/bank_1-a"},
		{name: "dots inside a segment", in: "a..b/c.d", want: "a..b/c.d"},
		{name: "128", in: strings.Repeat("x", 128), want: strings.Repeat("x", 128)},

		// Refused.
		{name: "empty", in: "", reason: "is empty"},
		{name: "spaces", in: "   ", reason: "is empty"},
		{name: "129", in: strings.Repeat("x", 129), reason: "has 129 characters; an identifier has at most 128"},
		{name: "inner space", in: "INV 2290", reason: "contains a space at position 4"},
		{name: "hash", in: "INV#2290", reason: "contains '#' at position 4; an identifier has only letters, digits and - _ . : /"},
		{name: "quote", in: "1' OR '1'='1", reason: `contains ''' at position 2`},
		{name: "semicolon", in: " 7;", reason: "contains ';' at position 3"},
		{name: "backslash", in: `a\b`, reason: `contains '\' at position 2`},
		{name: "query", in: "7?x=1", reason: "contains '?' at position 2"},
		{name: "dot segment", in: ".", reason: `has a "." path segment`},
		{name: "dot-dot", in: "..", reason: `has a ".." path segment`},
		{name: "climbing", in: "bills/../vendors", reason: `has a ".." path segment`},
		{name: "leading climb", in: "../etc/passwd", reason: `has a ".." path segment`},
		{name: "trailing dot segment", in: "bills/.", reason: `has a "." path segment`},

		// Non-ASCII and control characters.
		{name: "Cyrillic Er", in: "\u0420-1001", reason: "contains the non-ASCII character U+0420 at position 1; look-alike characters are refused, type the identifier in plain ASCII"},
		{name: "Greek Omicron", in: "IN\u039f-1", reason: "U+039F at position 3"},
		{name: "full-width digits", in: "INV-\uff12\uff12\uff19\uff10", reason: "U+FF12 at position 5"},
		{name: "NBSP", in: "INV-2290\u00a0", reason: "U+00A0 (no-break space) at position 9"},
		{name: "zero-width space", in: "INV-\u200b2290", reason: "U+200B (zero-width space) at position 5"},
		{name: "en dash", in: "INV\u20132290", reason: "U+2013 at position 4"},
		{name: "tab", in: "INV-2290\t", reason: "U+0009 (tab) at position 9"},
		{name: "carriage return", in: "7\r", reason: "U+000D (carriage return) at position 2"},
		{name: "invalid UTF-8", in: "7\x80", reason: "byte 0x80"},
	})
}
