package erp

import (
	"strings"
	"time"

	"github.com/intentplane/intentplane/core/intent"
)

// DecisionQuery is BillQuery.Decision: it narrows a read of one vendor's
// documents (BillQuery.Vendor, required: without it the query selects
// nothing) to what deciding a payment of one of its bills needs, so that
// the read's cost follows what is open and what resembles the bill, not
// the vendor's age. It selects, of the vendor:
//
//   - the bill Bill itself, and every credit note reversing it (whatever
//     its state and residual);
//   - the open documents: posted bills and posted credit notes with a
//     residual above zero (what BillQuery.Open and OpenCredit select);
//   - the bills, not cancelled, that Suspects selects, of any date, and
//     the posted credit notes reversing them.
//
// With WithPayments, each bill read carries the payments registered
// against it under an idempotency key (whatever their state); with
// PaymentsSince too, the vendor's posted outgoing payments dated on or
// after that day are given, made by hand or through intentplane: each
// with its bill when that bill is read, else with the first bill of the
// result (Payment.Bill naming its own bill, or empty for one made by
// hand). A caller that looks at one bill's own payments compares
// Payment.Bill.
type DecisionQuery struct {
	// Bill is the ID of the bill to pay; required.
	Bill string
	// Suspects preselects the bills the duplicate control compares the
	// bill with.
	Suspects Suspects
}

// Suspects selects, among a vendor's bills, those that may be the same
// invoice as one bill: the candidates of a duplicate control, matched in
// the ERP itself (in Odoo, by the domain of one search) so that the
// vendor's whole history is searched without being read. A bill is
// selected when one of the following holds (an empty field selects
// nothing):
//
//   - its reference holds one of Refs (RefPattern.Matches);
//   - its total is within Near of Amount (Near zero: is Amount), in
//     Currency, whatever its date;
//   - its invoice date is within [From, To] (both set, days at 00:00
//     UTC), whatever its total;
//   - it has no reference (an empty ref: Odoo's False), when NoRef is set.
type Suspects struct {
	// Refs are patterns of the references of the candidates; see
	// RefPattern.
	Refs []RefPattern
	// Currency is the ISO 4217 code of Amount.
	Currency string
	// Amount is the bill's total, in minor units of Currency; zero
	// selects no bill by its amount.
	Amount intent.Amount
	// Near is the tolerance of the totals selected around Amount, in
	// minor units, at least zero.
	Near intent.Amount
	// From and To bound the invoice dates selected whatever the total;
	// both zero: none.
	From, To time.Time
	// NoRef selects the bills without a reference.
	NoRef bool
}

// Matches reports whether s selects the bill b by its reference, total
// and invoice date (its vendor, kind and state are the query's).
func (s Suspects) Matches(b Bill) bool {
	for _, p := range s.Refs {
		if p.Matches(b.Ref) {
			return true
		}
	}
	if s.NoRef && b.Ref == "" {
		return true
	}
	if !s.From.IsZero() && !s.To.IsZero() && !b.Date.IsZero() && !b.Date.Before(s.From) && !b.Date.After(s.To) {
		return true
	}
	return s.Amount > 0 && b.Currency == s.Currency && s.Near >= 0 && b.Total >= s.Amount-s.Near && b.Total <= s.Amount+s.Near
}

// RefPattern selects the references that hold, in order, one character
// of each of its elements, with anything before, between and after: each
// element is the set of characters (ASCII letters and digits, letters
// upper-case) any one of which may stand at its place, compared ignoring
// ASCII case. {"2Z", "2Z", "9", "0O"} matches "INV-2290", "inv 229o",
// "2 290", "Z-2.9/0" and "12290"; not "2209" or "INV-229". It is a
// subsequence match, so that a reference typed with separators, leading
// zeros or words around its number still holds the pattern of its number
// (see ap's duplicate control for how the pattern is built from a key).
// An element with a character that is not an ASCII letter or digit
// matches nothing: such a pattern selects no reference.
type RefPattern []string

// Matches reports whether ref holds p (see RefPattern). An empty pattern
// matches nothing.
func (p RefPattern) Matches(ref string) bool {
	if len(p) == 0 || !p.valid() {
		return false
	}
	i := 0
	for j := 0; j < len(ref) && i < len(p); j++ {
		c := ref[j]
		if 'a' <= c && c <= 'z' {
			c -= 'a' - 'A'
		}
		if strings.IndexByte(p[i], c) >= 0 {
			i++ // the earliest match leaves the most for the rest
		}
	}
	return i == len(p)
}

// valid reports whether every element of p is a non-empty set of ASCII
// upper-case letters and digits.
func (p RefPattern) valid() bool {
	for _, e := range p {
		if e == "" {
			return false
		}
		for i := 0; i < len(e); i++ {
			if !isLetter(e[i]) && !isDigit(e[i]) {
				return false
			}
		}
	}
	return true
}

// Likes returns SQL LIKE patterns without their enclosing % ("2%2%9%0"),
// matched ignoring case (Odoo's ilike), that together select every
// reference p matches (RefPattern.Matches) and, when p's elements have
// more alternatives than limit patterns can spell, some more: an element
// whose characters cannot all be spelled becomes _ (any one character),
// the elements with the most alternatives first. It returns nil for a
// pattern that matches nothing. limit below 1 means 1.
func (p RefPattern) Likes(limit int) []string {
	if len(p) == 0 || !p.valid() {
		return nil
	}
	limit = max(limit, 1)
	elems := append([]string(nil), p...)
	for product(elems) > limit {
		widest := 0
		for i, e := range elems {
			if len(e) > len(elems[widest]) {
				widest = i
			}
		}
		elems[widest] = "_"
	}
	out := []string{""}
	for i, e := range elems {
		var next []string
		for _, prefix := range out {
			if i > 0 {
				prefix += "%"
			}
			for j := 0; j < len(e); j++ {
				next = append(next, prefix+e[j:j+1])
			}
		}
		out = next
	}
	return out
}

// product is how many patterns elems spell, capped above at 1<<20.
func product(elems []string) int {
	n := 1
	for _, e := range elems {
		n *= len(e)
		if n > 1<<20 {
			return 1 << 20
		}
	}
	return n
}
