package ap

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/intentplane/intentplane/core/normalize"
	"github.com/intentplane/intentplane/erp"
)

// A payment's decision reads of the vendor's history only what its
// controls compare the bill with (erp.BillQuery.Decision): the bill, the
// vendor's open bills and credit notes, the credit notes reversing the
// bill, the vendor's payments of this week (the running totals), and the
// duplicate control's candidates, which the ERP itself finds in the
// whole history (suspectsOf). Its cost follows what is open and what
// resembles the bill, not how old the vendor is.

// suspectsOf returns what the ERP preselects of the vendor's bills for
// the duplicate control (suspectDuplicates) of bill, as the bills
// registry read it: every bill, of any date, that has a reference holding
// the pattern of bill's duplicate key (keyPattern), or the same total in
// the same currency. The invoice dates within window of bill's are
// named (erp.Suspects.From, To) for a rule that compares totals near each
// other; none does today (Near is zero).
//
// Completeness: the control flags a pair of bills only for an equal
// duplicate key or an equal amount (every other signal of
// suspectDuplicates comes with the same amount: close dates, a
// reference that cannot be compared, a resubmission, a key extending
// the other), so these two selections hold every bill it can flag,
// however far back. An equal key is found by its pattern because the
// key is built of the reference's ASCII letters and digits, each key
// character from one character of the reference, in order: dropping
// separators, document words, prefixes, suffixes or leading zeros, and
// reading a letter as the digit it looks like, only ever leave a
// subsequence of the reference's characters, folded. The pattern asks,
// for each character of the key, for any character that folds to it, as
// DuplicateKey itself folds it (keyFold), with anything between. That
// holds for any key rule of that kind, and a property test
// (TestSuspectsLoseNothing) checks over generated histories that every
// pair the control flags on the whole history it flags on what the
// ERP preselects.
func suspectsOf(bill erp.Bill, window time.Duration) erp.Suspects {
	s := erp.Suspects{Currency: bill.Currency, Amount: bill.Total}
	if !bill.Date.IsZero() {
		s.From, s.To = bill.Date.Add(-window), bill.Date.Add(window)
	}
	if key, err := normalize.DuplicateKey(bill.Ref); err == nil {
		if p := keyPattern(key); p != nil {
			s.Refs = []erp.RefPattern{p}
		}
	}
	return s
}

// keyPattern returns the pattern of the references that may have the
// duplicate key key (erp.RefPattern): for each ASCII letter or digit of
// the key, the characters that DuplicateKey folds to it (keyFold); a
// character of the key that is neither ('.', between two runs of
// digits) asks for nothing. nil for a key of no letter or digit.
func keyPattern(key string) erp.RefPattern {
	fold := keyFold()
	var p erp.RefPattern
	for i := 0; i < len(key); i++ {
		c := key[i]
		if !isDigit(c) && (c < 'A' || c > 'Z') {
			continue
		}
		var class []byte
		for j := 0; j < len(alnum); j++ {
			x := alnum[j]
			if f, ok := fold[x]; !ok || f == c {
				class = append(class, x) // unknown folds stand for anything
			}
		}
		p = append(p, string(class))
	}
	return p
}

// alnum are the ASCII digits and upper-case letters, the characters of a
// RefPattern.
const alnum = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"

// keyFold returns what normalize.DuplicateKey reads each ASCII digit and
// upper-case letter as, alone between two digits ("9O9" is "909": O
// reads as 0): learned from DuplicateKey itself, so that the
// preselection follows its rules as they change. A character it does not
// read as one character there is left out, and keyPattern lets it stand
// for any character of a key.
var keyFold = sync.OnceValue(func() map[byte]byte {
	fold := map[byte]byte{}
	for i := 0; i < len(alnum); i++ {
		x := alnum[i]
		k, err := normalize.DuplicateKey("9" + string(x) + "9")
		if err == nil && len(k) == 3 && k[0] == '9' && k[2] == '9' {
			fold[x] = k[1]
		}
	}
	return fold
})

// decisionRead reads what the decision of a payment of bill billID to
// vendor needs (erp.DecisionQuery), the duplicate candidates chosen from
// the bill as the bills registry resolved it (decided.keepResolved). If
// the bill is not kept (the decision waited longer than decidedTTL for
// its hold), it is read first (one call more); if the read shows it
// changed since (another reference, total, currency or invoice date), it
// is read again with the candidates of the bill as it is now (one call
// more, rarely), so that no candidate is missed.
func (p payFacts) decisionRead(ctx context.Context, company, vendor, billID, since string) ([]erp.Bill, error) {
	resolved, ok := p.decided.resolvedBill(company, billID)
	if !ok {
		bs, err := p.src.Bills(ctx, company, erp.BillQuery{ID: billID, NoVendorName: true})
		if err != nil {
			return nil, err
		}
		if len(bs) != 1 {
			return nil, fmt.Errorf("ap: bill %s vanished while its vendor was held", billID)
		}
		resolved = bs[0]
	}
	for range 2 {
		q := erp.BillQuery{Vendor: vendor, WithPayments: true, PaymentsSince: since, NoVendorName: true,
			Decision: &erp.DecisionQuery{Bill: billID, Suspects: suspectsOf(resolved, p.cfg.DuplicateWindow)}}
		docs, err := p.src.Bills(ctx, company, q)
		if err != nil {
			return nil, tooMany(err)
		}
		i := slices.IndexFunc(docs, func(b erp.Bill) bool { return b.ID == billID })
		if i < 0 || sameSuspects(resolved, docs[i]) {
			return docs, nil
		}
		resolved = docs[i]
	}
	return nil, fmt.Errorf("ap: bill %s keeps changing while its vendor is held", billID)
}

// sameSuspects reports whether a and b, two reads of one bill, choose the
// same duplicate candidates (suspectsOf).
func sameSuspects(a, b erp.Bill) bool {
	return a.Ref == b.Ref && a.Total == b.Total && a.Currency == b.Currency && a.Date.Equal(b.Date)
}

// ownPayments returns b with only its own payments: those registered
// against it, and those made by hand whose bill the ERP does not tell
// (Bill empty); a decision's read gives the vendor's payments of this
// week whose bill it does not read with its first bill
// (erp.DecisionQuery).
func ownPayments(b erp.Bill) erp.Bill {
	b.Payments = slices.DeleteFunc(slices.Clone(b.Payments), func(p erp.Payment) bool { return p.Bill != "" && p.Bill != b.ID })
	return b
}
