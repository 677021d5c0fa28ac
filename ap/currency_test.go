package ap_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/intentplane/intentplane/ap"
	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/mandate"
	"github.com/intentplane/intentplane/erp"
)

// TestCurrencyExponents (issue 24; it replaces the security review's
// refusal of every currency without two decimals, which read ¥1,000,000
// as "10000.00 JPY"): bills in JPY (no decimals) and KWD (three) are
// paid at their own minor unit, against a budget in their currency, and
// shown with it. An amount with more decimals than the currency has, an
// amount given in another currency than the bill's, and a bill in a code
// that is not ISO 4217 are refused; a ¥100 payment fits a ¥500 budget.
func TestCurrencyExponents(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		currency, rate     string        // units of the currency per EUR
		total              intent.Amount // minor units
		pay, left, tooFine string
	}{
		{"JPY", "160", 80000, "50000", "30000", "50000.5"},
		{"KWD", "0.33", 100000, "60.250", "39.750", "60.2505"},
		{"EUR", "1", 50000, "300.00", "200.00", "300.005"},
	} {
		t.Run(tc.currency, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			ctx := t.Context()
			if tc.currency != "EUR" {
				if err := e.erp.SetRate(ctx, ap.DemoCompany, tc.currency, "2026-11-01", tc.rate); err != nil {
					t.Fatal(err)
				}
			}
			acme := e.vendor(ap.DemoCompany, ap.DemoVendor)
			if _, err := e.erp.AddBill(ctx, ap.DemoCompany, erp.Bill{Ref: "INV-9000", Vendor: acme.ID, Currency: tc.currency, Total: tc.total}); err != nil {
				t.Fatal(err)
			}
			tok := e.mandate("m-"+tc.currency, ap.DemoCompany, tc.currency)
			args := pay(ap.DemoVendor, "INV-9000", ap.DemoIBAN, tc.tooFine)
			args["currency"] = tc.currency
			if d := e.decide(tok, ap.ActionPayBill, args); d.Executed || code(d) != intent.CodeBadArgument || !strings.Contains(message(d), "decimals") {
				t.Errorf("%s %s: %s %s %s; want more decimals than the currency has refused", tc.tooFine, tc.currency, d.Verdict, code(d), message(d))
			}
			if tc.currency != "EUR" {
				args = pay(ap.DemoVendor, "INV-9000", ap.DemoIBAN, "300.00") // EUR
				d := e.decide(tok, ap.ActionPayBill, args)
				if d.Executed || code(d) != intent.CodeBadArgument || !strings.Contains(message(d), "was given in EUR, but this operation pays in "+tc.currency) {
					t.Errorf("a %s bill paid in EUR: %s %s %s", tc.currency, d.Verdict, code(d), message(d))
				}
			}
			args = pay(ap.DemoVendor, "INV-9000", ap.DemoIBAN, tc.pay)
			args["currency"] = tc.currency
			d := e.decide(tok, ap.ActionPayBill, args)
			if d.Verdict == intent.StepUp {
				d = e.decide(tok, ap.ActionPayBill, args, e.approve("alice", d))
			}
			if !d.Executed {
				t.Fatalf("%s %s: %s %s %s", tc.pay, tc.currency, d.Verdict, code(d), message(d))
			}
			want, _ := intent.ParseMoney(tc.currency + " " + tc.pay)
			ps := e.payments(ap.DemoCompany)
			if len(ps) != 1 || ps[0].Amount != want {
				t.Fatalf("payments %+v; want one of %v", ps, want)
			}
			var out struct{ Amount, Currency, Residual string }
			if err := json.Unmarshal([]byte(d.Output), &out); err != nil || out.Amount != tc.pay || out.Currency != tc.currency || out.Residual != tc.left {
				t.Errorf("payment output %s (%v); want %s %s paid, %s left", d.Output, err, tc.pay, tc.currency, tc.left)
			}
			l := e.decide(tok, ap.ActionListOpenBills, map[string]any{})
			if !strings.Contains(l.Output, `"residual":"`+tc.left+`"`) {
				t.Errorf("list_open_bills: %s; want the residual %s", l.Output, tc.left)
			}
		})
	}
	// A ¥100 payment under a ¥500 budget: counted in yen.
	e := newEnv(t)
	ctx := t.Context()
	if err := e.erp.SetRate(ctx, ap.DemoCompany, "JPY", "2026-11-01", "160"); err != nil {
		t.Fatal(err)
	}
	acme := e.vendor(ap.DemoCompany, ap.DemoVendor)
	if _, err := e.erp.AddBill(ctx, ap.DemoCompany, erp.Bill{Ref: "INV-9100", Vendor: acme.ID, Currency: "JPY", Total: 1000}); err != nil {
		t.Fatal(err)
	}
	tok, err := mandate.Issue(mandate.Mandate{
		ID: "m-yen", Audience: audience, Owner: ap.DemoCompany, Scope: allActions,
		Budget: intent.Money{Currency: "JPY", Amount: 500}, Mode: mandate.ModeKnownCounterparties,
		NotBefore: t0.Add(-time.Minute), Expiry: t0.Add(24 * time.Hour),
	}, issuer, issuerKey)
	if err != nil {
		t.Fatal(err)
	}
	args := pay(ap.DemoVendor, "INV-9100", ap.DemoIBAN, "100")
	args["currency"] = "JPY"
	if d := e.decide(tok, ap.ActionPayBill, args); !d.Executed && d.Verdict != intent.StepUp {
		t.Errorf("¥100 under a ¥500 budget: %s %s %s", d.Verdict, code(d), message(d))
	}
	args = pay(ap.DemoVendor, "INV-9100", ap.DemoIBAN, "600")
	args["currency"] = "JPY"
	if d := e.decide(tok, ap.ActionPayBill, args); d.Executed || code(d) != intent.CodeBudgetExceeded || !strings.Contains(message(d), "600 JPY") {
		t.Errorf("¥600 under a ¥500 budget: %s %s %s; want the budget exceeded, in yen", d.Verdict, code(d), message(d))
	}
	// A bill in a code that is not ISO 4217 is not paid, whatever is sent.
	if _, err := e.erp.AddBill(ctx, ap.DemoCompany, erp.Bill{Ref: "INV-9200", Vendor: acme.ID, Currency: "XTS", Total: 1000}); err != nil {
		t.Fatal(err)
	}
	args = pay(ap.DemoVendor, "INV-9200", ap.DemoIBAN, "10.00")
	args["currency"] = "XTS"
	if d := e.decide(tok, ap.ActionPayBill, args); d.Executed || code(d) != intent.CodeBadArgument || !strings.Contains(message(d), "not an active ISO 4217 currency") {
		t.Errorf("a bill in XTS: %s %s %s", d.Verdict, code(d), message(d))
	}
}
