package ap_test

import (
	"testing"
	"time"

	"github.com/intentplane/intentplane/ap"
	"github.com/intentplane/intentplane/core/gateway"
	"github.com/intentplane/intentplane/core/intent"
)

// TestRegressionCoolingOffAfterPromotingAnAccount (found by TestProperty):
// a bank-detail change to a number the vendor already had as a trusted,
// active account that was not its current one (a second account, later in
// sequence, or equal in sequence with a higher ID) made it the current
// account without restarting its cooling-off period, so the next payment
// to it executed without four eyes. A changed account needs four eyes for
// every payment during the cooling-off period, whatever its history.
func TestRegressionCoolingOffAfterPromotingAnAccount(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		seq  int
	}{
		{"second account, later in sequence", 20},
		{"second account, same sequence, higher ID", 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			const second = "BE68 5390 0754 7034"
			e.addAccount(ap.DemoCompany, ap.DemoVendor, second, true, true, tc.seq)
			acme := e.vendor(ap.DemoCompany, ap.DemoVendor)
			if err := e.callbacks.Record(t.Context(), ap.Callback{ID: "cb", Company: ap.DemoCompany, Vendor: acme.ID, Number: second,
				Phone: ap.DemoVendorPhone, CalledBy: "dana", At: t0.Add(-time.Minute)}); err != nil {
				t.Fatal(err)
			}
			tok := e.mandate("m-1", ap.DemoCompany, "EUR")
			change := map[string]any{"vendor": ap.DemoVendor, "iban": second}
			d := e.decide(tok, ap.ActionChangeVendorBank, change)
			if d = e.decide(tok, ap.ActionChangeVendorBank, change, e.approve("alice", d), e.approve("bob", d)); !d.Executed {
				t.Fatalf("change: %s %s", d.Verdict, message(d))
			}
			e.clock.Advance(time.Hour)
			p := e.decide(tok, ap.ActionPayBill, pay(ap.DemoVendor, ap.DemoBill, second, "850.00"))
			if p.Executed || p.Verdict != gateway.StepUp || p.Level != intent.LevelFourEyes {
				t.Fatalf("payment to the account made current an hour ago: %s %s executed=%v %s; want a four-eyes step-up", p.Verdict, p.Level, p.Executed, message(p))
			}
			if len(e.payments(ap.DemoCompany)) != 0 {
				t.Fatal("a payment was registered")
			}
		})
	}
}
