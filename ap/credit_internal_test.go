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
	facts, cs := termsFacts(this, docs, 50000)
	if len(cs) != 4 || facts["bill_credit"].Int != 18000 || facts["bill_net_due"].Int != 82000 ||
		facts["bill_credit_notes"].Str != "RBILL/10 (100.00 EUR); RBILL/11 (50.00 EUR); RBILL/13 (20.00 EUR); RBILL/14 (10.00 EUR)" {
		t.Errorf("facts %v", facts)
	}
}
