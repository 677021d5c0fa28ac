package ap

import (
	"context"
	"errors"
	"math"
	"slices"
	"strings"

	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/erp"
)

// residualDoc documents ap.pay_bill's residual argument (issue 13:
// instalments). What the operation hash covers is the arguments: two
// payments of the same amount on the same bill are two operations only if
// their arguments differ, and the same call sent again (a retry after a
// lost answer) must stay one operation. So the agent says which residual
// it pays against: the first instalment of a 1,600.00 bill is paid against
// 1600.00, the second against 800.00, and a retry of the first still says
// 1600.00 and is answered "already executed". See docs/controls.md,
// "Instalments".
const residualDoc = `What the bill still owes before this payment, as ap.list_open_bills or the answer of the previous payment shows it ` +
	`("1600.00"). Give it to pay a further instalment of a bill already paid in part: each instalment is then its own operation, ` +
	`while the same call sent again (a retry) stays one operation and executes at most once. It must be what the bill owes now.`

// termsFacts gives the facts of ap.pay_bill about instalments and credit
// notes, from the bill and the vendor's other documents read with it
// (docs, with erp.BillQuery.WithPayments; bill is among them or not) and
// the amount to pay (minor units):
//
//   - bill_total (Long, minor units): the bill's total;
//   - bill_same_amount_paid (Long): payments of this same amount
//     registered against the bill through intentplane (under an
//     idempotency key), not cancelled: a call for it that does not say
//     which residual it pays against may be a retry of one of them;
//   - bill_credit (Long, minor units of the bill's currency): what the
//     vendor's open credit notes netted with this payment hold (see
//     nettedCredits); they are reconciled with the bill with the payment;
//   - bill_net_due (Long, minor units): bill_residual less bill_credit,
//     what is left to pay in money (zero or below: the credit covers it);
//   - bill_credit_notes (String): those credit notes for the approver,
//     "RBILL/2026/11/0003 (100.00 EUR)" joined by "; ", "" if none;
//   - bill_free_credit and bill_free_credit_notes (Long, String; only
//     when there is some): the vendor's open credit not tied to this bill
//     that this payment does not use (it pays more than the bill owes
//     less that credit), kept on the vendor's account for a later
//     invoice: a person confirms paying without it;
//   - bill_other_credit_notes (String; only when there is some): the
//     vendor's open credit notes in another currency than the bill's
//     that would concern it (see otherCurrencyCredits), never netted: a
//     person confirms paying without them. Each is named with what it
//     holds converted into the company's currency at the ERP's rate of
//     the payment's date, or with the ERP holding no such rate
//     (otherCurrencyNames; conv nil: the name and amount only).
//
// It also returns the credit notes netted, for the execution, and an
// error when the ERP cannot be read for a rate.
func termsFacts(ctx context.Context, bill erp.Bill, docs []erp.Bill, amount intent.Amount, conv *conversion) (map[string]intent.Value, []erp.Bill, error) {
	same := 0
	for _, p := range bill.Payments {
		if p.Key != "" && p.State != erp.PaymentCancelled && p.Amount.Amount == amount {
			same++
		}
	}
	credits, kept := nettedCredits(bill, docs, amount)
	credit, names := creditTotal(credits, nil)
	net := max(bill.Residual, 0) - credit // cannot overflow: both are in [0, MaxInt64]
	facts := map[string]intent.Value{
		"bill_total":            intent.Int(int64(bill.Total)),
		"bill_same_amount_paid": intent.Int(int64(same)),
		"bill_credit":           intent.Int(int64(credit)),
		"bill_net_due":          intent.Int(int64(net)),
		"bill_credit_notes":     intent.Str(strings.Join(names, "; ")),
	}
	if free, names := creditTotal(kept, nil); free > 0 {
		facts["bill_free_credit"] = intent.Int(int64(free))
		facts["bill_free_credit_notes"] = intent.Str(strings.Join(names, "; "))
	}
	if others := otherCurrencyCredits(bill, docs); len(others) > 0 {
		names, err := otherCurrencyNames(ctx, others, conv)
		if err != nil {
			return nil, nil, err
		}
		facts["bill_other_credit_notes"] = intent.Str(strings.Join(names, "; "))
	}
	return facts, credits, nil
}

