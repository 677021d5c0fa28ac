package ap_test

import (
	"context"
	"strings"
	"testing"

	"github.com/intentplane/intentplane/ap"
	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/erp"
)

// heldElsewhere is an ERP where the number other is also held by a
// partner that is not a vendor (a customer, an employee): the ERP names
// it in OtherHolders (Odoo 19's duplicate_bank_partner_ids), while no
// other vendor's account shows the number.
type heldElsewhere struct {
	erp.Source
	number, partner string
}

func (h heldElsewhere) BankAccounts(ctx context.Context, company string, q erp.BankAccountQuery) ([]erp.BankAccount, error) {
	as, err := h.Source.BankAccounts(ctx, company, q)
	for i, a := range as {
		if q.Holders && a.Active && a.Sanitized == h.number {
			as[i].OtherHolders = append(a.OtherHolders, h.partner)
		}
	}
	return as, err
}

// TestAccountHeldByAnotherPartner: a vendor's trusted, current account
// whose number another partner of the ERP also holds on an active account
// (not a vendor: erp.BankAccount.OtherHolders) is paid only with two
// people's approval, naming that partner; a number no one else holds is
// paid as usual.
func TestAccountHeldByAnotherPartner(t *testing.T) {
	t.Parallel()
	const iban = "FR7630006000011234567890189"
	e := newEnvWrapped(t, ap.Config{}, func(s erp.Source) erp.Source { return heldElsewhere{Source: s, number: iban, partner: "77"} })
	e.addVendor(ap.DemoCompany, "Twin Trading")
	e.addAccount(ap.DemoCompany, "Twin Trading", iban, true, true, 10)
	e.paidBefore(ap.DemoCompany, "Twin Trading")
	twin := e.vendor(ap.DemoCompany, "Twin Trading")
	if _, err := e.erp.AddBill(t.Context(), ap.DemoCompany, erp.Bill{Ref: "TW-1", Vendor: twin.ID, Currency: "EUR", Total: 10000}); err != nil {
		t.Fatal(err)
	}
	tok := e.mandate("m-1", ap.DemoCompany, "EUR")
	args := pay("Twin Trading", "TW-1", iban, "100.00")
	d := e.decide(tok, ap.ActionPayBill, args)
	if d.Verdict != intent.StepUp || d.Level != intent.LevelFourEyes || !strings.Contains(message(d), "partner IDs 77") {
		t.Fatalf("a number another partner holds: %s %s %s; want four eyes naming partner 77", d.Verdict, d.Level, message(d))
	}
	if d.Facts["iban_other_holders"] != intent.Int(1) {
		t.Errorf("fact iban_other_holders = %v, want 1", d.Facts["iban_other_holders"])
	}
	if one := e.decide(tok, ap.ActionPayBill, args, e.approve("alice", d)); one.Executed {
		t.Fatalf("paid with one approval: %s", message(one))
	}
	if two := e.decide(tok, ap.ActionPayBill, args, e.approve("alice", d), e.approve("bob", d)); !two.Executed {
		t.Fatalf("two approvals: %s %s", two.Verdict, message(two))
	}
	if d := e.decide(tok, ap.ActionPayBill, pay(ap.DemoVendor, ap.DemoBill, ap.DemoIBAN, "850.00")); d.Facts["iban_other_holders"] != intent.Int(0) {
		t.Errorf("a number no one else holds: fact iban_other_holders = %v, want 0", d.Facts["iban_other_holders"])
	}
}
