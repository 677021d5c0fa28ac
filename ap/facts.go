package ap

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/intentplane/intentplane/core/contract"
	"github.com/intentplane/intentplane/core/gateway"
	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/erp"
)

var _ gateway.ContextProvider = payFacts{}

// payFacts is the context provider of ap.pay_bill. The gateway calls it
// while it holds the vendor named (the contract's Exclusive), so what it
// reads about the vendor's bills cannot change under a concurrent payment
// to the same vendor decided through a gateway sharing the store: neither
// of the bill itself, nor of another copy of the same invoice. (A bill of
// another vendor than the one named is refused by the policy; a posted
// bill's vendor never changes.) It gives:
//
//   - bill_residual (Long, minor units) and bill_already_paid (Bool: the
//     payment state is paid, in_payment or reversed, or nothing is owed);
//   - bill_blocked (Bool): a person blocked the bill for payment in the
//     ERP (erp.Blocked; Odoo 18 and later), which the policy refuses at
//     decision, as the ERP's connector does again at execution;
//   - payments_in_flight (Long): draft payments of the bill;
//   - the duplicate control (suspectDuplicates, docs/controls.md), which
//     compares the bill with the vendor's other bills, not cancelled, by
//     normalize.DuplicateKey, amount, invoice dates and resubmission:
//     bill_duplicate_settled (Bool): it is a likely duplicate of a bill
//     paid in part or in full; bill_duplicates (Long): the bills it is a
//     likely duplicate of that are unpaid or draft, and those it is a
//     possible duplicate of; bill_ref_unclear (Bool): its reference cannot
//     be compared (no key) and a bill of the vendor of the same amount,
//     paid in part or in full, could be the same invoice; paid_refs_unclear (Long): paid bills of
//     the same amount whose reference cannot be compared; duplicate_of
//     (String): the suspected bills for people (number, vendor reference,
//     amount, invoice date, paid or not, and why), "" if none;
//   - open_credit (Long, minor units of the bill's currency): what the
//     vendor's posted credit notes in the bill's currency still hold that
//     is not applied to a bill (their residual, unless a refund of it is
//     in payment): the vendor owes it back, and it may have to reduce this
//     payment first;
//   - bill_total, bill_same_amount_paid, bill_credit, bill_net_due and
//     bill_credit_notes: instalments and the credit notes netted with the
//     payment (see termsFacts);
//   - outside_bill, outside_today and outside_week (Long, minor units of
//     the company's currency, each payment converted at this decision's
//     rate of its currency): what the ERP shows paid that intentplane did
//     not register, added by the gateway to the totals paid_bill,
//     paid_today and paid_week (see totals): of the bill, its total less
//     its residual less the payments registered through intentplane (so
//     credit notes applied to it count as paid); to the vendor, its
//     payments without an idempotency key, not cancelled, in any
//     currency, whose accounting date is today or in this week in
//     Config.Zone. They are read with the bills
//     (erp.BillQuery.PaymentsSince, the Monday of this week): the Odoo
//     connector gives the vendor's posted outgoing payments made by hand
//     from that day on with the first bill, so each counts once;
//   - vendor_name (String): the vendor's name on file, for the person
//     asked to approve: as the vendors registry read it in this decision
//     (the bills are read without names, erp.BillQuery.NoVendorName; see
//     vendorName);
//   - bill_credited_note (String, only when credit notes reversing the
//     bill settled part of it, see creditedBill): that part in the
//     company's currency, "of which 50.00 EUR settled by credit notes,
//     not paid", shown after paid_bill's amount (contract.Total.Note);
//   - budget_currency (String): the currency of the mandate's budget the
//     payment is reserved against: the bill's currency when the mandate
//     has a budget in it (its budget or one of its budgets), else the
//     currency of its main budget, which the policy refuses as a
//     mismatch;
//   - confirm_above, four_eyes_daily_above, max_amount and
//     max_vendor_total (Long, minor units of the company's currency):
//     Config's thresholds (hundredths of a unit) scaled to that minor
//     unit (conversion.threshold), so that an operator changes them
//     without editing the embedded policy;
//   - the conversion into the company's currency (conversion), in which
//     the thresholds and the totals apply: company_currency (String),
//     amount_company (Long: the payment's amount in minor units of it,
//     converted exactly at the ERP's rate of the payment's date and
//     rounded half up, as Odoo converts; the amount itself for a bill in
//     the company's currency), rate_missing (String: a currency the
//     ERP holds no rate of for that date, the bill's or an outside
//     payment's, which the policy refuses; "" if none), and for the
//     receipt and the approver rate_value, rate_date and rate_source (the
//     bill currency's rate as the ERP keeps it: units per unit of the
//     company's currency, its date, the record it was read from; "1",
//     the day and "company currency" for the company's own) and rate (all
//     of that in words, "" for the company's own currency);
//   - vendor_first_payment (Bool): the ERP holds no posted payment to the
//     vendor, whether made through intentplane or by hand (firstPayment).
//
// For ap.change_vendor_bank it gives what a person needs to judge the
// change, which no policy reads: vendor_name and vendor_phone (String: the
// vendor's name and phone number on file) and current_iban (String: the
// key of the vendor's current account (see AccountKey), the one the change
// replaces; "" if none; as typed in the ERP when it is not a valid account
// as typed), current_iban_since and current_iban_country (String: the day
// that account was set, as 2006-01-02, and the ISO 3166-1 code of its
// bank's country; "" if unknown or none), and,
// when an active account of the vendor is typed with look-alikes,
// current_iban_note (String: which, and that it is unusable until
// corrected in the ERP). It reads them while the vendor is held too.
//
// It reads all of that in two calls, and one more for a bill in another
// currency than the company's (its rate; and one per further currency of
// a payment made by hand this week): what the decision needs of the
// vendor's documents (decisionRead, erp.BillQuery.Decision: the bill,
// the vendor's open bills and credit notes, the credit notes reversing
// the bill, and the duplicate control's candidates, which the ERP finds
// in the vendor's whole history, see suspectsOf) with the payments of
// the bill registered through intentplane and the vendor's posted
// payments of this week (erp.BillQuery.WithPayments, PaymentsSince),
// without the vendor's name; and at most one posted payment to the
// vendor (firstPayment), unless a payment of this week already shows it
// was paid. It keeps the bill for the payment's execution (see
// decided). The read's size does not grow with the vendor's history. The vendor's country and the country of the account's
// bank are the records' attributes (vendor_country, iban_country). Whether the account is the vendor's current one
// and in its cooling-off period are the account's attributes
// (iban_current, iban_cooling_off), read with it by the bank-accounts
// registry in the same decision.
//
// A vendor with more open bills and credit notes, candidates and
// payments of this week than the ERP gives in one read (erp.ErrTooMany:
// odoo.MaxRead, 2,000) cannot be paid: its checks need them all. The
// error then tells the agent so (see tooMany), for trying again will not
// help. A long history alone never is refused.
//
// Other actions get no facts.
type payFacts struct {
	src     erp.Source
	cfg     Config
	decided *decided
}

