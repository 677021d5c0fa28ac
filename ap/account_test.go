package ap_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/intentplane/intentplane/ap"
	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/normalize"
	"github.com/intentplane/intentplane/erp"
)

// TestAccountKey: the "iban" parameter takes an IBAN in any spelling, or
// a national account as a typed key, and returns the canonical key.
func TestAccountKey(t *testing.T) {
	t.Parallel()
	good := map[string]string{
		"DE89 3704 0044 0532 0130 00":    "DE89370400440532013000",
		"IBAN: de89370400440532013000":   "DE89370400440532013000",
		"ABA:021000021:1234567890":       "ABA:021000021:1234567890",
		"ABA:021-000-021:12345 67890":    "ABA:021000021:1234567890",
		"SORTCODE:60-16-13:31926819":     "SORTCODE:601613:31926819",
		"BIC:COBADEFFXXX:0532013000":     "BIC:COBADEFF:0532013000",
		"BIC:cobadeff:0532 0130 00":      "BIC:COBADEFF:0532013000",
		"BIC:BOTKJPJT:1234567":           "BIC:BOTKJPJT:1234567",
		"SORTCODE:601613:60161331926819": "SORTCODE:601613:31926819",
		"ABA:021000021:000012345":        "ABA:021000021:000012345",
		"BIC:HSBCHKHH:123-456789-001":    "BIC:HSBCHKHH:123456789001",
		"ABA:021000021:1234567890 ":      "ABA:021000021:1234567890",
		"SORTCODE:601613:3192 6819":      "SORTCODE:601613:31926819",
		"ABA: 021000021 : 1234567890":    "ABA:021000021:1234567890",
		"BIC:BNPAFRPP:0001234567":        "BIC:BNPAFRPP:0001234567",
		"GB29 NWBK 6016 1331 9268 19":    "GB29NWBK60161331926819",
		"BIC:CHASUS33:1234567890":        "BIC:CHASUS33:1234567890",
		"SORTCODE:20-00-00:55779911":     "SORTCODE:200000:55779911",
		"ABA:026009593:0000123456789":    "ABA:026009593:0000123456789",
		"BIC:ROYCCAT2:12345-003-1234567": "BIC:ROYCCAT2:123450031234567",
		"BIC:ANZBAU3M:013-006 12345678":  "BIC:ANZBAU3M:01300612345678",
	}
	for in, want := range good {
		got, err := ap.AccountKey(in)
		if err != nil || got != want {
			t.Errorf("AccountKey(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{
		"",
		"ABA:021000022:1234567890",      // routing number check digit
		"ABA:０21000021:1234567890",      // full-width digit
		"ABA:021000021:12345678９0",      // full-width digit in the number
		"ABA:021000021:1234567O90",      // a letter O for a zero
		"SORTCODE:601613:3192681",       // 7 digits
		"SORTCODE:6O1613:31926819",      // letter O
		"BIC:COBADEFF",                  // no number
		"BIC:СOBADEFF:0532013000",       // Cyrillic С
		"BIC:COBADEFF:0532\u200b013000", // zero-width space
		"BIC:COBADEFF:DE89370400440532013000x",
		"ACCT:021000021:1234567890",
		"DE00370400440532013000",
		"BIC:DE89370400440532013000:1234",
	} {
		if got, err := ap.AccountKey(in); err == nil {
			t.Errorf("AccountKey(%q) = %q; want an error", in, got)
		}
	}
}

// TestPayNationalAccounts: vendors paid in the US (ABA routing number and
// account), the UK (sort code and account, either in the bank's code or
// typed in the number) and elsewhere by a national account at a BIC, as
// Odoo keeps them: acc_number, bank_id.bic and the holder's country. Each
// pays to the account on file, given as ap.get_vendor shows it; the same
// account number at another bank, a look-alike typed in the ERP and a key
// of another type are refused.
func TestPayNationalAccounts(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name           string
		number, bic, c string
		key            string
	}{
		{"US", "1234567890", "021000021", "US", "ABA:021000021:1234567890"},
		{"UK sort code at the bank", "31926819", "601613", "GB", "SORTCODE:601613:31926819"},
		{"UK sort code in the number", "60-16-13 31926819", "", "GB", "SORTCODE:601613:31926819"},
		{"UK sort code in the number with a BIC", "601613 31926819", "NWBKGB2L", "GB", "SORTCODE:601613:31926819"},
		{"Japan at a BIC", "1234567", "BOTKJPJT", "JP", "BIC:BOTKJPJT:1234567"},
		{"Canada at a BIC, hyphens", "12345-003-1234567", "ROYCCAT2", "CA", "BIC:ROYCCAT2:123450031234567"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			ctx := t.Context()
			v, err := e.erp.AddVendor(ctx, ap.DemoCompany, erp.Vendor{Name: "Far Away Ltd", Phone: "+1 212 555 0100", Active: true})
			if err != nil {
				t.Fatal(err)
			}
			a, err := e.erp.AddBankAccount(ctx, ap.DemoCompany, erp.BankAccount{Vendor: v.ID, Number: tt.number, BIC: tt.bic, Country: tt.c,
				Trusted: true, Active: true, SetAt: t0.AddDate(-1, 0, 0)})
			if err != nil {
				t.Fatal(err)
			}
			_, err = e.erp.AddBill(ctx, ap.DemoCompany, erp.Bill{Name: "BILL/2026/11/0077", Ref: "FA-1", Vendor: v.ID, Currency: "EUR", Total: 50000})
			if err != nil {
				t.Fatal(err)
			}
			e.paidBefore(ap.DemoCompany, "Far Away Ltd")
			tok := e.mandate("m-national", ap.DemoCompany, "EUR")

			g := e.decide(tok, ap.ActionGetVendor, map[string]any{"vendor": "Far Away Ltd"})
			if !g.Executed {
				t.Fatalf("get_vendor: %s %s", code(g), message(g))
			}
			var shown struct {
				Account struct {
					IBAN string `json:"iban"`
				} `json:"current_account"`
			}
			if err := json.Unmarshal([]byte(g.Output), &shown); err != nil || shown.Account.IBAN != tt.key {
				t.Fatalf("get_vendor shows %s (%v); want the account %s", []byte(g.Output), err, tt.key)
			}

			// Refused: the same number at another bank, another type.
			others := []string{"ABA:026009593:" + strings.Split(tt.key, ":")[len(strings.Split(tt.key, ":"))-1], "BIC:DEUTDEFF:31926819"}
			for _, o := range others {
				if k, err := ap.AccountKey(o); err != nil || k == tt.key {
					continue
				}
				d := e.decide(tok, ap.ActionPayBill, pay("Far Away Ltd", "FA-1", o, "100.00"))
				if d.Executed || code(d) != intent.CodeNotTrusted {
					t.Errorf("pay to %s: executed %v, %s %s; want no match", o, d.Executed, code(d), message(d))
				}
			}

			d := e.decide(tok, ap.ActionPayBill, pay("Far Away Ltd", "FA-1", tt.key, "100.00"))
			if !d.Executed {
				t.Fatalf("pay to %s: %s %s %s; want executed", tt.key, d.Verdict, code(d), message(d))
			}
			if got := d.Operation.Args["iban"].Str; got != tt.key {
				t.Errorf("executed to %q; want %q", got, tt.key)
			}
			ps := e.payments(ap.DemoCompany)
			if len(ps) != 1 || ps[0].BankAccount != a.ID || ps[0].Amount.Amount != 10000 {
				t.Fatalf("payments %+v; want one of 100.00 to bank account %s", ps, a.ID)
			}
			var paid struct {
				PaidTo string `json:"paid_to"`
			}
			if err := json.Unmarshal([]byte(d.Output), &paid); err != nil || paid.PaidTo != tt.key {
				t.Errorf("receipt paid_to %q (%v); want %q", paid.PaidTo, err, tt.key)
			}
		})
	}
}

