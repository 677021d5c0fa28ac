package ap

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/normalize"
	"github.com/intentplane/intentplane/erp"
)

// DefaultDuplicateWindow is Config.DuplicateWindow's default: invoice
// dates at most this far apart are close.
const DefaultDuplicateWindow = 7 * 24 * time.Hour

// maxDuplicatesNamed is how many suspected bills duplicate_of names.
const maxDuplicatesNamed = 3

// The signals that another bill of the vendor may be the same invoice as
// the bill paid (see docs/controls.md, "Duplicate invoices").
const (
	sameNumber   = "same invoice number"                                   // equal normalize.DuplicateKey
	sameAmount   = "same amount"                                           // equal total, same currency
	closeDates   = "invoice dates close together"                          // within Config.DuplicateWindow
	noNumber     = "a reference that cannot be compared"                   // one of the two has no duplicate key
	resubmission = "resubmitted after the earlier one fell due"            // the earlier one is unpaid and overdue
	addedTo      = "one invoice number is the other with something added"  // extends, letterAdded
	regrouped    = "the same invoice number, separated differently"        // the keys without '.' are equal
	looseSame    = "the same invoice number in characters that look alike" // equal look-alike keys
	looseLike    = "invoice numbers that look alike, in characters that look alike"
	nearlySame   = "nearly the same amount" // nearAmount, not equal
)

// nearPercent is how close two totals in one currency are to count as
// nearly the same amount: they differ by at most this percentage of the
// larger, or by one minor unit (a cent, a yen). A copy of an invoice
// entered twice differs by a keying error in the cents, a rounding of
// tax, a fee added; a vendor's distinct invoices rarely come within 1%
// of each other under numbers that also look alike.
const nearPercent = 1

// duplicateFacts are the facts of the duplicate control of one payment,
// as payFacts gives them (see there).
type duplicateFacts struct {
	likelyOfSettled bool // a likely duplicate of a bill paid in part or in full: refused
	others          int  // likely duplicates of unpaid bills and possible duplicates with comparable numbers: confirm
	refUnclear      bool // the bill's reference cannot be compared and a paid bill of nearly the same amount could be the same invoice
	paidUnclear     int  // paid bills of nearly the same amount whose reference cannot be compared
	named           []string
}

