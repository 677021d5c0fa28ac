package ap_test

import (
	"testing"

	"github.com/intentplane/intentplane/ap"
	"github.com/intentplane/intentplane/core/intent"
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
