package ap

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/erp"
)

// historyRefs are the references generated histories draw from: spellings
// of a few invoice numbers (separators, case, look-alike letters, leading
// zeros, document words, suffixes), other numbers, and references that
// cannot be compared (none, words only, non-ASCII, look-alikes).
var historyRefs = []string{
	"INV-2290", "inv 02290", "2290", "INV-229O", "Rechnung Nr. 2290", "2 290", "22-90", "2290-1", "2290/1", "2290A",
	"INV-2290 copy", "copy 2290", "2290.2026", "INV2290", "Nr.2290", "2291", "12290", "22901", "INV-1l0O", "INV-1100",
	"110O", "Il00", "SB-58", "5B58", "ZZ-22", "2Z2", "FAC-7/2026", "7-2026", "ACME-7", "acme 7", "", "Rechnung", "Facture n°",
	"Füße 2290", "ＩＮＶ-2290", "INV-2290\u200b", "N/A", "-", "BILL 0007", "7", "00007", "ref 7a", "7A",
}

// historyAmounts are the totals generated histories draw from, so that
// equal amounts are common.
var historyAmounts = []intent.Amount{100_00, 250_00, 999_99, 1000_00, 1234_56}

// genHistory fills a vendor of m (company "co") with n documents drawn
// by r: bills of every state and payment state over ten years, credit
// notes (some reversing a bill), and payments. It returns the vendor's
// ID.
func genHistory(t *testing.T, r *rand.Rand, m *erp.Mem, n int) string {
	t.Helper()
	ctx := context.Background()
	v, err := m.AddVendor(ctx, "co", erp.Vendor{Name: "Generated Supplies", Active: true})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2016, 1, 1, 0, 0, 0, 0, time.UTC)
	var posted []erp.Bill
	for range n {
		date := start.AddDate(0, 0, r.IntN(3650))
		if r.IntN(4) == 0 && len(posted) > 0 { // near another bill
			date = posted[r.IntN(len(posted))].Date.AddDate(0, 0, r.IntN(21)-10)
		}
		b := erp.Bill{Vendor: v.ID, Ref: historyRefs[r.IntN(len(historyRefs))], Currency: []string{"EUR", "EUR", "EUR", "USD"}[r.IntN(4)],
			Total: historyAmounts[r.IntN(len(historyAmounts))], Date: date, Due: date.AddDate(0, 0, 30*r.IntN(3))}
		if r.IntN(5) == 0 {
			b.Total = intent.Amount(1 + r.IntN(500_000))
		}
		switch x := r.IntN(10); {
		case x == 0:
			b.State = erp.StateDraft
		case x == 1:
			b.State = erp.StateCancelled
		case x <= 3 && len(posted) > 0: // a credit note, reversing a bill or not
			b.Kind = erp.KindCreditNote
			if r.IntN(2) == 0 {
				target := posted[r.IntN(len(posted))]
				b.Reverses, b.Currency, b.Total = target.ID, target.Currency, max(1, target.Total/intent.Amount(1+r.IntN(2)))
			}
		}
		added, err := m.AddBill(ctx, "co", b)
		if err != nil {
			t.Fatal(err)
		}
		if added.Kind != erp.KindBill || added.State != erp.StatePosted {
			continue
		}
		posted = append(posted, added)
		switch r.IntN(3) { // paid in full, in part, or not
		case 0:
			_, err = m.AddPayment(ctx, "co", erp.Payment{Bill: added.ID, Amount: intent.Money{Currency: added.Currency, Amount: added.Residual}})
		case 1:
			_, err = m.AddPayment(ctx, "co", erp.Payment{Bill: added.ID, Amount: intent.Money{Currency: added.Currency, Amount: max(1, added.Residual/2)}})
		}
		if err != nil && added.Residual > 0 {
			t.Fatal(err)
		}
	}
	return v.ID
}

// flagged returns the IDs of the bills among docs that the duplicate
// control flags for bill, each compared alone (with the credit notes
// among docs reversing it).
func flagged(bill erp.Bill, docs []erp.Bill, window time.Duration) []string {
	var out []string
	for _, s := range docs {
		if s.ID == bill.ID || s.Kind != erp.KindBill {
			continue
		}
		pair := []erp.Bill{s}
		for _, c := range docs {
			if c.Kind == erp.KindCreditNote && c.Reverses == s.ID {
				pair = append(pair, c)
			}
		}
		f := suspectDuplicates(bill, pair, window)
		if f.likelyOfSettled || f.others > 0 || f.refUnclear || f.paidUnclear > 0 {
			out = append(out, s.ID)
		}
	}
	return out
}

