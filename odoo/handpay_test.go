package odoo_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/erp"
	"github.com/intentplane/intentplane/odoo/odootest"
	"github.com/intentplane/intentplane/odoo/provision"
)

// TestHandPaymentsCount (issue 13): payments registered by hand in Odoo
// (Register Payment on a bill, no intentplane memo) count in the vendor's
// day and week totals, read in the same call as the vendor's bills: one
// of 900.00 dated more than a week ago does not count, so a payment of
// 200.00 through the gateway is made without asking; one of 900.00
// today does, so the next payment of 210.00 asks a person's confirmation
// (the vendor's day above 1,000.00), and counts once.
func TestHandPaymentsCount(t *testing.T) {
	eachVersion(t, handPaymentsCount)
}

func handPaymentsCount(t *testing.T, srv *odootest.Server) {
	e := newAPEnv(t, odootest.RealServer{URL: srv.URL, Master: fakeMaster}, "handpay", srv)
	ctx := context.Background()
	v := e.vendor.ID
	old := e.addBill(t, v, "", "HAND-OLD", 90000)
	today := e.addBill(t, v, "", "HAND-TODAY", 95000)
	e.addBill(t, v, "", "GW-200", 20000)
	e.addBill(t, v, "", "GW-210", 21000)
	eur := func(a intent.Amount) intent.Money { return intent.Money{Currency: "EUR", Amount: a} }

	lastWeek := time.Now().UTC().AddDate(0, 0, -8).Format(time.DateOnly)
	if _, err := e.admin.AddPayment(ctx, provision.DemoCompany, erp.Payment{Bill: old.ID, Amount: eur(90000), Day: lastWeek}); err != nil {
		t.Fatalf("hand payment last week: %v", err)
	}
	d := e.decideToday(t, payArgs(provision.DemoVendor, "GW-200", provision.DemoIBAN, "200.00"))
	if !d.Executed || d.Facts["outside_today"] != intent.Int(0) || d.Facts["outside_week"] != intent.Int(0) {
		t.Fatalf("200.00 after a hand payment last week: %s %s, facts %v; want it made, outside_today and outside_week 0",
			d.Verdict, refusal(d), d.Facts)
	}

	if _, err := e.admin.AddPayment(ctx, provision.DemoCompany, erp.Payment{Bill: today.ID, Amount: eur(90000)}); err != nil {
		t.Fatalf("hand payment today: %v", err)
	}
	args := payArgs(provision.DemoVendor, "GW-210", provision.DemoIBAN, "210.00")
	d = e.decideToday(t, args)
	if d.Verdict != intent.StepUp || d.Level != intent.LevelConfirm ||
		!strings.Contains(refusal(d), "paid to the vendor today is above the company's confirmation threshold") {
		t.Fatalf("210.00 after a hand payment of 900.00 today: %s %s %v; want a person's confirmation", d.Verdict, refusal(d), d.Facts)
	}
	if d.Facts["outside_today"] != intent.Int(90000) || d.Facts["outside_week"] != intent.Int(90000) {
		t.Errorf("facts %v; want outside_today and outside_week 900.00 (once each)", d.Facts)
	}
	if d = e.decideToday(t, args, e.approvals(t, d)...); !d.Executed {
		t.Fatalf("confirmed 210.00: %s", refusal(d))
	}

	// Read directly: today's hand payment is given with the first bill,
	// without a key or a bill (erptest checks it is given once).
	bs, err := e.client.Bills(ctx, provision.DemoCompany, erp.BillQuery{Vendor: v, WithPayments: true, PaymentsSince: time.Now().UTC().AddDate(0, 0, -1).Format(time.DateOnly)})
	if err != nil || len(bs) == 0 {
		t.Fatalf("bills %d, %v", len(bs), err)
	}
	if i := slices.IndexFunc(bs[0].Payments, func(p erp.Payment) bool { return p.Key == "" }); i < 0 || bs[0].Payments[i].Amount != eur(90000) || bs[0].Payments[i].Bill != "" {
		t.Errorf("first bill %s: payments %+v; want today's hand payment of 900.00, bill unknown", bs[0].Ref, bs[0].Payments)
	}
	if _, err := e.client.Bills(ctx, provision.DemoCompany, erp.BillQuery{Vendor: v, WithPayments: true, PaymentsSince: "1 Dec"}); err == nil {
		t.Error("PaymentsSince \"1 Dec\" accepted")
	}
}
