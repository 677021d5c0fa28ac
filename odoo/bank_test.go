package odoo_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/intentplane/intentplane/erp"
	"github.com/intentplane/intentplane/odoo/provision"
)

// TestChangeRestartsSetAt (found by ap's TestProperty): a change to a
// number the vendor already has as a trusted, active account that is not
// its current one (equal in sequence with a higher ID, or later in
// sequence) wrote nothing to it when its sequence needed no change, so
// Odoo kept its write_date (SetAt) and the promoted account had no
// cooling-off period. Every account that becomes the vendor's current one
// is written; re-confirming the current account writes nothing to it.
func TestChangeRestartsSetAt(t *testing.T) {
	t.Parallel()
	for _, seq := range []int{10, 20} {
		t.Run(fmt.Sprintf("sequence %d", seq), func(t *testing.T) {
			t.Parallel()
			e := newFake(t, nil, true)
			v, cur, _, _ := demoRecords(t, e.client)
			ctx := context.Background()
			second, err := e.admin.AddBankAccount(ctx, provision.DemoCompany, erp.BankAccount{Vendor: v.ID, Number: "BE68 5390 0754 7034", Trusted: true, Active: true, Sequence: seq})
			if err != nil {
				t.Fatal(err)
			}
			at := func(tm time.Time) { e.srv.SetNow(func() time.Time { return tm }) }
			t1 := time.Now().UTC().Truncate(time.Second).Add(time.Hour)
			at(t1)
			got, err := e.client.ChangeBankAccount(ctx, provision.DemoCompany, erp.BankChange{Vendor: v.ID, Number: second.Number, Key: "k1"})
			if err != nil || got.ID != second.ID || !got.SetAt.Equal(t1) {
				t.Fatalf("promoting account %s over %s = %+v, %v; want SetAt %s", second.ID, cur.ID, got, err, t1)
			}
			at(t1.Add(time.Hour))
			again, err := e.client.ChangeBankAccount(ctx, provision.DemoCompany, erp.BankChange{Vendor: v.ID, Number: second.Number, Key: "k2"})
			if err != nil || again.ID != second.ID || !again.SetAt.Equal(t1) {
				t.Errorf("re-confirming the current account = %+v, %v; want SetAt %s kept", again, err, t1)
			}
			all, _ := e.client.BankAccounts(ctx, provision.DemoCompany, erp.BankAccountQuery{Vendor: v.ID})
			if c, ok := erp.Current(all, v.ID); !ok || c.ID != second.ID || !c.SetAt.Equal(t1) {
				t.Errorf("current account = %+v, %v", c, ok)
			}
		})
	}
}