// otherCurrencyNames names credit notes in another currency than the
// bill's for the person who decides to pay without them: "RBILL/18
// (100.00 USD, 92.00 EUR at the ERP's rate of 2026-12-07)", or "RBILL/18
// (100.00 USD; the ERP gives no usable rate of USD for 2026-12-07)". The
// rate is the one of conv's day (the payment's), read for the name only:
// a missing or unusable one (erp.ErrNoRate, erp.ErrRefused) never refuses
// the payment (it is not conv's missing rate); an ERP that cannot be read
// is an error.
// With conv nil, a credit note is named with its amount only.
func otherCurrencyNames(ctx context.Context, cs []erp.Bill, conv *conversion) ([]string, error) {
	names := make([]string, 0, len(cs))
	for _, c := range cs {
		name := c.Name + " (" + money(c.Residual, c.Currency) + " " + c.Currency
		if conv == nil {
			names = append(names, name+")")
			continue
		}
		r, err := conv.src.Rate(ctx, conv.company, c.Currency, conv.day)
		var v intent.Amount
		if err == nil {
			v, err = r.Convert(c.Residual)
		}
		switch {
		case err == nil:
			name += ", " + money(v, r.Company) + " " + r.Company + " at the ERP's rate of " + r.Day
		case errors.Is(err, erp.ErrNoRate), errors.Is(err, erp.ErrRefused):
			name += "; the ERP gives no usable rate of " + c.Currency + " for " + conv.day
		default:
			return nil, err // the ERP could not be read
		}
		names = append(names, name+")")
	}
	return names, nil
}

// nettedCredits splits the credit notes that concern bill (creditsFor)
// into those a payment of amount nets and those it keeps. The credit
// notes reversing the bill are always netted. The vendor's credit tied
// to no open bill is netted too when the payment leaves room for it
// (amount plus all of that credit at most what the bill owes); otherwise
// the payment is gross of it and it is kept on the vendor's account for
// a later invoice, ordinary AP practice, which a person confirms.
func nettedCredits(bill erp.Bill, docs []erp.Bill, amount intent.Amount) (netted, kept []erp.Bill) {
	var tied, free []erp.Bill
	for _, c := range creditsFor(bill, docs) {
		if c.Reverses == bill.ID {
			tied = append(tied, c)
		} else {
			free = append(free, c)
		}
	}
	t, _ := creditTotal(tied, nil)
	f, _ := creditTotal(free, nil)
	if len(free) == 0 || saturatedAdd(saturatedAdd(max(amount, 0), t), f) <= bill.Residual {
		all := append(tied, free...)
		slices.SortFunc(all, func(a, b erp.Bill) int { return erp.CompareIDs(a.ID, b.ID) })
		return all, nil
	}
	return tied, free
}

// otherCurrencyCredits returns the vendor's open credit notes among docs
// in another currency than bill's that would otherwise concern it (as
// creditsFor chooses), in ID order. They are never netted with a payment
// in the bill's currency; they are named to the person who confirms.
func otherCurrencyCredits(bill erp.Bill, docs []erp.Bill) []erp.Bill {
	if bill.Kind != erp.KindBill {
		return nil
	}
	var others []erp.Bill
	for _, d := range docs {
		if d.Kind == erp.KindCreditNote && d.Currency != bill.Currency {
			d.Currency = bill.Currency // compared as if in the bill's currency
			others = append(others, d)
		} else if d.Kind == erp.KindBill {
			others = append(others, d)
		}
	}
	var out []erp.Bill
	for _, c := range creditsFor(bill, others) {
		for _, d := range docs {
			if d.ID == c.ID && d.Currency != bill.Currency {
				out = append(out, d)
			}
		}
	}
	return out
}

// creditTotal returns what the credit notes cs hold (saturated at
// MaxInt64), leaving out those whose ID is in except, and how each is
// shown: "RBILL/2026/11/0003 (100.00 EUR)".
func creditTotal(cs []erp.Bill, except []string) (intent.Amount, []string) {
	var total intent.Amount
	names := make([]string, 0, len(cs))
	for _, c := range cs {
		if slices.Contains(except, c.ID) {
			continue
		}
		total = saturatedAdd(total, c.Residual)
		names = append(names, c.Name+" ("+money(c.Residual, c.Currency)+" "+c.Currency+")")
	}
	return total, names
}

