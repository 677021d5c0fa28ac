// Package erp is the contract between intentplane's accounts-payable pack
// and an ERP: the records it reads (vendors, their bank accounts, vendor
// bills and credit notes, payments, exchange rates) and the two writes it
// makes (register a payment, change a vendor's bank account). Source is implemented by Mem,
// an in-memory ERP for demos and tests, and by the Odoo connector; package
// erptest holds the conformance suite every implementation passes.
//
// Records follow Odoo 17's models (res.partner, res.partner.bank,
// account.move of type in_invoice and in_refund, account.payment,
// res.currency.rate) so that
// the connector maps them field for field. Amounts are integer minor units
// of their currency (cents for EUR), never floats; times are UTC.
//
// Every call is scoped to one company, named as mandates name their owner:
// an implementation never returns, pays or changes a record of another
// company, and answers about another company's record exactly as about a
// record that does not exist.
//
// Package erp imports only core/intent and the standard library; it must
// never import a connector, a pack, core/gateway or a store.
package erp

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/intentplane/intentplane/core/intent"
)

// Vendor is a supplier of a company: in Odoo a commercial partner
// (res.partner that is a company, or an individual without a parent
// company) with supplier_rank above zero. A contact person of a company is
// never a vendor itself: what is addressed to it belongs to its company
// (commercial_partner_id). A vendor without a company (company_id unset,
// Odoo's default in a single-company database) is one of every company's
// vendors, as Odoo shows it to every company.
type Vendor struct {
	// ID identifies the vendor in the ERP (res.partner id).
	ID string
	// Name is the vendor's name as on file.
	Name string
	// Phone is the vendor's phone number on file, as stored; call-backs
	// before a bank-detail change are made to it. Empty if none.
	Phone string
	// Active is false for an archived vendor.
	Active bool
	// Country is the ISO 3166-1 alpha-2 code of the vendor's country on
	// file (res.partner country_id, read as country_code), upper case; ""
	// if none is on file.
	Country string
}

// BankAccount is a vendor's bank account (res.partner.bank).
type BankAccount struct {
	// ID identifies the account in the ERP (res.partner.bank id).
	ID string
	// Vendor is the ID of the vendor holding it (partner_id).
	Vendor string
	// Number is the account number as it was typed (acc_number).
	Number string
	// Sanitized is Number with every character that is not an ASCII
	// letter or digit removed and letters upper-cased
	// (sanitized_acc_number); see Sanitize.
	Sanitized string
	// BIC is the bank's code as typed in the ERP (bank_id.bic, Odoo's
	// bank_bic): a BIC, or for a US account its ABA routing number, for a
	// UK account its sort code; "" if the account has no bank. With Number
	// and Country it identifies an account that is not an IBAN (see
	// normalize.ParseAccount).
	BIC string
	// Country is the ISO 3166-1 alpha-2 code of the account holder's
	// country (partner_id.country_id.code), "" if none is on file. A
	// connector sets it at least when the account's type depends on it
	// (a bank code of digits only, or a 14-digit number: a US or UK
	// account); it may leave it "" for an IBAN or an account at a BIC,
	// which name their country themselves.
	Country string
	// Trusted is Odoo's allow_out_payment ("Send Money"): only a person
	// allowed to validate bank accounts can set it.
	Trusted bool
	// Active is false for an archived account.
	Active bool
	// Sequence orders a vendor's accounts, lowest first (Odoo's sequence,
	// default 10); ties are broken by ID.
	Sequence int
	// SetAt is when the number was set or last trusted, in UTC: the
	// account's age is measured from it.
	SetAt time.Time
	// OtherHolders are, for an active account read with
	// BankAccountQuery.Holders, the IDs of the other partners of the
	// company (or of none) holding an active account of the same number
	// (Sanitized), whoever they are: a vendor, but also a customer or an
	// employee (Odoo 19's duplicate_bank_partner_ids, computed alike on
	// every version): a fraud signal. Sorted; nil otherwise.
	OtherHolders []string
}

// Kind is the type of a vendor document (account.move move_type).
type Kind string

// The kinds of vendor document.
const (
	KindBill       Kind = "in_invoice" // a vendor bill: money owed to the vendor
	KindCreditNote Kind = "in_refund"  // a credit note: reduces what is owed
)

