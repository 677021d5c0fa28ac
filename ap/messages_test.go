package ap_test

import (
	"context"
	"strings"
	"testing"

	"github.com/intentplane/intentplane/ap"
	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/erp"
)

// Refusals and ap.get_vendor say what a person must correct in the ERP,
// naming the records (found by a new-user trial on a real Odoo 17); each
// case stays refused.

// addVendorBill adds a vendor with one active account number (trusted or
// not) and a posted bill of 100.00 EUR with reference ref.
func (e *env) addVendorBill(name, number string, trusted bool, ref string) erp.Vendor {
	e.t.Helper()
	e.addVendor(ap.DemoCompany, name)
	e.addAccount(ap.DemoCompany, name, number, trusted, true, 10)
	v := e.vendor(ap.DemoCompany, name)
	if _, err := e.erp.AddBill(context.Background(), ap.DemoCompany, erp.Bill{Ref: ref, Vendor: v.ID, Currency: "EUR", Total: 10000}); err != nil {
		e.t.Fatal(err)
	}
	return v
}

// TestOtherVendorsBillFirst: a bill of another vendor than the one named
// is refused saying so first, not that the account is another vendor's.
func TestOtherVendorsBillFirst(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	const number = "BE68539007547034"
	e.addVendorBill("Maria Lopez", number, true, "ML-1")
	tok := e.mandate("m-1", ap.DemoCompany, "EUR")
	d := e.decide(tok, ap.ActionPayBill, pay("Maria Lopez", ap.DemoBill, number, "10.00"))
	if d.Verdict != intent.Deny || code(d) != intent.CodePolicyDenied {
		t.Fatalf("%s %s", d.Verdict, message(d))
	}
	m := message(d)
	if i := strings.Index(m, "not from the vendor named"); i < 0 || strings.Contains(m, "belongs to another vendor") {
		t.Errorf("message %q", m)
	}
}