func (p payFacts) Facts(ctx context.Context, q gateway.FactQuery) (map[string]intent.Value, error) {
	if q.Action == ActionChangeVendorBank {
		return p.changeFacts(ctx, q)
	}
	if q.Action != ActionPayBill {
		return nil, nil
	}
	company, billID := string(q.Owner), q.Args["bill"].Str
	siblings, err := p.decisionRead(ctx, company, q.Args["vendor"].Str, billID, weekStart(q.Now, p.cfg.Zone))
	if err != nil {
		return nil, err
	}
	bill, siblings, err := p.billAmong(ctx, company, billID, siblings)
	if err != nil {
		return nil, err
	}
	bill = ownPayments(bill)
	p.decided.keepBill(company, bill)
	openCredit := openCreditOf(bill, siblings)
	dup := suspectDuplicates(bill, siblings, p.cfg.DuplicateWindow)
	first := !paidThroughGateway(siblings)
	if first { // not known from the bills just read: ask the ERP
		if first, err = firstPayment(ctx, p.src, company, q.Args["vendor"].Str); err != nil {
			return nil, err
		}
	}

	conv, err := p.convert(ctx, q, bill.Currency)
	if err != nil {
		return nil, err
	}
	amountCompany, err := conv.amount(intent.Money{Currency: bill.Currency, Amount: intent.Amount(q.Args["amount"].Int)})
	if err != nil {
		return nil, err
	}
	today, week, err := p.outside(ctx, siblings, q, conv)
	if err != nil {
		return nil, err
	}
	outBill, err := conv.amount(intent.Money{Currency: bill.Currency, Amount: outsideBill(bill)})
	if err != nil {
		return nil, err
	}
	facts := map[string]intent.Value{
		"outside_bill":           intent.Int(int64(max(outBill, 0))),
		"outside_today":          intent.Int(int64(today)),
		"outside_week":           intent.Int(int64(week)),
		"four_eyes_daily_above":  intent.Int(int64(conv.threshold(p.cfg.FourEyesDailyAbove))),
		"max_vendor_total":       intent.Int(int64(conv.threshold(p.cfg.MaxVendorTotal))),
		"bill_residual":          intent.Int(int64(bill.Residual)),
		"bill_already_paid":      intent.Bool(bill.PaymentState.Settled() || bill.Residual <= 0),
		"bill_blocked":           intent.Bool(bill.PaymentState == erp.Blocked),
		"payments_in_flight":     intent.Int(int64(inFlightOf(bill))),
		"bill_duplicates":        intent.Int(int64(dup.others)),
		"bill_duplicate_settled": intent.Bool(dup.likelyOfSettled),
		"duplicate_of":           intent.Str(dup.text()),
		"bill_ref_unclear":       intent.Bool(dup.refUnclear),
		"paid_refs_unclear":      intent.Int(int64(dup.paidUnclear)),
		"open_credit":            intent.Int(int64(openCredit)),
		"budget_currency":        intent.Str(budgetCurrency(q, bill.Currency)),
		"confirm_above":          intent.Int(int64(conv.threshold(p.cfg.ConfirmAbove))),
		"max_amount":             intent.Int(int64(conv.threshold(p.cfg.MaxAmount))),
		"vendor_first_payment":   intent.Bool(first),
	}
	name, err := p.vendorName(ctx, company, bill)
	if err != nil {
		return nil, err
	}
	if name != "" {
		facts["vendor_name"] = intent.Str(name)
	}
	maps.Copy(facts, conv.facts(amountCompany))
	if err := creditedNote(facts, bill, siblings, conv); err != nil {
		return nil, err
	}
	terms, credits, err := termsFacts(ctx, bill, siblings, intent.Amount(q.Args["amount"].Int), conv)
	if err != nil {
		return nil, err
	}
	maps.Copy(facts, terms)
	p.decided.keepCredits(company, bill.ID, credits)
	return facts, nil
}

