package ap_test

import (
	"strings"
	"testing"

	"github.com/intentplane/intentplane/ap"
	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/erp"
)

// TestAccountHeldByAnotherPartner: a vendor's trusted, current account
// whose number another partner of the ERP also holds on an active
// account (here a vendor of the other company, which the company cannot
// see: erp.BankAccount.OtherHolders, Odoo 19's
// duplicate_bank_partner_ids) is paid only with two people's approval,
// naming the other holder.
func TestAccountHeldByAnotherPartner(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.addVendor(ap.DemoCompany, "Twin Trading")
	e.addAccount(ap.DemoCompany, "Twin Trading", ap.DemoOtherIBAN, true, true, 10)
	e.paidBefore(ap.DemoCompany, "Twin Trading")
	twin := e.vendor(ap.DemoCompany, "Twin Trading")
	if _, err := e.erp.AddBill(t.Context(), ap.DemoCompany, erp.Bill{Ref: "TW-1", Vendor: twin.ID, Currency: "EUR", Total: 10000}); err != nil {
		t.Fatal(err)
	}
	globex := e.vendor(ap.DemoOtherCompany, ap.DemoOtherVendor)
	tok := e.mandate("m-1", ap.DemoCompany, "EUR")
	d := e.decide(tok, ap.ActionPayBill, pay("Twin Trading", "TW-1", ap.DemoOtherIBAN, "100.00"))
	if d.Verdict != intent.StepUp || d.Level != intent.LevelFourEyes || !strings.Contains(message(d), "partner IDs "+globex.ID) {
		t.Fatalf("a number another company's vendor holds: %s %s %s; want four eyes naming partner %s", d.Verdict, d.Level, message(d), globex.ID)
	}
	if d.Facts["iban_other_holders"] != intent.Int(1) {
		t.Errorf("fact iban_other_holders = %v, want 1", d.Facts["iban_other_holders"])
	}
	if one := e.decide(tok, ap.ActionPayBill, pay("Twin Trading", "TW-1", ap.DemoOtherIBAN, "100.00"), e.approve("alice", d)); one.Executed {
		t.Fatalf("paid with one approval: %s", message(one))
	}
	if two := e.decide(tok, ap.ActionPayBill, pay("Twin Trading", "TW-1", ap.DemoOtherIBAN, "100.00"), e.approve("alice", d), e.approve("bob", d)); !two.Executed {
		t.Fatalf("two approvals: %s %s", two.Verdict, message(two))
	}
}