// State is the accounting state of a bill (account.move state).
type State string

// The states of a bill.
const (
	StateDraft     State = "draft"
	StatePosted    State = "posted"
	StateCancelled State = "cancel"
)

// PaymentState is how much of a bill is settled (account.move
// payment_state).
type PaymentState string

// The payment states of a bill. Odoo Community never shows InPayment;
// treat it, Paid and Reversed as settled.
const (
	NotPaid   PaymentState = "not_paid"
	Partial   PaymentState = "partial"
	Paid      PaymentState = "paid"
	InPayment PaymentState = "in_payment"
	Reversed  PaymentState = "reversed"
	// Blocked is a bill a person put on hold for payment in the ERP
	// (Odoo 18 and later: "Block payment"); it is never paid until they
	// release it, and is not settled.
	Blocked PaymentState = "blocked"
)

// Settled reports whether nothing is left to pay: Paid, InPayment or
// Reversed.
func (s PaymentState) Settled() bool { return s == Paid || s == InPayment || s == Reversed }

// Bill is a vendor bill or credit note (account.move).
type Bill struct {
	// ID identifies the bill in the ERP (account.move id).
	ID string
	// Name is the bill's number given by the ERP when it is posted
	// ("BILL/2026/11/0001").
	Name string
	// Ref is the vendor's reference, as typed from the vendor's document
	// ("INV-2290"); several spellings of one reference may exist.
	Ref string
	// Vendor is the ID of the vendor: the commercial partner of the
	// partner the bill is addressed to (commercial_partner_id).
	Vendor string
	// VendorName is the vendor's name as the ERP displays it.
	VendorName string
	// Contact is the ID of the contact person the bill is addressed to
	// (partner_id) when that is not the vendor itself; empty otherwise.
	Contact string
	// Kind is KindBill or KindCreditNote.
	Kind Kind
	// Currency is the ISO 4217 code of the amounts ("EUR").
	Currency string
	// Total is the bill's total (amount_total), in minor units of
	// Currency; positive.
	Total intent.Amount
	// Residual is what is still owed (amount_residual), in minor units of
	// Currency: Total less payments and credit notes.
	Residual intent.Amount
	// Due is the due date (invoice_date_due), at 00:00 UTC; zero if none.
	Due time.Time
	// Date is the invoice date, the date the vendor printed on its
	// document (invoice_date), at 00:00 UTC; zero if none (a draft may
	// have none).
	Date time.Time
	// BankAccount is the ID of the bank account named on the bill
	// (partner_bank_id); empty if none. It is not an authority on where to
	// pay: Odoo lets the billing group point it at any account.
	BankAccount string
	// State is the accounting state.
	State State
	// PaymentState is how much is settled.
	PaymentState PaymentState
	// Reverses is, for a credit note, the ID of the bill it reduces
	// (reversed_entry_id); empty otherwise.
	Reverses string
	// Payments are, when BillQuery.WithPayments asked for them, the
	// payments registered against the bill under an idempotency key
	// (through intentplane), whatever their state, and the vendor's
	// payments made outside intentplane that BillQuery.PaymentsSince asks
	// for (see there: the first bill of a result may carry those of
	// other bills, with Bill empty); an implementation may give the
	// others too. Nil otherwise.
	Payments []Payment
}

// PaymentStatus is the state of a payment (account.payment state).
type PaymentStatus string

// The states of a payment. A draft payment is in flight: registered but
// not yet posted.
const (
	PaymentDraft     PaymentStatus = "draft"
	PaymentPosted    PaymentStatus = "posted"
	PaymentCancelled PaymentStatus = "cancel"
)

