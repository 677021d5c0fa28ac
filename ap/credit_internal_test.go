package ap

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/erp"
)

// TestCreditsFor (issue 17): which open credit notes concern a bill, so
// that only the payments they concern are netted and confirmed.
func TestCreditsFor(t *testing.T) {
	t.Parallel()
	bill := func(id string, residual int64, ps erp.PaymentState) erp.Bill {
		return erp.Bill{ID: id, Name: "BILL/" + id, Vendor: "7", Kind: erp.KindBill, State: erp.StatePosted, Currency: "EUR",
			Total: 100000, Residual: intent.Amount(residual), PaymentState: ps}
	}
	credit := func(id, reverses string, residual int64) erp.Bill {
		return erp.Bill{ID: id, Name: "RBILL/" + id, Vendor: "7", Kind: erp.KindCreditNote, State: erp.StatePosted, Currency: "EUR",
			Total: 10000, Residual: intent.Amount(residual), PaymentState: erp.NotPaid, Reverses: reverses}
	}
	this, open, paid := bill("1", 100000, erp.NotPaid), bill("2", 50000, erp.Partial), bill("3", 0, erp.Paid)
	usd := credit("18", "", 10000)
	usd.Currency = "USD"
	draft := credit("19", "", 10000)
	draft.State = erp.StateDraft
	otherVendor := credit("20", "", 10000)
	otherVendor.Vendor = "8"
	applied := credit("21", "", 0)
	applied.PaymentState = erp.Paid
	docs := []erp.Bill{this, open, paid,
		credit("10", "1", 10000),  // reverses this bill
		credit("11", "", 5000),    // vendor credit, tied to no bill
		credit("12", "2", 3000),   // reverses another open bill: that bill's
		credit("13", "3", 2000),   // reverses a paid bill: vendor credit
		credit("14", "999", 1000), // reverses a bill not read: vendor credit
		usd, draft, otherVendor, applied,
	}
	ids := func(bs []erp.Bill) []string {
		var out []string
		for _, b := range bs {
			out = append(out, b.ID)
		}
		return out
	}
	if diff := cmp.Diff([]string{"10", "11", "13", "14"}, ids(creditsFor(this, docs))); diff != "" {
		t.Errorf("credits of bill 1 (-want, +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"11", "12", "13", "14"}, ids(creditsFor(open, docs))); diff != "" {
		t.Errorf("credits of bill 2 (-want, +got):\n%s", diff)
	}
	if got := creditsFor(docs[3], docs); got != nil {
		t.Errorf("a credit note concerns no credit: %v", ids(got))
	}
	facts, cs, err := termsFacts(t.Context(), this, docs, 50000, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) != 4 || facts["bill_credit"].Int != 18000 || facts["bill_net_due"].Int != 82000 ||
		facts["bill_credit_notes"].Str != "RBILL/10 (100.00 EUR); RBILL/11 (50.00 EUR); RBILL/13 (20.00 EUR); RBILL/14 (10.00 EUR)" {
		t.Errorf("facts %v", facts)
	}
	if facts["bill_other_credit_notes"].Str != "RBILL/18 (100.00 USD)" {
		t.Errorf("the credit in USD is not named: %v", facts["bill_other_credit_notes"])
	}
	// Issue 24: a payment that leaves no room for the vendor's free credit
	// (50.00 + 20.00 + 10.00) nets only the credit note of this bill and
	// keeps the rest for a later invoice; the gross of this bill's own
	// credit note stays refused by the policy (bill_net_due).
	for _, c := range []struct {
		amount       intent.Amount
		netted, kept []string
	}{
		{82000, []string{"10", "11", "13", "14"}, nil},
		{82001, []string{"10"}, []string{"11", "13", "14"}},
		{90000, []string{"10"}, []string{"11", "13", "14"}},
		{100000, []string{"10"}, []string{"11", "13", "14"}},
	} {
		netted, kept := nettedCredits(this, docs, c.amount)
		if diff := cmp.Diff(c.netted, ids(netted)); diff != "" {
			t.Errorf("%d: netted (-want, +got):\n%s", c.amount, diff)
		}
		if diff := cmp.Diff(c.kept, ids(kept)); diff != "" {
			t.Errorf("%d: kept (-want, +got):\n%s", c.amount, diff)
		}
	}
	facts, _, _ = termsFacts(t.Context(), this, docs, 90000, nil)
	if facts["bill_credit"].Int != 10000 || facts["bill_net_due"].Int != 90000 || facts["bill_free_credit"].Int != 8000 ||
		facts["bill_free_credit_notes"].Str != "RBILL/11 (50.00 EUR); RBILL/13 (20.00 EUR); RBILL/14 (10.00 EUR)" {
		t.Errorf("facts of a payment gross of the free credit: %v", facts)
	}
}
