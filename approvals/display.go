package approvals

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/normalize"
)

// displayValue returns a trusted value as the page shows it: an IBAN in
// groups of four ("DE89 3704 0044 0532 0130 00"), anything else as it is.
// Only a value already in electronic format is grouped, so that the
// display never hides a character the value holds.
func displayValue(v string) string {
	if e, err := normalize.IBAN(v); err == nil && e == v {
		return normalize.FormatIBAN(v)
	}
	return v
}

// sameSpelling reports whether the agent's spelling sent names the trusted
// value: equal, or the same IBAN once both are normalized (spacing and
// letter case only; a look-alike or invisible character still differs, as
// normalize.IBAN refuses it).
func sameSpelling(sent, value string) bool {
	if sent == value {
		return true
	}
	a, err := normalize.IBAN(sent)
	if err != nil {
		return false
	}
	b, err := normalize.IBAN(value)
	return err == nil && a == b
}

// asked reports whether the agent, sending sent, asked for the record
// whose value that executes is value and whose names on file are names:
// its spelling names the value (sameSpelling), or is one of the names,
// ignoring the case of ASCII letters and runs of spaces. An id in front of
// a name on file is no difference; a look-alike or invisible character is
// (only ASCII letters fold: the Kelvin sign is not a K).
func asked(sent, value string, names []string) bool {
	if sameSpelling(sent, value) {
		return true
	}
	s := strings.Join(strings.Fields(sent), " ")
	for _, n := range names {
		if n != "" && asciiFold(s) == asciiFold(strings.Join(strings.Fields(n), " ")) {
			return true
		}
	}
	return false
}

// asciiFold returns s with its ASCII capitals in lower case, and nothing
// else changed.
func asciiFold(s string) string {
	return strings.Map(func(r rune) rune {
		if 'A' <= r && r <= 'Z' {
			return r + 'a' - 'A'
		}
		return r
	}, s)
}

// nameFacts are the facts that name a critical argument's record, by
// parameter, in the order looked for: the page shows the first present
// next to the internal id that executes.
var nameFacts = map[string][]string{
	"vendor":      {"vendor_name"},
	"bill":        {"bill_ref", "bill_name"},
	"beneficiary": {"beneficiary_name"},
}

// nameOf returns the name on file of param's record from the request's
// facts ("<param>_name", or the names nameFacts lists), or "".
func (r *request) nameOf(param string) string {
	keys := nameFacts[param]
	if keys == nil {
		keys = []string{param + "_name"}
	}
	for _, k := range keys {
		if v, ok := r.facts[k]; ok && v.Kind == intent.KindString && v.Str != "" {
			return v.Str
		}
	}
	return ""
}

// visible returns s with every character an auditor could not see, or that
// could reorder or hide the text around it, replaced by its code point in
// brackets ("[U+202E]"), and each byte of invalid UTF-8 by its value
// ("[0xFF]"): C0 and C1 controls (tab and line breaks too), format
// characters (category Cf: bidirectional controls U+202A-U+202E and
// U+2066-U+2069, zero-width U+200B-U+200F, the soft hyphen, the byte order
// mark, tags), the line and paragraph separators, and the other default
// ignorable characters (variation selectors, Hangul fillers). Letters of
// any script, spaces and symbols are kept; the result has none of the
// replaced characters, so visible(visible(s)) == visible(s).
func visible(s string) string {
	i := strings.IndexFunc(s, hidden)
	if i < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	b.WriteString(s[:i])
	for j, r := range s[i:] {
		switch {
		case r == utf8.RuneError && !strings.HasPrefix(s[i+j:], "\uFFFD"):
			fmt.Fprintf(&b, "[0x%02X]", s[i+j])
		case hidden(r):
			fmt.Fprintf(&b, "[U+%04X]", r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// hidden reports whether visible replaces r.
func hidden(r rune) bool {
	return r == utf8.RuneError || unicode.In(r, unicode.Cc, unicode.Cf, unicode.Zl, unicode.Zp,
		unicode.Variation_Selector, unicode.Other_Default_Ignorable_Code_Point)
}