// Payment is an outgoing payment registered against one bill
// (account.payment).
type Payment struct {
	// ID identifies the payment in the ERP.
	ID string
	// Bill is the ID of the bill it pays; empty when unknown (a payment
	// made outside intentplane read with BillQuery.PaymentsSince) or
	// none (an advance).
	Bill string
	// Vendor is the ID of the vendor paid.
	Vendor string
	// BankAccount is the ID of the bank account paid to.
	BankAccount string
	// Amount is what was paid, in minor units of its currency.
	Amount intent.Money
	// Date is when the payment was registered, in UTC.
	Date time.Time
	// Day is the payment's accounting date (account.payment date) as
	// YYYY-MM-DD: the day in the company's calendar (its time zone) on
	// which it was registered; empty if unknown.
	Day string
	// State is draft (in flight), posted or cancel.
	State PaymentStatus
	// Key is the idempotency key it was registered under (the operation
	// hash); empty for payments made outside intentplane.
	Key string
	// Reconciled reports whether the ERP matched the whole payment with
	// bills or credit notes (Odoo's is_reconciled). A payment registered
	// on a bill that another payment settled at the same moment is not:
	// Odoo posts it and leaves it, or what exceeds the bill's residual,
	// unmatched. RegisterPayment never returns such a payment (see
	// Payer). Mem's posted payments always are.
	Reconciled bool
	// Unreconciled, in the answer of RegisterPayment only, lists the
	// credit notes of PaymentRequest.Credits that the ERP failed to
	// reconcile with the bill after the payment was made: the payment
	// stands, and a person reconciles them in the ERP. Empty normally.
	Unreconciled []string
}

// PaymentRequest asks to pay one bill to one of its vendor's accounts.
type PaymentRequest struct {
	// Bill is the ID of the bill to pay.
	Bill string
	// BankAccount is the ID of the account to pay to; it must be an
	// active, trusted account of the bill's vendor.
	BankAccount string
	// Amount is what to pay: in the bill's currency, more than zero and
	// at most the bill's residual.
	Amount intent.Money
	// Key is the idempotency key (the operation hash); required. A request
	// with a key already used returns the payment made then.
	Key string
	// Decided, if not nil, is the bill as the caller read it (with
	// BillQuery.WithPayments) while deciding this payment, after taking
	// an exclusive hold on the bill's vendor that it keeps until the
	// payment returns; Account is then the bank account as it read it in
	// the same decision. An implementation checks the request against
	// them (and a payment under Key among Decided.Payments is returned as
	// made) instead of reading them again: a read before the write is
	// never atomic with it in Odoo, so reading again narrows no race and
	// costs a round trip. The ERP's own checks still apply, and the
	// payment made is read back and compared with the request.
	Decided *Bill
	// Account is the bank account as read with Decided; required with it.
	Account *BankAccount
	// Credits are the IDs of credit notes to net with the payment; empty
	// means none. Amount is then what is paid in money, and the credit
	// notes settle the rest: once the payment is made, each is reconciled
	// with the bill, in order, as Odoo does when a bill's outstanding
	// debits are added to it (account.move.js_assign_outstanding_line).
	// Each must be a posted credit note of the bill's vendor, in the
	// bill's currency, with a residual above zero, and Amount plus their
	// residuals must be at most the bill's residual; otherwise the request
	// is refused (ErrRefused) with nothing written. After it, the bill's
	// residual is what it was less Amount less the credit notes'
	// residuals, and each credit note's residual is zero. The payment
	// comes first: if a reconciliation then fails, the payment stands and
	// Payment.Unreconciled names the credit notes left open, so money
	// never leaves gross of a credit it was netted with. A request whose
	// Key was used returns the payment made then and reconciles nothing.
	Credits []string
}

// BankChange asks to make a number a vendor's current bank account: the
// account is created (or an existing one of the vendor with the same
// sanitized number reused), trusted, activated and ordered first, its
// SetAt set to now, and the vendor's other accounts archived. SetAt is set
// to now for every account that was not already the vendor's current one,
// including an account that was trusted and active but not current: the
// cooling-off period of a changed account runs from SetAt. Only when the
// number already is the vendor's current account does SetAt stay as it
// was.
type BankChange struct {
	// Vendor is the ID of the vendor.
	Vendor string
	// Number is the new account number (an electronic-format IBAN).
	Number string
	// Key is the idempotency key (the operation hash); required. A change
	// with a key already used returns the account made then.
	Key string
}

// VendorQuery selects vendors; each empty field selects all.
type VendorQuery struct {
	// Limit, if above zero, returns at most that many vendors.
	Limit int
	// ID selects the vendor with this ID.
	ID string
	// Name selects vendors whose name equals it, ignoring case and
	// surrounding spaces.
	Name string
}

