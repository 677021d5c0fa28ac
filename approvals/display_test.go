package approvals

import (
	"testing"

	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/receipt"
)

func TestDisplayValue(t *testing.T) {
	for in, want := range map[string]string{
		"DE89370400440532013000":      "DE89 3704 0044 0532 0130 00",
		"GB29NWBK60161331926819":      "GB29 NWBK 6016 1331 9268 19",
		"DE89 3704 0044 0532 0130 00": "DE89 3704 0044 0532 0130 00", // not electronic: as it is
		"DE89370400440532013001":      "DE89370400440532013001",      // bad check digits: never dressed up
		"V-0042":                      "V-0042",
		"":                            "",
	} {
		if got := displayValue(in); got != want {
			t.Errorf("displayValue(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestSameSpelling(t *testing.T) {
	const iban = "DE89370400440532013000"
	for sent, want := range map[string]bool{
		iban:                            true,
		"DE89 3704 0044 0532 0130 00":   true,
		"de89 3704 0044 0532 0130 00":   true,
		"DE89\u00a03704004405320130 00": true,  // a no-break space is spacing
		"DE89 3704 0044 0532 0130 01":   false, // another account
		"DE89 37O4 0044 0532 0130 00":   false, // a letter O for a zero
		"DE89\u200b370400440532013000":  false, // a zero-width space
		"":                              false,
	} {
		if got := sameSpelling(sent, iban); got != want {
			t.Errorf("sameSpelling(%q) = %v, want %v", sent, got, want)
		}
	}
	if sameSpelling("ACME Supplies", "V-0042") || !sameSpelling("V-0042", "V-0042") {
		t.Error("a non-IBAN is compared exactly")
	}
}

func TestNameOf(t *testing.T) {
	r := &request{facts: map[string]intent.Value{
		"vendor_name": intent.Str("ACME Supplies GmbH"), "bill_ref": intent.Str("INV-2290"),
		"payee_name": intent.Int(3), // not a string: not a name
	}}
	for param, want := range map[string]string{"vendor": "ACME Supplies GmbH", "bill": "INV-2290", "payee": "", "iban": ""} {
		if got := r.nameOf(param); got != want {
			t.Errorf("nameOf(%q) = %q, want %q", param, got, want)
		}
	}
}

func TestVisible(t *testing.T) {
	for in, want := range map[string]string{
		"ACME Supplies GmbH":             "ACME Supplies GmbH",
		"Müller 株式会社 Ελλάς":              "Müller 株式会社 Ελλάς", // other scripts are shown as they are
		"\u202egnp.exe":                  "[U+202E]gnp.exe",
		"a\u200bb\u200cc\u200dd\u200e":   "a[U+200B]b[U+200C]c[U+200D]d[U+200E]",
		"\u202a\u202b\u202c\u202d\u200f": "[U+202A][U+202B][U+202C][U+202D][U+200F]",
		"\u2066x\u2067y\u2068z\u2069":    "[U+2066]x[U+2067]y[U+2068]z[U+2069]",
		"\ufeffsoft\u00adhyphen":         "[U+FEFF]soft[U+00AD]hyphen",
		"tab\tline\nend\r\x00\x7f":       "tab[U+0009]line[U+000A]end[U+000D][U+0000][U+007F]",
		"c1\u0085\u009b":                 "c1[U+0085][U+009B]",
		"sep\u2028par\u2029":             "sep[U+2028]par[U+2029]",
		"tag\U000E0041":                  "tag[U+E0041]",
		"filler\u3164vs\ufe0f":           "filler[U+3164]vs[U+FE0F]",
		"bad\xffbyte":                    "bad[0xFF]byte",
		"[U+202E]":                       "[U+202E]", // already visible: unchanged
		"":                               "",
	} {
		if got := visible(in); got != want {
			t.Errorf("visible(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestPayeeText(t *testing.T) {
	resolved := func(param, sent, value string) intent.Resolved {
		return intent.Resolved{Param: param, Sent: sent, Value: value, Provenance: intent.Provenance{Source: "registry:vendors"}}
	}
	for _, c := range []struct {
		name string
		r    receipt.Receipt
		ro   ArgRoles
		want string
	}{{
		name: "executed: the name on file and the id",
		r: receipt.Receipt{
			Args:     intent.Args{"vendor": intent.Str("V-0042"), "iban": intent.Str("DE89370400440532013000")},
			Resolved: []intent.Resolved{resolved("vendor", "ACME", "V-0042"), resolved("iban", "DE89 3704", "DE89370400440532013000")},
			Facts:    map[string]intent.Value{"vendor_name": intent.Str("ACME Supplies GmbH")},
		},
		want: "ACME Supplies GmbH (V-0042)",
	}, {
		name: "refused before resolution: the agent's text, labelled",
		r:    receipt.Receipt{Args: intent.Args{"vendor": intent.Str("ACME Supplies"), "iban": intent.Str("GB54MIDL40000000000000")}},
		want: `as sent: "ACME Supplies", "GB54MIDL40000000000000"`,
	}, {
		name: "an IBAN resolved alone is grouped",
		r: receipt.Receipt{
			Args:     intent.Args{"iban": intent.Str("DE89370400440532013000")},
			Resolved: []intent.Resolved{resolved("iban", "de89 3704", "DE89370400440532013000")},
		},
		want: "DE89 3704 0044 0532 0130 00",
	}, {
		name: "an argument the receipt does not list as resolved stays the agent's",
		r: receipt.Receipt{
			Args:     intent.Args{"vendor": intent.Str("V-0042"), "recipient": intent.Str(`Bob", "V-1`)},
			Resolved: []intent.Resolved{resolved("vendor", "ACME", "V-0042")},
			Facts:    map[string]intent.Value{"vendor_name": intent.Str("ACME Supplies GmbH")},
		},
		want: `ACME Supplies GmbH (V-0042); as sent: "Bob\", \"V-1"`,
	}, {
		name: "a name on file with invisible characters",
		r: receipt.Receipt{
			Args:     intent.Args{"vendor": intent.Str("V-0042")},
			Resolved: []intent.Resolved{resolved("vendor", "ACME", "V-0042")},
			Facts:    map[string]intent.Value{"vendor_name": intent.Str("ACME\u202eHbmG")},
		},
		want: "ACME[U+202E]HbmG (V-0042)",
	}, {
		name: "nothing names a payee",
		r:    receipt.Receipt{Args: intent.Args{"amount": intent.AmountValue(100, 2)}},
		want: "",
	}, {
		name: "a proxied tool's payee argument, named by its roles",
		r: receipt.Receipt{
			Args:     intent.Args{"recipient_iban": intent.Str("DE89370400440532013000"), "reference": intent.Str("INV-1")},
			Resolved: []intent.Resolved{resolved("recipient_iban", "de89 3704", "DE89370400440532013000")},
		},
		ro:   ArgRoles{Payee: []string{"recipient_iban"}},
		want: "DE89 3704 0044 0532 0130 00",
	}} {
		if got := payeeText(c.r, c.ro); got != c.want {
			t.Errorf("%s: payeeText = %q, want %q", c.name, got, c.want)
		}
	}
}

// TestAmountsTextWithRoles: a proxied payment tool's amount is shown in
// the currency its roles give (the mandate's budget, or the argument or
// fact they name), the amount the roles name first.
func TestAmountsTextWithRoles(t *testing.T) {
	r := receipt.Receipt{
		Args:  intent.Args{"fee": intent.AmountValue(150, 2), "sum": intent.AmountValue(240000, 2), "ccy": intent.Str("USD")},
		Facts: map[string]intent.Value{"paid_in": intent.Str("GBP")},
	}
	for _, c := range []struct {
		ro   ArgRoles
		want string
	}{
		{ArgRoles{Amount: "sum", Currency: "EUR"}, "2,400.00 EUR; fee 1.50 EUR"},
		{ArgRoles{Amount: "sum", CurrencyFrom: "ccy", Currency: "EUR"}, "2,400.00 USD; fee 1.50 USD"},
		{ArgRoles{Amount: "sum", CurrencyFrom: "paid_in"}, "2,400.00 GBP; fee 1.50 GBP"},
		{ArgRoles{}, "1.50; sum 2,400.00"}, // no roles: the first by name, no currency known
	} {
		if got := amountsText(r, c.ro); got != c.want {
			t.Errorf("roles %+v: amountsText = %q, want %q", c.ro, amountsText(r, c.ro), c.want)
		}
	}
	// A receipt without the fact its roles name (an ap.pay_bill refused
	// before its facts were read, an approval's receipt): the currency
	// argument, when it is one (found by a new user: "1,180.00" alone).
	early := receipt.Receipt{Args: intent.Args{"amount": intent.AmountValue(118000, 2), "currency": intent.Str("EUR")}}
	for _, c := range []struct {
		r    receipt.Receipt
		want string
	}{
		{early, "1,180.00 EUR"},
		{receipt.Receipt{Args: intent.Args{"amount": intent.AmountValue(118000, 2), "currency": intent.Str("eur!")}}, "1,180.00"},
		{receipt.Receipt{Args: early.Args, Facts: map[string]intent.Value{"bill_currency": intent.Str("USD")}}, "1,180.00 USD"},
	} {
		if got := amountsText(c.r, ArgRoles{Amount: "amount", CurrencyFrom: "bill_currency"}); got != c.want {
			t.Errorf("%+v: amountsText = %q, want %q", c.r.Args, got, c.want)
		}
	}
}
