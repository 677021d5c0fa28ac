package ap_test

import (
	"strings"
	"testing"

	"github.com/intentplane/intentplane/ap"
	"github.com/intentplane/intentplane/core/intent"
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
	if again.Verdict == intent.StepUp || code(again) != intent.CodeReplay {
		t.Errorf("the same payment again: %s %s %s; want refused as replayed, without asking", again.Verdict, code(again), message(again))
	}
}

// TestConfigurationRefusalNamesSetting (issue 17): a USD bill refused
// under a EUR mandate says the refusal comes from the mandate's budget
// currency, a setting, not from the bill.
func TestConfigurationRefusalNamesSetting(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	v := e.vendor(ap.DemoCompany, ap.DemoVendor)
	if _, err := e.erp.AddBill(t.Context(), ap.DemoCompany, erp.Bill{Name: "BILL/2026/11/0090", Ref: "US-1", Vendor: v.ID, Currency: "USD", Total: 30000}); err != nil {
		t.Fatal(err)
	}
	tok := e.mandate("m-1", ap.DemoCompany, "EUR")
	args := pay("ACME Supplies", "US-1", ap.DemoIBAN, "300.00")
	args["currency"] = "USD"
	d := e.decide(tok, ap.ActionPayBill, args)
	if d.Executed || code(d) != intent.CodePolicyDenied || !strings.Contains(message(d), "budget_currency") {
		t.Errorf("USD bill, EUR mandate: %s %s", code(d), message(d))
	}
}