// BankAccountQuery selects bank accounts, archived ones included; each
// empty field selects all.
type BankAccountQuery struct {
	// ID selects the account with this ID.
	ID string
	// Vendor selects the accounts of the vendor with this ID.
	Vendor string
	// Number selects accounts whose sanitized number equals
	// Sanitize(Number), or, for a number of an IBAN's shape, that number
	// after "IBAN" (an account typed "IBAN DE89 …" or "IBAN: …", which
	// Odoo sanitizes to "IBANDE89…"; see SameNumber), in one read. The
	// sanitized number folds look-alikes in Odoo (ß is stored as SS): a
	// caller that matches a number compares the raw Number of each account
	// itself.
	Number string
	// Active selects active accounts only: archived accounts are never
	// candidates for a payment.
	Active bool
	// Holders, with Number, also selects the other accounts of every
	// vendor holding an account Number selects (active ones when Active
	// is set), so that one read tells whether the account is its
	// vendor's current one; and fills the OtherHolders of the active
	// accounts of Number.
	Holders bool
}

// BillQuery selects bills and credit notes; each empty or false field
// selects all.
type BillQuery struct {
	// ID selects the bill with this ID.
	ID string
	// Vendor selects the vendor's bills.
	Vendor string
	// Open selects posted vendor bills (not credit notes) with a residual
	// above zero.
	Open bool
	// Lookup selects the bills that a bill ID, number or vendor reference
	// typed as Lookup may name: the bill with that ID, those whose number
	// equals it ignoring case, and those whose reference matches
	// LookupPattern(Lookup), ignoring case: every reference that spells
	// Lookup the same up to case, separators and leading zeros, and some
	// more. The caller compares exactly.
	Lookup string
	// WithPayments fills each bill's Payments.
	WithPayments bool
	// PaymentsSince, with WithPayments and Vendor, is a day as
	// YYYY-MM-DD in the company's calendar (its time zone): the
	// vendor's payments made outside intentplane (no idempotency key)
	// that are posted, outgoing and dated (accounting date) on or after
	// it are given too, each once among the Payments of the result:
	// with the bill it pays, or, when the ERP's read cannot tell which
	// (a payment registered by hand in Odoo, or one reconciled with no
	// bill), with the first bill of the result (in ID order), Bill
	// empty; not given when the result has no bill. An implementation
	// may give more of them (Mem gives every payment with its bill).
	// Empty: none is asked for. A day that is not YYYY-MM-DD is refused
	// with an error wrapping ErrRefused.
	PaymentsSince string
	// OpenCredit selects posted credit notes (not bills) with a residual
	// above zero: credit not yet applied to a bill.
	OpenCredit bool
	// Limit, if above zero, returns at most that many bills, and Offset
	// skips that many first (both in ID order): a page of the selection.
	Limit, Offset int
	// Decision, with Vendor, narrows the selection to what deciding a
	// payment of one of the vendor's bills reads (see DecisionQuery):
	// the bill, the vendor's open documents and the duplicate control's
	// candidates, matched in the ERP, instead of the vendor's whole
	// history. The other fields still narrow it. Nil: no narrowing.
	Decision *DecisionQuery
	// NoVendorName leaves each bill's VendorName empty, for a caller that
	// shows no vendor's name or has it from elsewhere: the ERP is spared
	// naming what the bills refer to (Odoo computes a display name for
	// each record a bill refers to that it names: a third to a half of
	// the time of a read of bills on Odoo 17).
	NoVendorName bool
}

// CheckPaymentsSince returns an error wrapping ErrRefused if
// q.PaymentsSince is neither empty nor a day as YYYY-MM-DD.
func (q BillQuery) CheckPaymentsSince() error {
	if q.PaymentsSince == "" {
		return nil
	}
	if _, err := time.Parse(time.DateOnly, q.PaymentsSince); err != nil {
		return fmt.Errorf("%w: BillQuery.PaymentsSince %q is not a day as YYYY-MM-DD", ErrRefused, q.PaymentsSince)
	}
	return nil
}