// TestNationalAccountLookAlikeInERP: an account whose number or bank code
// was typed in the ERP with look-alikes (a full-width digit, which Odoo's
// sanitized number would not drop; a Cyrillic letter in the BIC) never
// matches, and the refusal names it as unusable.
func TestNationalAccountLookAlikeInERP(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ number, bic, country, key string }{
		{"12345678\u200b90", "021000021", "US", "ABA:021000021:1234567890"},
		{"0532013000", "\u0421OBADEFF", "DE", "BIC:COBADEFF:0532013000"},
		{"1234567890", "021000021", "CA", "ABA:021000021:1234567890"}, // a routing number for a Canadian holder
	} {
		e := newEnv(t)
		ctx := t.Context()
		v, err := e.erp.AddVendor(ctx, ap.DemoCompany, erp.Vendor{Name: "Odd Bank Ltd", Active: true})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.erp.AddBankAccount(ctx, ap.DemoCompany, erp.BankAccount{Vendor: v.ID, Number: tt.number, BIC: tt.bic, Country: tt.country,
			Trusted: true, Active: true, SetAt: t0.AddDate(-1, 0, 0)}); err != nil {
			t.Fatal(err)
		}
		if _, err := e.erp.AddBill(ctx, ap.DemoCompany, erp.Bill{Name: "BILL/2026/11/0078", Ref: "OB-1", Vendor: v.ID, Currency: "EUR", Total: 50000}); err != nil {
			t.Fatal(err)
		}
		tok := e.mandate("m-odd", ap.DemoCompany, "EUR")
		d := e.decide(tok, ap.ActionPayBill, pay("Odd Bank Ltd", "OB-1", tt.key, "100.00"))
		if d.Executed || !strings.Contains(message(d), "unusable") {
			t.Errorf("%+v: executed %v, %s %s; want refused as unusable", tt, d.Executed, code(d), message(d))
		}
	}
}

