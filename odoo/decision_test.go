package odoo_test

import (
	"context"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/erp"
	"github.com/intentplane/intentplane/erp/erptest"
)

// decisionRefs are the references TestDecisionReadLikeMem draws from:
// spellings of one number with separators, case, look-alike letters and
// leading zeros, other numbers, and references without a number.
var decisionRefs = []string{"INV-2290", "inv 0229o", "2 290", "Z2-9O", "INV-2291", "12290", "2209", "Rechnung", "", "ACME-7", "7", "N/A"}

// seedDecisionHistory enters into s (company northwind) a vendor and n
// documents drawn by r: bills of every state, some paid in part or in
// full by hand, credit notes (some reversing a bill). It returns the
// vendor and, by document ID, the document's place in the draw.
func seedDecisionHistory(t *testing.T, s erptest.Seeder, r *rand.Rand, n int) (string, map[string]int) {
	t.Helper()
	ctx := context.Background()
	v, err := s.AddVendor(ctx, "northwind", erp.Vendor{Name: "Drawn Supplies", Active: true})
	if err != nil {
		t.Fatal(err)
	}
	place := map[string]int{}
	var posted []erp.Bill              // posted bills with 10.00 or more left to pay
	left := map[string]intent.Amount{} // what each of them owes
	for i := range n {
		date := time.Date(2020+r.IntN(6), time.Month(1+r.IntN(12)), 1+r.IntN(28), 0, 0, 0, 0, time.UTC)
		b := erp.Bill{Vendor: v.ID, Ref: decisionRefs[r.IntN(len(decisionRefs))], Currency: "EUR",
			Total: []intent.Amount{100_00, 250_00, 999_99}[r.IntN(3)], Date: date}
		switch x := r.IntN(8); {
		case x == 0:
			b.State = erp.StateDraft
		case x == 1:
			b.State = erp.StateCancelled
		case x <= 3 && len(posted) > 0:
			b.Kind = erp.KindCreditNote
			if r.IntN(2) == 0 {
				target := posted[r.IntN(len(posted))]
				b.Reverses, b.Total = target.ID, 10_00
				if left[target.ID] -= 10_00; left[target.ID] < 10_00 {
					posted = slices.DeleteFunc(posted, func(p erp.Bill) bool { return p.ID == target.ID })
				}
			}
		}
		added, err := s.AddBill(ctx, "northwind", b)
		if err != nil {
			t.Fatalf("document %d: %v", i, err)
		}
		place[added.ID] = i
		if added.Kind == erp.KindBill && added.State == erp.StatePosted {
			if hp, ok := s.(erptest.HandPayer); ok && r.IntN(2) == 0 && added.Residual > 0 {
				if _, err := hp.AddPayment(ctx, "northwind", erp.Payment{Bill: added.ID,
					Amount: intent.Money{Currency: "EUR", Amount: added.Residual}}); err != nil {
					t.Fatalf("paying document %d: %v", i, err)
				}
				continue
			}
			posted, left[added.ID] = append(posted, added), added.Residual
		}
	}
	return v.ID, place
}

// TestDecisionReadLikeMem: over drawn histories entered alike into
// erp.Mem and the fake Odoo (17, 18 and 19; XML-RPC and JSON-2), a
// decision's read (erp.BillQuery.Decision) selects the same documents on
// both, for every bill and for patterns of its reference with look-alike
// letters: the connector's domain selects in Odoo what Mem selects.
func TestDecisionReadLikeMem(t *testing.T) {
	t.Parallel()
	onTransports(t, func(t *testing.T, ft fakeTransport) {
		e := newFakeOn(t, nil, ft, false)
		m := erp.NewMem(time.Now)
		r1, r2 := rand.New(rand.NewPCG(7, 26)), rand.New(rand.NewPCG(7, 26))
		ov, oplace := seedDecisionHistory(t, e.admin, r1, 40)
		mv, mplace := seedDecisionHistory(t, m, r2, 40)
		ctx := context.Background()
		all, err := m.Bills(ctx, "northwind", erp.BillQuery{Vendor: mv})
		if err != nil {
			t.Fatal(err)
		}
		mid := map[int]string{}
		for id, i := range mplace {
			mid[i] = id
		}
		oid := map[int]string{}
		for id, i := range oplace {
			oid[i] = id
		}
		for _, bill := range all {
			if bill.Kind != erp.KindBill {
				continue
			}
			sus := erp.Suspects{Currency: "EUR", Amount: bill.Total, Refs: []erp.RefPattern{foldedPattern(bill.Ref)}}
			if !bill.Date.IsZero() {
				sus.Near, sus.From, sus.To = 50_00, bill.Date.AddDate(0, 0, -7), bill.Date.AddDate(0, 0, 7)
			}
			places := func(src erp.Source, vendor, billID string, place map[string]int) []int {
				t.Helper()
				bs, err := src.Bills(ctx, "northwind", erp.BillQuery{Vendor: vendor, Decision: &erp.DecisionQuery{Bill: billID, Suspects: sus}})
				if err != nil {
					t.Fatal(err)
				}
				var out []int
				for _, b := range bs {
					out = append(out, place[b.ID])
				}
				slices.Sort(out)
				return out
			}
			i := mplace[bill.ID]
			want, got := places(m, mv, mid[i], mplace), places(e.client, ov, oid[i], oplace)
			if !slices.Equal(want, got) {
				t.Errorf("document %d (%q): Mem selects %v, Odoo %v", i, bill.Ref, want, got)
			}
		}
	})
}

// foldedPattern is a pattern of ref's letters and digits, each with the
// letter or digit it may be typed as (0 and O, 1 and I and L, 2 and Z,
// 5 and S, 8 and B); nil for a reference without one.
func foldedPattern(ref string) erp.RefPattern {
	var p erp.RefPattern
	for _, c := range strings.ToUpper(ref) {
		switch {
		case c == '0' || c == 'O':
			p = append(p, "0O")
		case c == '1' || c == 'I' || c == 'L':
			p = append(p, "1IL")
		case c == '2' || c == 'Z':
			p = append(p, "2Z")
		case c == '5' || c == 'S':
			p = append(p, "5S")
		case c == '8' || c == 'B':
			p = append(p, "8B")
		case '0' <= c && c <= '9' || 'A' <= c && c <= 'Z':
			p = append(p, string(c))
		}
	}
	if p == nil {
		return nil
	}
	return p
}