// creditsFor returns the credit notes among docs that concern bill, in ID
// order: the vendor's open credit notes (posted, in the bill's currency,
// with a residual and not settled) that reverse this bill, reverse no
// bill, or reverse a bill that is no longer open (paid, cancelled, or not
// among docs). A credit note that reverses another open bill of the
// vendor concerns only that bill; one tied to no open bill is credit on
// the vendor's balance, netted with the next payment to the vendor. A
// document that is not a bill concerns nothing.
func creditsFor(bill erp.Bill, docs []erp.Bill) []erp.Bill {
	if bill.Kind != erp.KindBill {
		return nil
	}
	open := map[string]bool{}
	for _, d := range docs {
		if d.Kind == erp.KindBill && d.State == erp.StatePosted && d.Residual > 0 && !d.PaymentState.Settled() {
			open[d.ID] = true
		}
	}
	var out []erp.Bill
	for _, c := range docs {
		if c.Kind != erp.KindCreditNote || c.State != erp.StatePosted || c.Vendor != bill.Vendor ||
			c.Currency != bill.Currency || c.Residual <= 0 || c.PaymentState.Settled() {
			continue
		}
		if c.Reverses == bill.ID || c.Reverses == "" || !open[c.Reverses] {
			out = append(out, c)
		}
	}
	slices.SortFunc(out, func(a, b erp.Bill) int { return erp.CompareIDs(a.ID, b.ID) })
	return out
}

// saturatedAdd returns a+b for amounts not below zero, MaxInt64 if that
// overflows.
func saturatedAdd(a, b intent.Amount) intent.Amount {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

// creditsNow reads the vendor's documents and returns the credit notes
// that a payment of amount of the bill with this ID nets now (see
// nettedCredits), for an execution whose decision was made elsewhere.
func creditsNow(ctx context.Context, src erp.Reader, company, vendor, billID string, amount intent.Amount) ([]erp.Bill, error) {
	// The bill, the vendor's open documents and the credit notes reversing
	// the bill: all that nettedCredits looks at, however long the history.
	docs, err := src.Bills(ctx, company, erp.BillQuery{Vendor: vendor, Decision: &erp.DecisionQuery{Bill: billID}})
	if err != nil {
		return nil, err
	}
	i := slices.IndexFunc(docs, func(b erp.Bill) bool { return b.ID == billID })
	if i < 0 {
		return nil, nil
	}
	netted, _ := nettedCredits(docs[i], docs, amount)
	return netted, nil
}

// creditIDs returns the IDs of the credit notes cs.
func creditIDs(cs []erp.Bill) []string {
	ids := make([]string, len(cs))
	for i, c := range cs {
		ids[i] = c.ID
	}
	return ids
}

// netted records in out the credit notes netted with payment p (those
// the ERP reconciled, and a note on those it could not) and returns what
// they settled in minor units, as read while deciding.
func netted(out *paidJSON, credits []erp.Bill, p erp.Payment) intent.Amount {
	credited, names := creditTotal(credits, p.Unreconciled)
	out.CreditNotes = names
	if len(p.Unreconciled) > 0 {
		left := make([]string, 0, len(p.Unreconciled))
		for _, id := range p.Unreconciled {
			i := slices.IndexFunc(credits, func(c erp.Bill) bool { return c.ID == id })
			if i >= 0 {
				id = credits[i].Name + " (" + id + ")"
			}
			left = append(left, id)
		}
		out.Note = "the payment was made, but credit notes " + strings.Join(left, ", ") +
			" could not be reconciled with the bill in the ERP: tell the user that the accounting team must reconcile them; do not pay the bill again for them"
	}
	return credited
}

// showCredit sets the credit a payment of bill b nets, and what is then
// left to pay, on its listing bj, from docs (the vendor's open credit
// notes and the bills listed with b): as a payment would net it, except
// that a credit note reversing an open bill not listed counts as the
// vendor's (the payment's decision reads them all).
func showCredit(bj *billJSON, b erp.Bill, docs []erp.Bill) {
	if bj.Residual == "" { // a currency the pack does not pay
		return
	}
	credit, _ := creditTotal(creditsFor(b, docs), nil)
	if credit == 0 {
		return
	}
	bj.Credit, bj.NetDue = money(credit, b.Currency), money(max(b.Residual-credit, 0), b.Currency)
}