// TestBareNationalAccount (issue 24): a national account number without
// its bank, sent by the agent or on file, is refused with what to send
// (the three account key forms) or what the accounting team must add in
// the ERP (the bank's code), never "must start with a two-letter country
// code".
func TestBareNationalAccount(t *testing.T) {
	t.Parallel()
	for _, in := range []string{"0532013000", "0532 0130 00", "12345-003-1234567", "31926819", "US122000000121212121212"} {
		_, err := ap.AccountKey(in)
		if err == nil || !errors.Is(err, normalize.ErrNoBank) || !strings.Contains(err.Error(), "BIC:<bank's BIC>:<account number>") ||
			!strings.Contains(err.Error(), "ABA:<routing number>") || strings.Contains(err.Error(), "country code") {
			t.Errorf("AccountKey(%q): %v; want what to send", in, err)
		}
	}
	// An invalid IBAN stays an IBAN error.
	if _, err := ap.AccountKey("DE89 3704 0044 0532 0130 01"); err == nil || errors.Is(err, normalize.ErrNoBank) {
		t.Errorf("a mistyped IBAN: %v; want the IBAN's error", err)
	}

	e := newEnv(t)
	ctx := t.Context()
	v, err := e.erp.AddVendor(ctx, ap.DemoCompany, erp.Vendor{Name: "Bare Number GmbH", Phone: "+49 30 1234567", Active: true, Country: "DE"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.erp.AddBankAccount(ctx, ap.DemoCompany, erp.BankAccount{Vendor: v.ID, Number: "0532013000", Country: "DE",
		Trusted: true, Active: true, SetAt: t0.AddDate(-1, 0, 0)}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.erp.AddBill(ctx, ap.DemoCompany, erp.Bill{Name: "BILL/2026/11/0079", Ref: "BN-1", Vendor: v.ID, Currency: "EUR", Total: 50000}); err != nil {
		t.Fatal(err)
	}
	tok := e.mandate("m-bare", ap.DemoCompany, "EUR")
	g := e.decide(tok, ap.ActionGetVendor, map[string]any{"vendor": "Bare Number GmbH"})
	if !g.Executed || !strings.Contains(g.Output, "without its bank's code") || !strings.Contains(g.Output, "adds the bank on the account in the ERP") {
		t.Errorf("get_vendor of a vendor whose account has no bank: %s %s", g.Output, message(g))
	}
	d := e.decide(tok, ap.ActionPayBill, pay("Bare Number GmbH", "BN-1", "0532013000", "100.00"))
	if d.Executed || code(d) != intent.CodeBadArgument || !strings.Contains(message(d), "SORTCODE:<sort code>:<account number>") {
		t.Errorf("pay to a bare number: executed %v, %s %s; want what to send", d.Executed, code(d), message(d))
	}
	d = e.decide(tok, ap.ActionPayBill, pay("Bare Number GmbH", "BN-1", "BIC:COBADEFF:0532013000", "100.00"))
	if d.Executed || !strings.Contains(message(d), "by its number alone") || !strings.Contains(message(d), "without its bank's code") {
		t.Errorf("pay to the number at a BIC the ERP does not hold: executed %v, %s %s; want the account on file named as lacking its bank", d.Executed, code(d), message(d))
	}
}