// suspectDuplicates compares bill with the vendor's other bills (siblings,
// which may include bill itself and credit notes, both skipped) under the
// rules of docs/controls.md. Two bills of one vendor, neither cancelled:
//
//   - are a likely duplicate when their references have the same
//     normalize.DuplicateKey, or when they have the same amount, close
//     invoice dates and one of the references cannot be compared (an
//     invoice keyed without its number). A likely duplicate of a bill
//     paid in part or in full is refused; of an unpaid or draft one, a
//     person confirms;
//   - are a possible duplicate, which a person confirms whatever the other
//     bill's state, when they have the same amount and close invoice
//     dates, or nearly the same amount (nearAmount) and the other bill is
//     unpaid and fell due on or before this one's invoice date (a vendor
//     resubmitting an unpaid invoice), or when their invoice numbers look
//     alike (one duplicate key is the other with something added before
//     or after the number, extends: "INV-2290A", "INV-2290/2026"; or the
//     keys are equal once their '.' are left out: "INV-2-290" and
//     "INV-2290", "2290-1" and "22901") and they have nearly the same
//     amount or close invoice dates, or one key is the other with one
//     digit added that a letter may have written (letterAdded: "22908",
//     "INV-2290B" read by rule 2, and "2290") and they have nearly the
//     same amount;
//   - are a possible duplicate too when one reference cannot be compared
//     but, read with its look-alike characters as the ASCII they imitate
//     (normalize.LookAlikeKey: "ІNV-2290" with a Cyrillic І), has the
//     other's number, whatever the amounts and dates, or a number that
//     looks like it, with nearly the same amount or close dates (issue 24:
//     a look-alike character is a reason to ask, never to pay);
//   - have nearly the same amount and a reference that cannot be compared:
//     once the other is paid in part or in full, a person confirms
//     (bill_ref_unclear when it is this bill's reference, paid_refs_unclear
//     when the other's); while neither is paid, paying the first is no
//     loss, and the person is asked when the second is paid.
//
// Bills whose numbers differ and that have nothing else in common but
// their amount are never suspected: a vendor's distinct invoices are the
// common case, and the key serves suspicion only.
//
// Which of the vendor's bills can matter, for a reader that preselects
// them (issue 24): every bill whose key has the same number or a number
// that looks alike, that is, whose key's digits (its characters 0-9, in
// order) contain this bill's key's digits as one unbroken run, or are
// such a run of them (for a bill whose reference has no key, the digits
// of its look-alike key) (for this the reference's text is not enough: see
// normalize.DuplicateKey, "What two references with one key share");
// every bill whose total is nearly the same (nearAmount) in the bill's
// currency (a resubmission among them); every bill dated within the
// window of this one; and every bill whose reference has no key (empty,
// or with a character other than ASCII). A bill outside all four is never
// suspected.
func suspectDuplicates(bill erp.Bill, siblings []erp.Bill, window time.Duration) duplicateFacts {
	var f duplicateFacts
	key, kerr := normalize.DuplicateKey(bill.Ref)
	credited := creditedBills(siblings)
	for _, s := range siblings {
		if s.ID == bill.ID || s.Kind != erp.KindBill || s.State == erp.StateCancelled {
			continue
		}
		// A bill reversed by its credit notes (Odoo's way to cancel a posted
		// bill: "reversed", or as much credited as it costs) was never paid:
		// it is compared no more than a cancelled one. What its credit notes
		// settle is not paid.
		c := credited[s.ID]
		if s.PaymentState == erp.Reversed || (c > 0 && c >= s.Total) {
			continue
		}
		p := compareBills(bill, s, key, kerr, window)
		settled := s.PaymentState != erp.NotPaid || s.Residual < s.Total
		if c > 0 {
			settled = s.Total-s.Residual > c
		}
		if f.add(p, settled, kerr != nil) && len(f.named) < maxDuplicatesNamed {
			f.named = append(f.named, describeBill(s, settled)+": "+strings.Join(p.why(), ", "))
		}
	}
	return f
}

// creditedBills returns, per bill ID, how much of it the posted credit
// notes among siblings that reverse it settle (each credit note's total
// less what is left of it), in minor units.
func creditedBills(siblings []erp.Bill) map[string]intent.Amount {
	var m map[string]intent.Amount
	for _, s := range siblings {
		if s.Kind != erp.KindCreditNote || s.State != erp.StatePosted || s.Reverses == "" || s.Residual >= s.Total {
			continue
		}
		if m == nil {
			m = map[string]intent.Amount{}
		}
		m[s.Reverses] += s.Total - s.Residual
	}
	return m
}

// pairSignals are the signals two bills of one vendor share (see
// suspectDuplicates).
type pairSignals struct {
	number, amount, nearAmount, near, unkeyed, resubmitted, extended, regrouped, letterAdded bool
	// looseNumber and looseLike: one reference cannot be compared, but
	// read with its look-alike characters as the ASCII they imitate
	// (normalize.LookAlikeKey) it has the other's number, or a number
	// that looks like it.
	looseNumber, looseLike bool
}

// compareBills returns the signals bill (whose duplicate key is key, or
// kerr) shares with the other bill s.
func compareBills(bill, s erp.Bill, key string, kerr error, window time.Duration) pairSignals {
	k, err := normalize.DuplicateKey(s.Ref)
	var p pairSignals
	if p.unkeyed = kerr != nil || err != nil; !p.unkeyed {
		p.compareKeys(k, key)
	} else {
		p.looseNumber, p.looseLike = compareLoose(bill.Ref, s.Ref)
	}
	p.amount = s.Total == bill.Total && s.Currency == bill.Currency
	p.nearAmount = s.Currency == bill.Currency && nearAmount(s.Total, bill.Total)
	p.near = !bill.Date.IsZero() && !s.Date.IsZero() && absDuration(bill.Date.Sub(s.Date)) <= window
	p.resubmitted = p.nearAmount && unpaid(s) && !s.Due.IsZero() && !bill.Date.IsZero() && !s.Due.After(bill.Date)
	return p
}

