package ap

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/intentplane/intentplane/core/normalize"
	"github.com/intentplane/intentplane/erp"
	"github.com/intentplane/intentplane/internal/proptest"
)

// TestAccountSpellingsProperty (issue 24): every way people write one
// IBAN in an ERP's account number (a prefix "IBAN", "IBAN:", in any case;
// groups separated by spaces, no-break, narrow no-break or thin spaces,
// hyphens; any case; padding) keys to that IBAN under keyOf, whichever
// sanitization the ERP applied (erp.Sanitize, or Odoo's Python \W), and
// the pack's lookup numbers (sanitizedNumbers) find it. A character
// changed keys elsewhere or nowhere; a look-alike or invisible character
// makes the account unusable, never another key.
func TestAccountSpellingsProperty(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(24, 2026))
	prefixes := []string{"", "", "IBAN ", "IBAN:", "IBAN: ", "iban ", "Iban: ", "IBAN\u00a0", "IBAN : "}
	seps := []string{"", " ", "\u00a0", "\u202f", "\u2009", "-", "  ", " \u00a0"}
	pads := []string{"", " ", "\u00a0", "  "}
	lookAlikes := []string{"\u200b", "\u0410", "\uff10", "\u00ad", "\t", "_", "\u2010"}
	for n := range 20000 {
		iban := proptest.MakeIBAN(r, proptest.Countries[r.IntN(len(proptest.Countries))])
		body := iban
		switch r.IntN(3) {
		case 0:
			body = strings.ToLower(body)
		case 1:
			b := []byte(body)
			for i := range b {
				if r.IntN(2) == 0 && 'A' <= b[i] && b[i] <= 'Z' {
					b[i] += 'a' - 'A'
				}
			}
			body = string(b)
		}
		var grouped strings.Builder
		sep := seps[r.IntN(len(seps))]
		for i := 0; i < len(body); i += 4 {
			if i > 0 {
				grouped.WriteString(sep)
			}
			grouped.WriteString(body[i:min(i+4, len(body))])
		}
		s := pads[r.IntN(len(pads))] + prefixes[r.IntN(len(prefixes))] + grouped.String() + pads[r.IntN(len(pads))]
		if got, err := normalize.IBAN(s); err != nil || got != iban {
			t.Fatalf("case %d: normalize.IBAN(%q) = %q, %v; want %q", n, s, got, err, iban)
		}
		for _, sanitized := range []string{erp.Sanitize(s), pythonSanitize(s)} {
			if k, ok := keyOf(erp.BankAccount{Number: s, Sanitized: sanitized}); !ok || k != iban {
				t.Fatalf("case %d: %q (sanitized %q) keys to %q, %v; want %q", n, s, sanitized, k, ok, iban)
			}
			if !slices.Contains(sanitizedNumbers(iban), sanitized) {
				t.Fatalf("case %d: %q is stored as %q, which the lookup of %q (%q) misses", n, s, sanitized, iban, sanitizedNumbers(iban))
			}
		}
		// One character of the number changed: another key or none.
		i := 4 + r.IntN(len(iban)-4)
		c := byte('0' + r.IntN(10))
		if c == iban[i] {
			c = 'A' + byte(r.IntN(26))
		}
		changed := iban[:i] + string(c) + iban[i+1:]
		if k, ok := keyOf(erp.BankAccount{Number: changed, Sanitized: erp.Sanitize(changed)}); ok && k == iban {
			t.Fatalf("case %d: %q, one character off, keys to %q", n, changed, iban)
		}
		// A look-alike or invisible character inside: unusable.
		j := 1 + r.IntN(len(iban)-1)
		odd := iban[:j] + lookAlikes[r.IntN(len(lookAlikes))] + iban[j:]
		for _, sanitized := range []string{erp.Sanitize(odd), pythonSanitize(odd)} {
			if k, ok := keyOf(erp.BankAccount{Number: odd, Sanitized: sanitized}); ok {
				t.Fatalf("case %d: %q (sanitized %q) keys to %q; want unusable", n, odd, sanitized, k)
			}
		}
	}
}

// pythonSanitize is Odoo's sanitize_account_number: every run of
// Python's Unicode \W removed, then upper-cased (letters, digits and the
// underscore are kept). Only the simple case mappings matter here.
func pythonSanitize(s string) string {
	var b strings.Builder
	for _, r := range s {
		if unicode.IsLetter(r) || unicode.IsNumber(r) || r == '_' {
			b.WriteRune(unicode.ToUpper(r))
		}
	}
	return b.String()
}
