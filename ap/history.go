package ap

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/intentplane/intentplane/core/intent"
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
// registry read it, the four kinds of bill suspectDuplicates says can
// matter: every bill, of any date, whose reference holds the pattern of
// the digits of bill's duplicate key (keyPattern; for a reference that
// has no key, of its look-alike key, normalize.LookAlikeKey), or whose
// total is nearly the same (nearTolerance) in the same currency; every
// bill dated within window of bill's, whatever its total; and every bill
// without a reference.
//
// Completeness: a pair the control flags shares the same or a
// look-alike number (then the other's reference holds this key's digits
// in order, or the pair also has nearly the same amount or close dates:
// a number extended, regrouped or with a letter added is only a signal
// with one of those), or nearly the same amount, or close dates, or has a
// reference that cannot be compared. The digits are found by their
// pattern because a key is built of the reference's ASCII letters and
// digits, each key character from one character of the reference, in
// order: dropping separators, document words, prefixes, suffixes or
// leading zeros, and reading a letter as the digit it looks like, only
// ever leave a subsequence of the reference's characters, folded; the
// pattern asks, for each digit, for any character that folds to it, as
// DuplicateKey itself folds it (keyFold). What is not selected: a bill
// whose reference writes its digits with characters other than ASCII
// (full-width digits) and that has neither a near amount nor a close
// date; such a pair is flagged only from the other side (see
// docs/controls.md). Property tests (TestSuspectsLoseNothing over
// generated histories, TestDuplicateSet over the labelled set) check
// that what the control flags on the whole history it flags on what the
// ERP preselects.
func suspectsOf(bill erp.Bill, window time.Duration) erp.Suspects {
	s := erp.Suspects{Currency: bill.Currency, Amount: bill.Total, Near: nearTolerance(bill.Total), NoRef: true}
	if !bill.Date.IsZero() {
		s.From, s.To = bill.Date.Add(-window), bill.Date.Add(window)
	}
	key, err := normalize.DuplicateKey(bill.Ref)
	if err != nil {
		var ok bool
		if key, ok = normalize.LookAlikeKey(bill.Ref); !ok {
			return s
		}
	}
	if p := keyPattern(digitsOrAll(key)); p != nil {
		s.Refs = []erp.RefPattern{p}
	}
	return s
}

// nearTolerance is the widest difference of a total from amount that
// nearAmount may call nearly the same (1% of the larger, or one minor
// unit), rounded up: the band the ERP preselects.
func nearTolerance(amount intent.Amount) intent.Amount {
	if amount <= 0 {
		return 0
	}
	return amount/(100-nearPercent)*nearPercent + nearPercent + 1
}

// digitsOrAll returns key's digits, in order, or key itself when it has
// none (a reference of letters only).
func digitsOrAll(key string) string {
	var b strings.Builder
	for i := 0; i < len(key); i++ {
		if isDigit(key[i]) {
			b.WriteByte(key[i])
		}
	}
	if b.Len() == 0 {
		return key
	}
	return b.String()
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
