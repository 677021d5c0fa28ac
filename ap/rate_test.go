package ap_test

import (
	"strings"
	"testing"
	"time"

	"github.com/intentplane/intentplane/ap"
	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/mandate"
	"github.com/intentplane/intentplane/erp"
)

// twoBudgets issues a mandate of the demo company with budgets of
// 50,000.00 EUR and 50,000.00 USD.
func (e *env) twoBudgets(id string) string {
	e.t.Helper()
	tok, err := mandate.Issue(mandate.Mandate{
		ID: id, Audience: audience, Owner: ap.DemoCompany, Scope: allActions,
		Budget: intent.Money{Currency: "EUR", Amount: 5000000}, Budgets: []intent.Money{{Currency: "USD", Amount: 5000000}},
		Mode: mandate.ModeKnownCounterparties, NotBefore: t0.Add(-time.Minute), Expiry: t0.Add(30 * 24 * time.Hour),
	}, issuer, issuerKey)
	if err != nil {
		e.t.Fatal(err)
	}
	return tok
}

// usdBill enters a USD bill of the demo vendor of total (minor units).
func (e *env) usdBill(ref string, total intent.Amount) {
	e.t.Helper()
	v := e.vendor(ap.DemoCompany, ap.DemoVendor)
	if _, err := e.erp.AddBill(e.t.Context(), ap.DemoCompany, erp.Bill{Ref: ref, Vendor: v.ID, Currency: "USD", Total: total,
		Date: time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)}); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) setRate(day, value string) {
	e.t.Helper()
	if err := e.erp.SetRate(e.t.Context(), ap.DemoCompany, "USD", day, value); err != nil {
		e.t.Fatal(err)
	}
}

// TestThresholdInCompanyCurrency (issue 17): the confirmation threshold
// (1,000.00) applies to a USD bill of a EUR company in EUR, at the ERP's
// rate of the payment's date: 1,000.00 USD at 1.0869565 USD per EUR is
// 920.00 EUR and is paid without asking; at 0.9259259 it is 1,080.00 EUR
// and asks, the approver seeing both amounts; the rate, its date and its
// source are facts, and so in the receipt.
func TestThresholdInCompanyCurrency(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name, rate string
		eur        intent.Amount
		asks       bool
	}{
		{"920.00 EUR", "1.0869565", 92000, false},
		{"1080.00 EUR", "0.9259259", 108000, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			e.usdBill("US-1000", 100000)
			e.setRate("2026-11-01", "1") // an older rate: the latest on or before the day applies
			e.setRate("2026-11-30", tt.rate)
			e.setRate("2026-12-01", "0.5") // tomorrow's: not yet
			tok := e.twoBudgets("m-fx")
			args := pay(ap.DemoVendor, "US-1000", ap.DemoIBAN, "1000.00")
			args["currency"] = "USD"
			d := e.decide(tok, ap.ActionPayBill, args)
			for k, want := range map[string]intent.Value{
				"amount_company": intent.Int(int64(tt.eur)), "company_currency": intent.Str("EUR"), "rate_value": intent.Str(tt.rate),
				"rate_date": intent.Str("2026-11-30"), "rate_source": intent.Str("rate entered for the company"), "rate_missing": intent.Str(""),
			} {
				if d.Facts[k] != want {
					t.Errorf("fact %s = %v; want %v", k, d.Facts[k], want)
				}
			}
			if !tt.asks {
				if !d.Executed {
					t.Fatalf("1000.00 USD as %s: %s %s %s", tt.name, d.Verdict, code(d), message(d))
				}
				return
			}
			if d.Verdict != intent.StepUp || d.Level != intent.LevelConfirm || !strings.Contains(message(d), "this payment 1000.00 USD (1080.00 EUR)") {
				t.Fatalf("1000.00 USD as %s: %s %s %s; want a confirmation showing both amounts", tt.name, d.Verdict, d.Level, message(d))
			}
			if d = e.decide(tok, ap.ActionPayBill, args, e.approve("alice", d)); !d.Executed {
				t.Fatalf("confirmed: %s %s", code(d), message(d))
			}
			if ps := e.payments(ap.DemoCompany); len(ps) != 1 || ps[0].Amount != (intent.Money{Currency: "USD", Amount: 100000}) {
				t.Errorf("payments %+v; want one of 1000.00 USD (the bill's currency: only the thresholds convert)", ps)
			}
		})
	}
}

// TestCurrenciesAddUpForTheVendorDay (issue 17): a EUR and a USD payment
// to one vendor on one day add up in EUR: 3,000.00 EUR then 2,500.00 USD
// at 1.0869565 (2,300.00 EUR) is 5,300.00 EUR for the day, above the
// four-eyes limit (5,000.00), which per currency neither is.
func TestCurrenciesAddUpForTheVendorDay(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	v := e.vendor(ap.DemoCompany, ap.DemoVendor)
	if _, err := e.erp.AddBill(t.Context(), ap.DemoCompany, erp.Bill{Ref: "EU-3000", Vendor: v.ID, Currency: "EUR", Total: 300000,
		Date: time.Date(2026, 11, 21, 0, 0, 0, 0, time.UTC)}); err != nil {
		t.Fatal(err)
	}
	e.usdBill("US-2500", 250000)
	e.setRate("2026-11-30", "1.0869565")
	tok := e.twoBudgets("m-day")
	if level, d := e.payLevel(tok, "EU-3000", "3000.00"); level != intent.LevelConfirm || !d.Executed {
		t.Fatalf("3000.00 EUR: %s %s %s", level, code(d), message(d))
	}
	args := pay(ap.DemoVendor, "US-2500", ap.DemoIBAN, "2500.00")
	args["currency"] = "USD"
	d := e.decide(tok, ap.ActionPayBill, args)
	if d.Verdict != intent.StepUp || d.Level != intent.LevelFourEyes || d.Facts["paid_today"] != intent.Int(300000) ||
		!strings.Contains(message(d), "this payment 2500.00 USD (2300.00 EUR); paid to ACME Supplies for this bill 0.00 EUR, today 3000.00 EUR") {
		t.Fatalf("2500.00 USD after 3000.00 EUR: %s %s %s (paid_today %v); want four eyes, the day in EUR", d.Verdict, d.Level, message(d), d.Facts["paid_today"])
	}
	d = e.decide(tok, ap.ActionPayBill, args, e.approve("alice", d), e.approve("bob", d))
	if !d.Executed {
		t.Fatalf("four eyes: %s %s", code(d), message(d))
	}
}

