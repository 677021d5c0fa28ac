package normalize_test

import (
	"strings"
	"testing"

	"github.com/intentplane/intentplane/core/normalize"
)

func TestEmail(t *testing.T) {
	t.Parallel()
	long63 := strings.Repeat("a", 63)
	run(t, normalize.KindEmail, normalize.Email, []test{
		// Valid.
		{name: "plain", in: "ap@acme.example", want: "ap@acme.example"},
		{name: "upper case", in: "Mark.Black@Gmail.COM", want: "mark.black@gmail.com"},
		{name: "surrounding spaces", in: "  emma.johnson@bluesparrowtech.com ", want: "emma.johnson@bluesparrowtech.com"},
		{name: "subdomains", in: "a@mail.eu.example.org", want: "a@mail.eu.example.org"},
		{name: "atext specials", in: "a!#$%&'*+-/=?^_`{|}~z@example.com", want: "a!#$%&'*+-/=?^_`{|}~z@example.com"},
		{name: "plus tag", in: "billing+inv@vendor.example", want: "billing+inv@vendor.example"},
		{name: "hyphen and digits in domain", in: "x@mail-1.example9.com", want: "x@mail-1.example9.com"},
		{name: "punycode kept as written", in: "a@xn--pple-43d.com", want: "a@xn--pple-43d.com"},
		{name: "local 64", in: strings.Repeat("b", 64) + "@example.com", want: strings.Repeat("b", 64) + "@example.com"},
		{name: "label 63", in: "a@" + long63 + ".com", want: "a@" + long63 + ".com"},
		{name: "254 total", in: "a@" + long63 + "." + long63 + "." + long63 + "." + strings.Repeat("c", 60), want: "a@" + long63 + "." + long63 + "." + long63 + "." + strings.Repeat("c", 60)},

		// Shape.
		{name: "empty", in: "", reason: "is empty"},
		{name: "only spaces", in: "   ", reason: "is empty"},
		{name: "no at", in: "ap.acme.example", reason: "has no '@'"},
		{name: "two ats", in: "a@b@example.com", reason: "has more than one '@'"},
		{name: "255 total", in: "a@" + long63 + "." + long63 + "." + long63 + "." + strings.Repeat("c", 61), reason: "has 255 characters; an address has at most 254"},

		// Not an addr-spec.
		{name: "display name", in: "Bob <bob@example.com>", reason: "contains '<' at position 5; display names and angle brackets are refused"},
		{name: "angle brackets", in: "<bob@example.com>", reason: "contains '<' at position 1"},
		{name: "comment", in: "bob(work)@example.com", reason: "contains '(' at position 4; comments are refused"},
		{name: "quoted local part", in: `"bob smith"@example.com`, reason: "quoted local parts are refused"},
		{name: "inner space", in: "bob @example.com", reason: "contains a space at position 4"},
		{name: "mailto", in: "mailto:bob@example.com", reason: "contains ':' at position 7"},
		{name: "comma list", in: "a@example.com,b@example.com", reason: "has more than one '@'"},

		// Local part.
		{name: "empty local", in: "@example.com", reason: "has nothing before the '@'"},
		{name: "local 65", in: strings.Repeat("b", 65) + "@example.com", reason: "has a local part of 65 characters; at most 64 are allowed"},
		{name: "leading dot", in: ".bob@example.com", reason: "has a dot at the start or end"},
		{name: "trailing dot", in: "bob.@example.com", reason: "has a dot at the start or end"},
		{name: "double dot", in: "bo..b@example.com", reason: "two dots in a row"},
		{name: "backslash", in: `bo\b@example.com`, reason: `contains '\' at position 3`},
		{name: "comma", in: "bo,b@example.com", reason: "contains ',' at position 3"},
		{name: "semicolon", in: "bob;@example.com", reason: "contains ';' at position 4"},

		// Domain.
		{name: "empty domain", in: "bob@", reason: "has nothing after the '@'"},
		{name: "domain literal", in: "bob@[192.0.2.1]", reason: "has a domain literal"},
		{name: "single label", in: "bob@localhost", reason: `has the domain "localhost" without a dot`},
		{name: "domain leading dot", in: "bob@.example.com", reason: "has an empty label in its domain"},
		{name: "domain trailing dot", in: "bob@example.com.", reason: "has an empty label in its domain"},
		{name: "domain double dot", in: "bob@example..com", reason: "has an empty label in its domain"},
		{name: "label 64", in: "a@" + long63 + "a.com", reason: "has a domain label of 64 characters; at most 63 are allowed"},
		{name: "label leading hyphen", in: "a@-example.com", reason: `has a domain label "-example" that starts or ends with '-'`},
		{name: "label trailing hyphen", in: "a@example-.com", reason: "starts or ends with '-'"},
		{name: "underscore in domain", in: "a@ex_ample.com", reason: "contains '_' at position 5; a domain has only letters, digits, '-' and dots"},
		{name: "bad char second label", in: "a@example.c!m", reason: "contains '!' at position 12"},
		{name: "numeric TLD", in: "a@192.0.2.1", reason: `has a top-level domain "1" that is all digits`},

		// Non-ASCII: IDN and look-alikes are refused.
		{name: "Cyrillic a in local", in: "p\u0430yments@acme.example", reason: "contains the non-ASCII character U+0430 at position 2; look-alike characters are refused, type the address in plain ASCII"},
		{name: "Cyrillic a in domain", in: "ap@\u0430cme.example", reason: "U+0430 at position 4"},
		{name: "Greek omicron", in: "ap@g\u03bfogle.com", reason: "U+03BF at position 5"},
		{name: "IDN", in: "ap@m\u00fcller.de", reason: "U+00FC at position 5"},
		{name: "full-width at", in: "ap\uff20acme.example", reason: "U+FF20 at position 3"},
		{name: "full-width digit", in: "ap1\uff12@acme.example", reason: "U+FF12 at position 4"},
		{name: "NBSP trailing", in: "ap@acme.example\u00a0", reason: "U+00A0 (no-break space) at position 16"},
		{name: "zero-width space", in: "ap@ac\u200bme.example", reason: "U+200B (zero-width space) at position 6"},
		{name: "tab", in: "\tap@acme.example", reason: "U+0009 (tab) at position 1"},
		{name: "newline header injection", in: "ap@acme.example\nBcc: x@evil.example", reason: "U+000A (line feed) at position 16"},
		{name: "invalid UTF-8", in: "ap@acme.example\xc0", reason: "byte 0xC0"},
	})
}