// compareKeys sets the signals of two duplicate keys: the same number,
// or numbers that look alike (extends, then regrouped, then letterAdded:
// each only when the ones before it are not).
func (p *pairSignals) compareKeys(k, key string) {
	p.number = k == key
	p.extended = !p.number && (extends(k, key) || extends(key, k))
	if p.number || p.extended {
		return
	}
	a, b := strings.ReplaceAll(k, ".", ""), strings.ReplaceAll(key, ".", "")
	p.regrouped = a == b || extends(a, b) || extends(b, a)
	p.letterAdded = !p.regrouped && (letterAdded(k, key) || letterAdded(key, k))
}

// compareLoose reports whether two references, one of which at least
// DuplicateKey refuses, have the same number (same) or numbers that look
// alike (like, as compareKeys says) once their look-alike characters are
// read as the ASCII they imitate (normalize.LookAlikeKey): "ІNV-2290"
// with a Cyrillic І and "INV-2290" have the same number.
func compareLoose(a, b string) (same, like bool) {
	ka, okA := looseKey(a)
	kb, okB := looseKey(b)
	if !okA || !okB {
		return false, false
	}
	var q pairSignals
	q.compareKeys(ka, kb)
	return q.number, q.extended || q.regrouped || q.letterAdded
}

// looseKey returns ref's duplicate key, or else its look-alike key.
func looseKey(ref string) (string, bool) {
	if k, err := normalize.DuplicateKey(ref); err == nil {
		return k, true
	}
	return normalize.LookAlikeKey(ref)
}

// nearAmount reports whether two totals (minor units of one currency,
// not below zero) are nearly the same: equal, one minor unit apart, or
// apart by at most nearPercent percent of the larger. A negative total
// is near only an equal one.
func nearAmount(a, b intent.Amount) bool {
	if a < 0 || b < 0 {
		return a == b
	}
	lo, hi := min(a, b), max(a, b)
	d := hi - lo // cannot overflow: both are in [0, MaxInt64]
	// hi·nearPercent/100, rounded down, without overflowing hi·nearPercent.
	return d <= 1 || d <= hi/100*nearPercent+hi%100*nearPercent/100
}

// lookAlike reports whether the signals are of two invoice numbers that
// are not the same key but may be one number written two ways.
func (p pairSignals) lookAlike() bool { return p.extended || p.regrouped }

// likely reports whether the signals make a likely duplicate.
func (p pairSignals) likely() bool { return p.number || (p.amount && p.near && p.unkeyed) }

// why lists the signals for people.
func (p pairSignals) why() []string {
	var why []string
	for _, s := range []struct {
		on   bool
		text string
	}{
		{p.number, sameNumber},
		{p.amount, sameAmount},
		{p.nearAmount && !p.amount, nearlySame},
		{p.extended && (p.nearAmount || p.near), addedTo},
		{p.regrouped && (p.nearAmount || p.near), regrouped},
		{p.letterAdded && p.nearAmount, addedTo},
		{p.looseNumber, looseSame},
		{p.looseLike && (p.nearAmount || p.near), looseLike},
		{p.near && (p.number || p.amount || p.lookAlike() || p.looseNumber || p.looseLike), closeDates},
		{p.unkeyed && p.nearAmount, noNumber},
		{p.resubmitted, resubmission},
	} {
		if s.on {
			why = append(why, s.text)
		}
	}
	return why
}