// TestOutsidePaymentsConvert (issue 17): a payment made by hand today in
// USD counts in the vendor's day in EUR, at today's rate.
func TestOutsidePaymentsConvert(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.usdBill("US-HAND", 100000)
	e.usdBill("US-NEXT", 50000)
	e.setRate("2026-11-30", "0.8")
	hand := e.bill(ap.DemoCompany, "US-HAND")
	if _, err := e.erp.AddPayment(t.Context(), ap.DemoCompany, erp.Payment{Bill: hand.ID, Amount: intent.Money{Currency: "USD", Amount: 100000},
		Date: t0.Add(-time.Hour)}); err != nil {
		t.Fatal(err)
	}
	args := pay(ap.DemoVendor, "US-NEXT", ap.DemoIBAN, "400.00")
	args["currency"] = "USD"
	d := e.decide(e.twoBudgets("m-hand"), ap.ActionPayBill, args)
	// 1,000.00 USD by hand is 1,250.00 EUR; with 500.00 EUR, above the
	// confirmation threshold for the day.
	if d.Facts["outside_today"] != intent.Int(125000) || d.Facts["amount_company"] != intent.Int(50000) ||
		d.Verdict != intent.StepUp || d.Level != intent.LevelConfirm {
		t.Fatalf("outside_today %v, amount_company %v, %s %s %s; want 125000, 50000, a confirmation", d.Facts["outside_today"],
			d.Facts["amount_company"], d.Verdict, d.Level, message(d))
	}
}

// TestMissingRateRefused (issue 17): a USD bill of a EUR company with no
// USD rate in the ERP is refused, naming what to set in the ERP; it is
// never converted at 1, and no one is asked to confirm it. A EUR bill of
// the same company needs no rate.
func TestMissingRateRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.usdBill("US-50", 5000)
	e.setRate("2026-12-01", "1.1") // dated after the payment: not applicable
	tok := e.twoBudgets("m-norate")
	args := pay(ap.DemoVendor, "US-50", ap.DemoIBAN, "50.00")
	args["currency"] = "USD"
	d := e.decide(tok, ap.ActionPayBill, args)
	if d.Executed || d.Verdict == intent.StepUp || code(d) != intent.CodePolicyDenied ||
		!strings.Contains(message(d), "no exchange rate of USD into the company's currency (EUR) dated on or before 2026-11-30") ||
		!strings.Contains(message(d), "Accounting > Configuration > Currencies, USD, Rates") {
		t.Fatalf("no USD rate: %s %s %s", d.Verdict, code(d), message(d))
	}
	if len(e.payments(ap.DemoCompany)) != 0 {
		t.Error("a payment was made without a rate")
	}
	if d := e.decide(tok, ap.ActionPayBill, pay(ap.DemoVendor, ap.DemoBill, ap.DemoIBAN, "100.00")); !d.Executed || d.Facts["rate_value"] != intent.Str("1") {
		t.Errorf("EUR bill without any rate: %s %s (rate %v)", code(d), message(d), d.Facts["rate_value"])
	}
}

// TestOutsidePaymentOtherCurrency (issue 17): a payment made by hand in a
// third currency counts in the vendor's week only with the ERP's rate of
// it: one of September needs none, one of today without a rate refuses
// the payment, naming that currency.
func TestOutsidePaymentOtherCurrency(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	v := e.vendor(ap.DemoCompany, ap.DemoVendor)
	e.usdBill("US-NEXT", 50000)
	e.setRate("2026-11-30", "1.25")
	for _, at := range []time.Time{time.Date(2026, 9, 15, 10, 0, 0, 0, time.UTC), t0.Add(-time.Hour)} {
		b, err := e.erp.AddBill(t.Context(), ap.DemoCompany, erp.Bill{Ref: "GB-" + at.Format("0102"), Vendor: v.ID, Currency: "GBP", Total: 20000,
			Date: at.AddDate(0, 0, -10)})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.erp.AddPayment(t.Context(), ap.DemoCompany, erp.Payment{Bill: b.ID, Amount: intent.Money{Currency: "GBP", Amount: 20000}, Date: at}); err != nil {
			t.Fatal(err)
		}
		args := pay(ap.DemoVendor, "US-NEXT", ap.DemoIBAN, "100.00")
		args["currency"] = "USD"
		d := e.decide(e.twoBudgets("m-gbp-"+at.Format("0102")), ap.ActionPayBill, args)
		if at.Month() == time.September {
			if !d.Executed {
				t.Fatalf("with a GBP payment of September and no GBP rate: %s %s", code(d), message(d))
			}
			continue
		}
		if d.Executed || d.Facts["rate_missing"] != intent.Str("GBP") || !strings.Contains(message(d), "no exchange rate of GBP") {
			t.Errorf("with a GBP payment of today and no GBP rate: %s %s; want refused, naming GBP", code(d), message(d))
		}
	}
}