// billAmong returns the bill billID among its vendor's bills siblings,
// and siblings; a bill of another vendor (which the policy refuses) is
// read alone for the other facts, and is then its own only sibling.
func (p payFacts) billAmong(ctx context.Context, company, billID string, siblings []erp.Bill) (erp.Bill, []erp.Bill, error) {
	if i := slices.IndexFunc(siblings, func(b erp.Bill) bool { return b.ID == billID }); i >= 0 {
		return siblings[i], siblings, nil
	}
	bs, err := p.src.Bills(ctx, company, erp.BillQuery{ID: billID, WithPayments: true})
	if err != nil {
		return erp.Bill{}, nil, err
	}
	if len(bs) != 1 {
		return erp.Bill{}, nil, fmt.Errorf("ap: bill %s vanished while its vendor was held", billID)
	}
	return bs[0], bs, nil
}

// vendorName is the name of bill's vendor for people (the fact
// vendor_name): as the read of bill gave it (billAmong reads a bill of
// another vendor with its name), else as the vendors registry read it
// in this decision (decided.keepVendor), else, when the decision waited
// longer than decidedTTL for its hold on the vendor, as the ERP has it
// now (one call). "" if the vendor is not found.
func (p payFacts) vendorName(ctx context.Context, company string, bill erp.Bill) (string, error) {
	if bill.VendorName != "" {
		return bill.VendorName, nil
	}
	if name, ok := p.decided.vendorName(company, bill.Vendor); ok {
		return name, nil
	}
	vs, err := p.src.Vendors(ctx, company, erp.VendorQuery{ID: bill.Vendor, Limit: 1})
	if err != nil || len(vs) != 1 {
		return "", err
	}
	return vs[0].Name, nil
}

