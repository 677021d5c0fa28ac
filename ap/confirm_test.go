package ap_test

import (
	"strings"
	"testing"
	"time"

	"github.com/intentplane/intentplane/ap"
	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/mandate"
	"github.com/intentplane/intentplane/core/state"
	"github.com/intentplane/intentplane/erp"
)

// TestRegressionConfirmedThenReplayed (issue 17): a payment above the
// confirmation threshold that already executed was asked to be confirmed
// again, then refused as replayed once confirmed. The replay is now said
// before anyone is asked.
func TestRegressionConfirmedThenReplayed(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tok := e.mandate("m-1", ap.DemoCompany, "EUR")
	args := pay("ACME Supplies", "INV-2291", ap.DemoIBAN, "1200.00")
	d := e.decide(tok, ap.ActionPayBill, args)
	if d.Verdict != intent.StepUp {
		t.Fatalf("first: %s %s", d.Verdict, message(d))
	}
	if ok := e.decide(tok, ap.ActionPayBill, args, e.approve("alice", d)); !ok.Executed {
		t.Fatalf("confirmed: %s %s", ok.Verdict, message(ok))
	}
	again := e.decide(tok, ap.ActionPayBill, args)
	if again.Verdict == intent.StepUp || code(again) != intent.CodeReplayed {
		t.Errorf("the same payment again: %s %s %s; want refused as replayed, without asking", again.Verdict, code(again), message(again))
	}
}

// TestConfigurationRefusalNamesSetting (issue 17): a USD bill refused
// under a mandate with only a EUR budget says the refusal comes from the
// mandate's budgets, a setting, not from the bill; with a budget in USD
// too, the same bill is paid within it, its amount reserved on the USD
// budget only, and the receipt records the currency.
func TestConfigurationRefusalNamesSetting(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	v := e.vendor(ap.DemoCompany, ap.DemoVendor)
	if _, err := e.erp.AddBill(t.Context(), ap.DemoCompany, erp.Bill{Name: "BILL/2026/11/0090", Ref: "US-1", Vendor: v.ID, Currency: "USD", Total: 30000}); err != nil {
		t.Fatal(err)
	}
	if err := e.erp.SetRate(t.Context(), ap.DemoCompany, "USD", "2026-11-01", "1.0869565"); err != nil {
		t.Fatal(err)
	}
	tok := e.mandate("m-1", ap.DemoCompany, "EUR")
	args := pay("ACME Supplies", "US-1", ap.DemoIBAN, "300.00")
	args["currency"] = "USD"
	d := e.decide(tok, ap.ActionPayBill, args)
	if d.Executed || code(d) != intent.CodePolicyDenied || !strings.Contains(message(d), "the bill is in USD, a currency the user authorised no budget in") ||
		!strings.Contains(message(d), "its budgets, one per currency") || !strings.Contains(message(d), "mandate issue --budget") {
		t.Errorf("USD bill, EUR mandate: %s %s", code(d), message(d))
	}

	usd, err := mandate.Issue(mandate.Mandate{
		ID: "m-usd", Audience: audience, Owner: ap.DemoCompany, Scope: allActions,
		Budget: intent.Money{Currency: "EUR", Amount: 100000}, Budgets: []intent.Money{{Currency: "USD", Amount: 50000}},
		Mode: mandate.ModeKnownCounterparties, NotBefore: t0.Add(-time.Minute), Expiry: t0.Add(24 * time.Hour),
	}, issuer, issuerKey)
	if err != nil {
		t.Fatal(err)
	}
	d = e.decide(usd, ap.ActionPayBill, args)
	if !d.Executed {
		t.Fatalf("USD bill, mandate with a USD budget: %s %s", code(d), message(d))
	}
	if d.Facts["budget_currency"] != intent.Str("USD") || d.Facts["bill_currency"] != intent.Str("USD") {
		t.Errorf("facts budget_currency %v, bill_currency %v; want USD", d.Facts["budget_currency"], d.Facts["bill_currency"])
	}
	ps := e.payments(ap.DemoCompany)
	if len(ps) != 1 || ps[0].Amount != (intent.Money{Currency: "USD", Amount: 30000}) {
		t.Errorf("payments %+v; want one of 300.00 USD", ps)
	}
	for acct, want := range map[string]intent.Amount{"m-usd": 0, state.BudgetAccount("m-usd", "USD"): 30000} {
		if u, err := e.store.Usage(t.Context(), acct); err != nil || u.Committed != want || u.Reserved != 0 {
			t.Errorf("account %q: %+v, %v; want %d committed", acct, u, err, want)
		}
	}
	// Whatever the USD budget allows, no more: 500.00 USD, 300.00 spent.
	if _, err := e.erp.AddBill(t.Context(), ap.DemoCompany, erp.Bill{Name: "BILL/2026/11/0091", Ref: "US-2", Vendor: v.ID, Currency: "USD", Total: 30000}); err != nil {
		t.Fatal(err)
	}
	args = pay("ACME Supplies", "US-2", ap.DemoIBAN, "300.00")
	args["currency"] = "USD"
	if d := e.decide(usd, ap.ActionPayBill, args); d.Executed || code(d) != intent.CodeBudgetExceeded || !strings.Contains(message(d), "(200.00 USD of 500.00 USD)") {
		t.Errorf("beyond the USD budget: %s %s", code(d), message(d))
	}
}
