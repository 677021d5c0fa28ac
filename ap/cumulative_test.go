package ap_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/intentplane/intentplane/ap"
	"github.com/intentplane/intentplane/core/approval"
	"github.com/intentplane/intentplane/core/gateway"
	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/erp"
)

// payLevel pays amount of bill, approving what is asked (one person for a
// confirmation, two for four eyes), and returns the level asked ("" if
// none) and the final decision.
func (e *env) payLevel(tok, bill, amount string) (intent.Level, gateway.Decision) {
	e.t.Helper()
	args := pay(ap.DemoVendor, bill, ap.DemoIBAN, amount)
	d := e.decide(tok, ap.ActionPayBill, args)
	if d.Verdict != intent.StepUp {
		return "", d
	}
	as := []approval.Approval{e.approveOnce("alice", d)}
	if d.Level == intent.LevelFourEyes {
		as = append(as, e.approveOnce("bob", d))
	}
	return d.Level, e.decide(tok, ap.ActionPayBill, args, as...)
}

// TestSplitNeedsTheLevelOfTheWhole: splitting a payment never lowers the
// approval it needs (issue 13). Paid whole, INV-2291 (2,400.00) asks a
// person; split into 1,000.00, 999.99 and 400.01 the second and third ask
// too, and the person is shown what was already paid.
func TestSplitNeedsTheLevelOfTheWhole(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tok := e.mandate("m-split", ap.DemoCompany, "EUR")
	steps := []struct {
		amount string
		level  intent.Level
		shown  string // in the step-up's message
	}{
		{"1000.00", "", ""},
		{"999.99", intent.LevelConfirm, "this payment 999.99 EUR; paid to ACME Supplies for this bill 1000.00 EUR, today 1000.00 EUR"},
		{"400.01", intent.LevelConfirm, "this payment 400.01 EUR; paid to ACME Supplies for this bill 1999.99 EUR, today 1999.99 EUR"},
	}
	for _, s := range steps {
		args := pay(ap.DemoVendor, ap.DemoBill2, ap.DemoIBAN, s.amount)
		d := e.decide(tok, ap.ActionPayBill, args)
		if s.level == "" {
			if !d.Executed {
				t.Fatalf("%s: %s %s", s.amount, d.Verdict, message(d))
			}
			continue
		}
		if d.Verdict != intent.StepUp || d.Level != s.level {
			t.Fatalf("%s: want a step-up to %s, got %s %s %s", s.amount, s.level, d.Verdict, d.Level, message(d))
		}
		if !strings.Contains(message(d), s.shown) {
			t.Errorf("%s: the step-up does not show the totals %q: %s", s.amount, s.shown, message(d))
		}
		if ok := e.decide(tok, ap.ActionPayBill, args, e.approve("alice", d)); !ok.Executed {
			t.Fatalf("%s confirmed: %s %s", s.amount, ok.Verdict, message(ok))
		}
		if got := d.Facts[ap.TotalBill]; got.Int == 0 {
			t.Errorf("%s: fact %s = %v", s.amount, ap.TotalBill, got)
		}
	}
	if b := e.bill(ap.DemoCompany, ap.DemoBill2); b.Residual != 0 {
		t.Errorf("residual %d after the three parts", b.Residual)
	}
}

// TestSplitAboveTheMaximum: a 25,000.00 bill is refused whole; split into
// 9,000.00 + 8,999.99 + 7,000.01 the first needs four eyes (the vendor's
// day above 5,000.00) and the second is refused: what was paid of the bill
// with it is above the company's limit for the assistant.
func TestSplitAboveTheMaximum(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	acme := e.vendor(ap.DemoCompany, ap.DemoVendor)
	if _, err := e.erp.AddBill(ctx, ap.DemoCompany, erp.Bill{Name: "BILL/2026/11/0100", Ref: "INV-2500", Vendor: acme.ID, Currency: "EUR",
		Total: 2500000, Residual: 2500000, State: erp.StatePosted, PaymentState: erp.NotPaid, Kind: erp.KindBill}); err != nil {
		t.Fatal(err)
	}
	tok := e.mandate("m-max", ap.DemoCompany, "EUR")
	if d := e.decide(tok, ap.ActionPayBill, pay(ap.DemoVendor, "INV-2500", ap.DemoIBAN, "25000.00")); code(d) != intent.CodePolicyDenied {
		t.Fatalf("whole: %s %s", d.Verdict, message(d))
	}
	if level, d := e.payLevel(tok, "INV-2500", "9000.00"); level != intent.LevelFourEyes || !d.Executed {
		t.Fatalf("9000.00: level %q, %s %s", level, d.Verdict, message(d))
	}
	for _, amount := range []string{"8999.99", "7000.01"} {
		level, d := e.payLevel(tok, "INV-2500", amount)
		if level != "" || code(d) != intent.CodePolicyDenied || !strings.Contains(message(d), "above") {
			t.Errorf("%s after 9000.00: level %q, %s %s", amount, level, code(d), message(d))
		}
	}
	if n := len(e.payments(ap.DemoCompany)); n != 1 {
		t.Errorf("%d payments, want 1", n)
	}
}

