package odoo_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/intentplane/intentplane/erp"
	"github.com/intentplane/intentplane/odoo/odootest"
	"github.com/intentplane/intentplane/odoo/provision"
)

// TestNeverPaysADraftBill: Odoo 18 and 19 register a payment on a draft
// bill (17 refuses). A bill read posted for the decision and reset to
// draft before the payment runs is refused by the connector before the
// wizard opens, on every version, and nothing is paid.
func TestNeverPaysADraftBill(t *testing.T) {
	t.Parallel()
	eachVersion(t, func(t *testing.T, srv *odootest.Server) {
		e := newFake(t, srv, true)
		ctx := context.Background()
		_, acct, bill, _ := demoRecords(t, e.client)
		bs, err := e.client.Bills(ctx, provision.DemoCompany, erp.BillQuery{ID: bill.ID, WithPayments: true})
		if err != nil || len(bs) != 1 {
			t.Fatalf("bill: %+v, %v", bs, err)
		}
		if err := e.admin.ResetToDraft(ctx, provision.DemoCompany, bill.ID); err != nil {
			t.Fatal(err)
		}
		for _, decided := range []bool{true, false} {
			r := erp.PaymentRequest{Bill: bill.ID, BankAccount: acct.ID, Amount: eur(1000), Key: "draft-" + map[bool]string{true: "d", false: "n"}[decided]}
			if decided {
				r.Decided, r.Account = &bs[0], &acct
			}
			p, err := e.client.RegisterPayment(ctx, provision.DemoCompany, r)
			if !errors.Is(err, erp.ErrRefused) || !strings.Contains(err.Error(), "posted") {
				t.Errorf("decided %t: paid a draft bill: %+v, %v", decided, p, err)
			}
		}
		ps, err := e.client.Payments(ctx, provision.DemoCompany, erp.PaymentQuery{Bill: bill.ID})
		if err != nil || len(ps) != 0 {
			t.Errorf("payments of the draft bill: %+v, %v; want none", ps, err)
		}
		// Odoo's own wizard, as a person uses it: 17 refuses, 18 and 19 pay.
		v, err := e.client.Version(ctx)
		if err != nil {
			t.Fatal(err)
		}
		_, err = e.admin.AddPayment(ctx, provision.DemoCompany, erp.Payment{Bill: bill.ID, Amount: eur(1000)})
		if (v.Major == 17) != (err != nil) {
			t.Errorf("Odoo %d's wizard on a draft bill: %v", v.Major, err)
		}
	})
}