// PaymentQuery selects payments; each empty or false field selects all.
type PaymentQuery struct {
	// Bill selects the payments of the bill with this ID.
	Bill string
	// Vendor selects the payments to the vendor with this ID, of any of
	// its bills; with Vendor alone, a payment to the vendor reconciled
	// with no bill (an advance) is selected too, with Bill empty.
	Vendor string
	// Posted selects posted payments only.
	Posted bool
	// Key selects the payments registered under this idempotency key
	// (Payment.Key; in Odoo, the marker in the payment's memo), matched
	// exactly: "k-1" never selects "k-10"'s. Reconciliation after a crash
	// asks for one key, so that it reads one payment, not every payment
	// of the company.
	Key string
	// Limit, if above zero, returns at most that many payments (the
	// first in ID order): Limit 1 with Vendor and Posted tells whether
	// the vendor was ever paid, in one bounded read.
	Limit int
}

// Reader reads a company's records. Results are ordered by ID (numerically
// when IDs are numbers). A company the ERP does not know has no records.
// An implementation may refuse, with an error, a query that selects more
// records than it reads at once (the Odoo connector's MaxRead): ask for a
// page instead, or, to decide a payment, only what the decision needs
// (BillQuery.Decision), whose size does not grow with the vendor's
// history.
// Errors other than the context's mean the ERP could not be read. Safe for
// concurrent use. In Odoo, its calls run as the read-only identity.
type Reader interface {
	Vendors(ctx context.Context, company string, q VendorQuery) ([]Vendor, error)
	BankAccounts(ctx context.Context, company string, q BankAccountQuery) ([]BankAccount, error)
	Bills(ctx context.Context, company string, q BillQuery) ([]Bill, error)
	Payments(ctx context.Context, company string, q PaymentQuery) ([]Payment, error)
}

// Payer registers payments. RegisterPayment pays r.Amount of r.Bill to
// r.BankAccount and returns the posted payment; the bill's residual and
// payment state change accordingly. It returns an error wrapping
// ErrNotFound when the bill is not one of the company's, and one wrapping
// ErrRefused, with nothing written, when the bill is not a posted vendor
// bill, nothing is left to pay, the amount is not above zero, above the
// residual or in another currency, or the account is not an active,
// trusted account of the bill's vendor. Concurrent requests never pay more
// than the residual: Mem is atomic per bill; Odoo is not (a payment
// wizard opened before another payment of the bill still pays in full,
// as when two gateways with separate stores pay one bill at the same
// moment), so the connector checks that Odoo matched the whole payment
// with the bill and, if not, cancels it at once and returns an error
// wrapping ErrNotWritten (nothing paid) or, if the cancellation fails,
// one saying which payment to cancel in the ERP. Safe for concurrent use.
// In Odoo it runs as the identity that registers payments and cannot touch
// bank accounts.
type Payer interface {
	RegisterPayment(ctx context.Context, company string, r PaymentRequest) (Payment, error)
}

// BankEditor changes vendors' bank accounts; only the registry-authority
// flow calls it, after a call-back and four eyes (see
// docs/registry-authority.md). ChangeBankAccount applies c (see
// BankChange) and returns the vendor's new current account. It returns an
// error wrapping ErrNotFound when the vendor is not one of the company's
// active vendors, and one wrapping ErrRefused when the number is empty or
// the key is missing. Safe for concurrent use. In Odoo it runs as the only
// identity allowed to create and trust bank accounts.
type BankEditor interface {
	ChangeBankAccount(ctx context.Context, company string, c BankChange) (BankAccount, error)
}

// Source is everything the accounts-payable pack needs from an ERP.
type Source interface {
	Reader
	Rates
	Payer
	BankEditor
}

// Errors of Source implementations.
var (
	// ErrNotFound: the record is not one of the company's, whether it
	// exists for another company or not at all.
	ErrNotFound = errors.New("erp: no such record for this company")
	// ErrRefused: the ERP refused the write and nothing was written.
	ErrRefused = errors.New("erp: refused")
	// ErrNotWritten: the write failed before anything was written, for a
	// reason that is not the request's: the ERP could not be reached (the
	// connection was refused), the identity lacks a right, or the ERP
	// failed and rolled the call back. Nothing was written; the request
	// may be made again once the cause is fixed. A write whose answer was
	// lost matches neither this nor ErrRefused: it may have been made.
	ErrNotWritten = errors.New("erp: nothing written")
	// ErrTooMany: a read matched more records than the implementation
	// reads at once (odoo.MaxRead), and fails rather than drop records a
	// decision needs. It is wrapped by a *TooManyError, which says how
	// many and of what. Asking again gives the same answer while the
	// records stay as they are: only a page of the selection
	// (BillQuery.Limit) can be read, or, for a payment's decision, what
	// it needs (BillQuery.Decision). Mem has no such limit.
	ErrTooMany = errors.New("erp: too many records for one read")
)