// inFlightOf counts b's payments in flight (draft).
func inFlightOf(b erp.Bill) int {
	n := 0
	for _, pm := range b.Payments {
		if pm.State == erp.PaymentDraft {
			n++
		}
	}
	return n
}

// openCreditOf is what the vendor's posted, unsettled credit notes in
// b's currency still hold, saturating at the largest Amount.
func openCreditOf(b erp.Bill, siblings []erp.Bill) intent.Amount {
	var open intent.Amount
	for _, s := range siblings {
		if s.Kind == erp.KindCreditNote && s.State == erp.StatePosted && s.Currency == b.Currency && s.Residual > 0 && !s.PaymentState.Settled() {
			if open > math.MaxInt64-s.Residual { // saturate: both are positive
				open = math.MaxInt64
			} else {
				open += s.Residual
			}
		}
	}
	return open
}

// creditedNote sets the fact bill_credited_note (see payFacts) when
// credit notes reversing bill settled part of it; facts already hold
// company_currency.
func creditedNote(facts map[string]intent.Value, bill erp.Bill, siblings []erp.Bill, conv *conversion) error {
	credited := creditedBill(bill, siblings)
	if credited <= 0 {
		return nil
	}
	c, err := conv.amount(intent.Money{Currency: bill.Currency, Amount: credited})
	if err != nil {
		return err
	}
	facts["bill_credited_note"] = intent.Str(fmt.Sprintf("of which %s %s settled by credit notes, not paid",
		money(c, facts["company_currency"].Str), facts["company_currency"].Str))
	return nil
}

// creditedBill is what the posted credit notes among siblings that
// reverse b (erp.Bill.Reverses) have applied, in b's currency: each one's
// total less its residual. The total paid_bill counts it as paid (see
// outsideBill); bill_credited_note says it apart.
func creditedBill(b erp.Bill, siblings []erp.Bill) intent.Amount {
	var sum intent.Amount
	for _, s := range siblings {
		if s.Kind == erp.KindCreditNote && s.State == erp.StatePosted && s.Reverses == b.ID && s.Currency == b.Currency && s.Total > s.Residual {
			sum = addAmount(sum, s.Total-s.Residual)
		}
	}
	return sum
}

// outsideBill is what the ERP shows paid of b that intentplane did not
// register: its total less its residual less the payments registered
// under an idempotency key and not cancelled; never below zero.
func outsideBill(b erp.Bill) intent.Amount {
	paid := b.Total - b.Residual
	for _, pm := range b.Payments {
		if pm.Key != "" && pm.State != erp.PaymentCancelled && pm.Amount.Currency == b.Currency {
			paid -= pm.Amount.Amount
		}
	}
	return max(paid, 0)
}

// outside returns what the ERP shows paid to the vendor of bills today
// and in this week (q.Now in the company's zone) without an idempotency
// key, in the company's currency (in which the gateway keeps the totals),
// each payment converted at the rate of this decision (conv): payments
// made outside intentplane.
func (p payFacts) outside(ctx context.Context, bills []erp.Bill, q gateway.FactQuery, conv *conversion) (today, week intent.Amount, err error) {
	day, wk := contract.Total{Window: contract.Day, Zone: p.cfg.Zone}, contract.Total{Window: contract.Week, Zone: p.cfg.Zone}
	nowDay, nowWeek := day.Period(q.Now, ""), wk.Period(q.Now, "")
	for _, b := range bills {
		for _, pm := range b.Payments {
			if pm.Key != "" || pm.State == erp.PaymentCancelled || pm.Amount.Amount <= 0 {
				continue
			}
			at := pm.Date
			if d, err := time.ParseInLocation(time.DateOnly, pm.Day, p.cfg.Zone); err == nil {
				at = d.Add(12 * time.Hour) // midday: the same day in the zone
			}
			inDay, inWeek := day.Period(at, "") == nowDay, wk.Period(at, "") == nowWeek
			if !inWeek { // a payment of another week needs no rate
				continue
			}
			if err := conv.need(ctx, pm.Amount.Currency); err != nil {
				return 0, 0, err
			}
			amount, err := conv.amount(pm.Amount)
			if err != nil {
				return 0, 0, err
			}
			if inDay {
				today = addAmount(today, max(amount, 0))
			}
			week = addAmount(week, max(amount, 0))
		}
	}
	return today, week, nil
}