// TestSuspectsLoseNothing is the property of the bounded read of a
// payment's decision (suspectsOf, erp.BillQuery.Decision): over
// generated histories, every pair of bills the duplicate control flags
// on the vendor's whole history (as every decision read it before issue
// 26) it still flags on what the ERP preselects, and the control's facts
// are the same.
func TestSuspectsLoseNothing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pairs := 0
	for seed := range uint64(150) {
		r := rand.New(rand.NewPCG(seed, 26))
		m := erp.NewMem(func() time.Time { return time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC) })
		vendor := genHistory(t, r, m, 20+r.IntN(120))
		all, err := m.Bills(ctx, "co", erp.BillQuery{Vendor: vendor, WithPayments: true})
		if err != nil {
			t.Fatal(err)
		}
		window := DefaultDuplicateWindow * time.Duration(1+r.IntN(3))
		for range 8 {
			bill := all[r.IntN(len(all))]
			if bill.Kind != erp.KindBill {
				continue
			}
			bounded, err := m.Bills(ctx, "co", erp.BillQuery{Vendor: vendor, WithPayments: true,
				Decision: &erp.DecisionQuery{Bill: bill.ID, Suspects: suspectsOf(bill, window)}})
			if err != nil {
				t.Fatal(err)
			}
			whole, narrow := flagged(bill, all, window), flagged(bill, bounded, window)
			pairs += len(whole)
			for _, id := range whole {
				if !slices.Contains(narrow, id) {
					s := all[slices.IndexFunc(all, func(b erp.Bill) bool { return b.ID == id })]
					t.Errorf("seed %d: bill %s (%q, %d %s, %s) and bill %s (%q, %d %s, %s): flagged on the whole history, not on the bounded read",
						seed, bill.ID, bill.Ref, bill.Total, bill.Currency, bill.Date.Format(time.DateOnly),
						s.ID, s.Ref, s.Total, s.Currency, s.Date.Format(time.DateOnly))
				}
			}
			if a, b := suspectDuplicates(bill, all, window), suspectDuplicates(bill, bounded, window); !reflect.DeepEqual(a, b) {
				t.Errorf("seed %d, bill %s: facts on the whole history %+v, on the bounded read %+v", seed, bill.ID, a, b)
			}
			if len(bounded) > len(all) {
				t.Fatalf("the bounded read has more documents (%d) than the history (%d)", len(bounded), len(all))
			}
		}
	}
	if pairs < 500 {
		t.Errorf("only %d flagged pairs generated; the property is not exercised", pairs)
	}
	t.Logf("%d flagged pairs checked", pairs)
}

// TestKeyPattern: the pattern of a duplicate key asks, for each of its
// letters and digits, for any character DuplicateKey reads as it.
func TestKeyPattern(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		key  string
		want erp.RefPattern
	}{
		{"2290", erp.RefPattern{"2Z", "2Z", "9", "0O"}},
		{"2290.1", erp.RefPattern{"2Z", "2Z", "9", "0O", "1IL"}},
		{"A7", erp.RefPattern{"A", "7"}},
		{"58", erp.RefPattern{"5S", "8B"}},
		{".", nil},
	} {
		if got := keyPattern(c.key); !reflect.DeepEqual(got, c.want) {
			t.Errorf("keyPattern(%q) = %q, want %q", c.key, got, c.want)
		}
	}
	for _, ref := range []string{"INV-2290", "inv 02290", "INV-229O", "Rechnung Nr. 2 290", "zz9o"} {
		if !keyPattern("2290").Matches(ref) {
			t.Errorf("the pattern of 2290 does not match %q", ref)
		}
	}
	if keyPattern("2290").Matches("INV-2209") {
		t.Error("the pattern of 2290 matches INV-2209")
	}
}

func Example_keyPattern() {
	fmt.Println(keyPattern("2290").Likes(32))
	// Output: [2%2%9%0 2%2%9%O 2%Z%9%0 2%Z%9%O Z%2%9%0 Z%2%9%O Z%Z%9%0 Z%Z%9%O]
}