// add counts the other bill with signals p into f (settled: it is paid in
// part or in full; ownUnkeyed: the bill paid has no duplicate key) and
// reports whether it is suspected.
func (f *duplicateFacts) add(p pairSignals, settled, ownUnkeyed bool) bool {
	switch {
	case p.likely() && settled:
		f.likelyOfSettled = true
	case p.likely():
		f.others++
	case p.amount && p.near, p.resubmitted, p.lookAlike() && (p.nearAmount || p.near), p.letterAdded && p.nearAmount:
		f.others++
	case p.looseNumber, p.looseLike && (p.nearAmount || p.near):
		f.others++
	case p.nearAmount && p.unkeyed && settled && ownUnkeyed:
		f.refUnclear = true
	case p.nearAmount && p.unkeyed && settled:
		f.paidUnclear++
	default:
		// Not suspected: numbers that differ, or nearly the same amount
		// with nothing else in common (a vendor's distinct invoices);
		// numbers that look alike with amounts and dates apart (an
		// instalment "2290-1" of "2290"); or an unpaid bill whose
		// reference cannot be compared, which is asked about when the
		// second of the two is paid.
		return false
	}
	return true
}

// text is the duplicate_of fact: the suspected bills, "" if none.
func (f duplicateFacts) text() string {
	return strings.Join(f.named, "; ")
}

// unpaid reports whether nothing of b is paid (a posted or draft bill).
func unpaid(b erp.Bill) bool {
	return b.PaymentState == erp.NotPaid && b.Residual >= b.Total
}

// describeBill names a bill for a person who must find it in the ERP: its
// number, its vendor reference (quoted, as the vendor typed it), its total,
// its invoice date and whether it is paid.
func describeBill(b erp.Bill, settled bool) string {
	state := "unpaid"
	switch {
	case b.State == erp.StateDraft:
		state = "draft"
	case b.PaymentState.Settled() || b.Residual <= 0:
		state = "paid"
	case settled:
		state = "partly paid"
	}
	name := b.Name
	if name == "" || name == "/" {
		name = "bill ID " + b.ID
	}
	ref := "no vendor reference"
	if b.Ref != "" {
		ref = "vendor reference " + strconv.QuoteToASCII(b.Ref)
	}
	date := ""
	if !b.Date.IsZero() {
		date = ", invoice date " + b.Date.UTC().Format(time.DateOnly)
	}
	total := b.Currency + " (amount not shown: not an ISO 4217 currency)"
	if supportedCurrency(b.Currency) {
		total = money(b.Total, b.Currency) + " " + b.Currency
	}
	return fmt.Sprintf("%s (%s, %s%s, %s)", name, ref, total, date, state)
}

// extends reports whether the duplicate key long is short, a number (it
// starts and ends with a digit), with something added before or after it
// that does not continue the number: "2290C0PY" (INV-2290 copy), "2290A",
// "2290.2026" and "C0PY2290" extend "2290"; "22901" and "12290" do not.
func extends(long, short string) bool {
	if len(long) <= len(short) || short == "" || !isDigit(short[0]) || !isDigit(short[len(short)-1]) {
		return false
	}
	if strings.HasPrefix(long, short) && !isDigit(long[len(short)]) {
		return true
	}
	return strings.HasSuffix(long, short) && !isDigit(long[len(long)-len(short)-1])
}

// letterAdded reports whether the duplicate key long is short, a number,
// with one digit added at its end or its start that a letter may have
// written (0 1 2 5 8: O I L Z S B, rule 2 of normalize.DuplicateKey):
// "22908" is "INV-2290B" as well as "INV-22908", so it may be "INV-2290"
// with a letter added, a copy marked as AP clerks mark them.
func letterAdded(long, short string) bool {
	if len(long) != len(short)+1 || short == "" || !isDigit(short[0]) || !isDigit(short[len(short)-1]) {
		return false
	}
	const fromLetters = "01258"
	return strings.HasPrefix(long, short) && strings.IndexByte(fromLetters, long[len(short)]) >= 0 ||
		strings.HasSuffix(long, short) && strings.IndexByte(fromLetters, long[0]) >= 0
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func absDuration(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}