// weekStart is the Monday of now's ISO week in zone (UTC if nil), as
// YYYY-MM-DD: the first day of the window of outside_week.
func weekStart(now time.Time, zone *time.Location) string {
	if zone == nil {
		zone = time.UTC
	}
	d := now.In(zone)
	return d.AddDate(0, 0, -(int(d.Weekday())+6)%7).Format(time.DateOnly)
}

// addAmount returns a+b for a and b above zero, saturating.
func addAmount(a, b intent.Amount) intent.Amount {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

// budgetCurrency is the fact budget_currency (see payFacts): currency if
// one of the mandate's budgets is in it, else the main budget's currency.
func budgetCurrency(q gateway.FactQuery, currency string) string {
	for _, b := range q.Budgets {
		if b.Currency == currency {
			return currency
		}
	}
	return q.Budget.Currency
}

// changeFacts gives the facts of ap.change_vendor_bank (see payFacts).
func (p payFacts) changeFacts(ctx context.Context, q gateway.FactQuery) (map[string]intent.Value, error) {
	company, vendor := string(q.Owner), q.Args["vendor"].Str
	vs, err := p.src.Vendors(ctx, company, erp.VendorQuery{ID: vendor})
	if err != nil {
		return nil, err
	}
	if len(vs) != 1 {
		return nil, fmt.Errorf("ap: vendor %s vanished while it was held", vendor)
	}
	accounts, err := p.src.BankAccounts(ctx, company, erp.BankAccountQuery{Vendor: vendor, Active: true})
	if err != nil {
		return nil, err
	}
	current, since, country := "", "", ""
	if cur, ok := erp.Current(accounts, vendor); ok {
		var ok bool
		if current, ok = keyOf(cur); !ok {
			current = cur.Number // as typed: the folded number would look clean
		}
		if !cur.SetAt.IsZero() {
			since = cur.SetAt.UTC().Format(time.DateOnly)
		}
		country = accountCountry(cur)
	}
	facts := map[string]intent.Value{
		"vendor_name":          intent.Str(vs[0].Name),
		"vendor_phone":         intent.Str(vs[0].Phone),
		"current_iban":         intent.Str(current),
		"current_iban_since":   intent.Str(since),
		"current_iban_country": intent.Str(country),
	}
	var notes []string
	for _, a := range accounts {
		if !usable(a) {
			notes = append(notes, unusableText(a))
		}
	}
	if len(notes) > 0 {
		facts["current_iban_note"] = intent.Str(strings.Join(notes, " "))
	}
	return facts, nil
}

// tooMany returns err, or, when it is a read of more records than the ERP
// gives at once (erp.ErrTooMany), a gateway.VisibleError wrapping it
// that tells the agent that this vendor cannot be paid through
// intentplane and that the user can pay the bill in the ERP itself.
func tooMany(err error) error {
	if !errors.Is(err, erp.ErrTooMany) {
		return err
	}
	what := "more open bills, credit notes, payments and bills resembling this one in the ERP than intentplane reads in one decision"
	var tm *erp.TooManyError
	if errors.As(err, &tm) && tm.Max > 0 && tm.What != "" {
		what = fmt.Sprintf("more than %s %s in the ERP, more than intentplane reads in one decision", thousands(tm.Max), tm.What)
	}
	return gateway.Visible("The vendor has "+what+", and the checks of this payment (open credit, duplicate invoices) need them all. "+
		"intentplane cannot pay this vendor's bills today: tell the user to pay this bill in the ERP itself.", err)
}

// thousands formats n >= 0 with its thousands separated by commas: 2000
// is "2,000".
func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