// TestVendorDayTotal: three bills of one vendor paid the same day add up:
// 600.00 + 600.00 asks a person for the second (the vendor's day is above
// 1,000.00); a payment made by hand in the ERP the same day counts too;
// the next day starts again from zero, in the company's time zone.
func TestVendorDayTotal(t *testing.T) {
	t.Parallel()
	zone := time.FixedZone("UTC+10", 10*3600)
	e := newEnvConfig(t, ap.Config{Zone: zone})
	ctx := context.Background()
	acme := e.vendor(ap.DemoCompany, ap.DemoVendor)
	var refs []string
	for _, ref := range []string{"INV-3001", "INV-3002", "INV-3003", "INV-3004"} {
		if _, err := e.erp.AddBill(ctx, ap.DemoCompany, erp.Bill{Name: "BILL/" + ref, Ref: ref, Vendor: acme.ID, Currency: "EUR",
			Total: 60000, Residual: 60000, State: erp.StatePosted, PaymentState: erp.NotPaid, Kind: erp.KindBill}); err != nil {
			t.Fatal(err)
		}
		refs = append(refs, ref)
	}
	tok := e.mandate("m-day", ap.DemoCompany, "EUR")
	if level, d := e.payLevel(tok, refs[0], "600.00"); level != "" || !d.Executed {
		t.Fatalf("first: level %q, %s %s", level, d.Verdict, message(d))
	}
	level, d := e.payLevel(tok, refs[1], "600.00")
	if level != intent.LevelConfirm || !d.Executed {
		t.Fatalf("second the same day: level %q, %s %s", level, d.Verdict, message(d))
	}
	// The company's day ends at 14:00 UTC (UTC+10); t0 is 09:00 UTC.
	e.clock.Advance(6 * time.Hour)
	if level, d := e.payLevel(tok, refs[2], "300.00"); level != intent.LevelConfirm || !d.Executed {
		t.Fatalf("the next company day, same ISO week and mandate: level %q, %s %s", level, d.Verdict, message(d))
	} else if d.Facts[ap.TotalDay].Int != 0 || d.Facts[ap.TotalWeek].Int != 120000 {
		t.Errorf("day %v week %v, want 0 and 120000", d.Facts[ap.TotalDay], d.Facts[ap.TotalWeek])
	}
	// A payment made by hand in the ERP counts in the vendor's day.
	b := e.bill(ap.DemoCompany, refs[3])
	if _, err := e.erp.AddPayment(ctx, ap.DemoCompany, erp.Payment{Bill: b.ID, BankAccount: "", Amount: intent.Money{Currency: "EUR", Amount: 10000},
		State: erp.PaymentPosted, Day: e.clock.Now().In(zone).Format(time.DateOnly)}); err != nil {
		t.Fatal(err)
	}
	d = e.decide(tok, ap.ActionPayBill, pay(ap.DemoVendor, refs[3], ap.DemoIBAN, "10.00"))
	if got := d.Facts["outside_today"].Int; got != 10000 {
		t.Errorf("outside_today = %d, want 10000", got)
	}
	if got := d.Facts[ap.TotalDay].Int; got != 40000 {
		t.Errorf("paid_today = %d, want 40000 (300.00 through the gateway, 100.00 by hand)", got)
	}
	if got := d.Facts[ap.TotalBill].Int; got != 10000 {
		t.Errorf("paid_bill = %d, want 10000 (by hand)", got)
	}
}

// TestMaxVendorTotal: a company may let the assistant pay a vendor more in
// a day than one payment's limit (several bills in one run); a limit below
// the single payment's is refused.
func TestMaxVendorTotal(t *testing.T) {
	t.Parallel()
	if _, err := ap.NewPack(ap.DemoERP(nil), ap.Config{MaxAmount: 1000000, MaxVendorTotal: 999999}); err == nil {
		t.Error("NewPack accepted a vendor total below the single payment's limit")
	}
	e := newEnvConfig(t, ap.Config{MaxVendorTotal: 2000000})
	ctx := context.Background()
	acme := e.vendor(ap.DemoCompany, ap.DemoVendor)
	for _, ref := range []string{"INV-4001", "INV-4002"} {
		if _, err := e.erp.AddBill(ctx, ap.DemoCompany, erp.Bill{Name: "BILL/" + ref, Ref: ref, Vendor: acme.ID, Currency: "EUR",
			Total: 900000, Residual: 900000, State: erp.StatePosted, PaymentState: erp.NotPaid, Kind: erp.KindBill}); err != nil {
			t.Fatal(err)
		}
	}
	tok := e.mandate("m-run", ap.DemoCompany, "EUR")
	for _, ref := range []string{"INV-4001", "INV-4002"} {
		if level, d := e.payLevel(tok, ref, "9000.00"); level != intent.LevelFourEyes || !d.Executed {
			t.Fatalf("%s: level %q, %s %s", ref, level, d.Verdict, message(d))
		}
	}
	if level, d := e.payLevel(tok, ap.DemoBill2, "2000.01"); level != "" || code(d) != intent.CodePolicyDenied {
		t.Errorf("above 20,000.00 in the day: level %q, %s %s", level, d.Verdict, message(d))
	}
}