// TooManyError is the error of a read that matched more than Max records
// (ErrTooMany), for a caller that tells a person what could not be read.
type TooManyError struct {
	// Max is the most records the implementation reads at once.
	Max int
	// What names the records counted, plural: "vendors", "bills, credit
	// notes and payments".
	What string
}

func (e *TooManyError) Error() string {
	return fmt.Sprintf("%v: more than %d %s; ask for a page", ErrTooMany, e.Max, e.What)
}

// Unwrap returns ErrTooMany.
func (e *TooManyError) Unwrap() error { return ErrTooMany }

// SameNumber reports whether an account whose sanitized number is
// sanitized is selected by the sanitized query number (BankAccountQuery):
// the same, or, for a number of an IBAN's shape (two letters, two
// digits), the number after the "IBAN" that Odoo keeps of a typed
// "IBAN " prefix.
func SameNumber(sanitized, number string) bool {
	return sanitized == number || (ibanShaped(number) && len(sanitized) == len(number)+4 && sanitized[:4] == "IBAN" && sanitized[4:] == number)
}

// QueryNumbers returns the sanitized numbers a query for the sanitized
// number selects (SameNumber): number, and "IBAN"+number for a number of
// an IBAN's shape.
func QueryNumbers(number string) []string {
	if ibanShaped(number) {
		return []string{number, "IBAN" + number}
	}
	return []string{number}
}

// ibanShaped reports whether a sanitized number starts as an IBAN does:
// two letters, two digits.
func ibanShaped(n string) bool {
	return len(n) > 4 && isLetter(n[0]) && isLetter(n[1]) && isDigit(n[2]) && isDigit(n[3])
}

func isLetter(c byte) bool { return 'A' <= c && c <= 'Z' }
func isDigit(c byte) bool  { return '0' <= c && c <= '9' }

// Sanitize returns an account number as Odoo's sanitized_acc_number
// stores it: every character that is not an ASCII letter or digit removed,
// letters upper-cased ("fr76-3000 6000" becomes "FR7630006000").
func Sanitize(number string) string {
	var b strings.Builder
	b.Grow(len(number))
	for i := 0; i < len(number); i++ {
		c := number[i]
		switch {
		case 'a' <= c && c <= 'z':
			b.WriteByte(c - 'a' + 'A')
		case 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
			b.WriteByte(c)
		}
	}
	return b.String()
}

// CompareIDs orders record IDs as the ERP does: numeric IDs by value
// (shorter first, then by digits), anything else after them by bytes. It
// returns -1, 0 or +1.
func CompareIDs(a, b string) int {
	an, bn := numeric(a), numeric(b)
	switch {
	case an && bn && len(a) != len(b):
		if len(a) < len(b) {
			return -1
		}
		return 1
	case an && !bn:
		return -1
	case !an && bn:
		return 1
	}
	return strings.Compare(a, b)
}

func numeric(s string) bool {
	if s == "" || (len(s) > 1 && s[0] == '0') {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// current returns the vendor's current account among accounts: the active,
// trusted one with the lowest (Sequence, ID).
func current(accounts []BankAccount) (BankAccount, bool) {
	var best *BankAccount
	for i := range accounts {
		a := &accounts[i]
		if !a.Active || !a.Trusted {
			continue
		}
		if best == nil || cmp.Or(cmp.Compare(a.Sequence, best.Sequence), CompareIDs(a.ID, best.ID)) < 0 {
			best = a
		}
	}
	if best == nil {
		return BankAccount{}, false
	}
	return *best, true
}

// Current returns the vendor's current bank account among accounts (which
// may hold other vendors' accounts too): the active, trusted account of
// vendor with the lowest Sequence, ties broken by ID. It reports false
// when the vendor has no active, trusted account.
func Current(accounts []BankAccount, vendor string) (BankAccount, bool) {
	var mine []BankAccount
	for _, a := range accounts {
		if a.Vendor == vendor {
			mine = append(mine, a)
		}
	}
	return current(mine)
}
