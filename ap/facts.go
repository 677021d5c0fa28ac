package ap

import (
	"context"
	"fmt"
	"math"

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
//   - payments_in_flight (Long): draft payments of the bill;
//   - bill_duplicates (Long): the vendor's other bills, not cancelled,
//     whose reference has the same RefKey; bill_duplicate_settled (Bool):
//     one of them is paid in part or in full;
//   - bill_ref_unclear (Bool): the bill's reference has an empty RefKey
//     (missing, only separators, or a character that is not ASCII), so
//     duplicates of it can neither be found nor ruled out; it is then
//     never counted as a duplicate of another bill, nor another of it;
//     paid_refs_unclear (Long): the vendor's other bills, not cancelled and
//     paid in part or in full, whose reference has an empty RefKey: one of
//     them may be this invoice;
//   - open_credit (Long, minor units of the bill's currency): what the
//     vendor's posted credit notes in the bill's currency still hold that
//     is not applied to a bill (their residual, unless a refund of it is
//     in payment): the vendor owes it back, and it may have to reduce this
//     payment first;
//   - iban_current (Bool): the resolved account is the bill vendor's
//     current account (erp.Current); iban_cooling_off (Bool): its number
//     was set less than Config.CoolingOff ago;
//   - budget_currency (String): the mandate budget's currency;
//   - confirm_above and max_amount (Long, minor units): Config's
//     thresholds, so that an operator changes them without editing the
//     embedded policy.
//
// For ap.change_vendor_bank it gives what a person needs to judge the
// change, which no policy reads: vendor_name and vendor_phone (String: the
// vendor's name and phone number on file) and current_iban (String: the
// number of the vendor's current account, the one the change replaces; ""
// if none). It reads them while the vendor is held too.
//
// Other actions get no facts.
type payFacts struct {
	src erp.Source
	cfg Config
}

func (p payFacts) Facts(ctx context.Context, q gateway.FactQuery) (map[string]intent.Value, error) {
	if q.Action == ActionChangeVendorBank {
		return p.changeFacts(ctx, q)
	}
	if q.Action != ActionPayBill {
		return nil, nil
	}
	company := string(q.Owner)
	bs, err := p.src.Bills(ctx, company, erp.BillQuery{ID: q.Args["bill"].Str})
	if err != nil {
		return nil, err
	}
	if len(bs) != 1 {
		return nil, fmt.Errorf("ap: bill %s vanished while its vendor was held", q.Args["bill"].Str)
	}
	bill := bs[0]

	payments, err := p.src.Payments(ctx, company, erp.PaymentQuery{Bill: bill.ID})
	if err != nil {
		return nil, err
	}
	inFlight := 0
	for _, pm := range payments {
		if pm.State == erp.PaymentDraft {
			inFlight++
		}
	}

	siblings, err := p.src.Bills(ctx, company, erp.BillQuery{Vendor: bill.Vendor})
	if err != nil {
		return nil, err
	}
	key := RefKey(bill.Ref)
	dups, settled, unclearPaid := 0, false, 0
	var openCredit intent.Amount
	for _, s := range siblings {
		if s.Kind == erp.KindCreditNote && s.State == erp.StatePosted && s.Currency == bill.Currency && s.Residual > 0 && !s.PaymentState.Settled() {
			if openCredit > math.MaxInt64-s.Residual { // saturate: both are positive
				openCredit = math.MaxInt64
			} else {
				openCredit += s.Residual
			}
			continue
		}
		if s.ID == bill.ID || s.Kind != erp.KindBill || s.State == erp.StateCancelled {
			continue
		}
		paid := s.PaymentState != erp.NotPaid || s.Residual < s.Total
		switch k := RefKey(s.Ref); {
		case k == "":
			if paid {
				unclearPaid++
			}
		case k == key:
			dups++
			settled = settled || paid
		}
	}

	accountID := ""
	for _, r := range q.Resolved {
		if r.Param == "iban" {
			accountID = r.Provenance.RecordID
		}
	}
	accounts, err := p.src.BankAccounts(ctx, company, erp.BankAccountQuery{Vendor: bill.Vendor})
	if err != nil {
		return nil, err
	}
	cur, ok := erp.Current(accounts, bill.Vendor)
	isCurrent := ok && cur.ID == accountID && cur.Sanitized == q.Args["iban"].Str
	coolingOff := isCurrent && p.cfg.coolingOff(cur)

	return map[string]intent.Value{
		"bill_residual":          intent.Int(int64(bill.Residual)),
		"bill_already_paid":      intent.Bool(bill.PaymentState.Settled() || bill.Residual <= 0),
		"payments_in_flight":     intent.Int(int64(inFlight)),
		"bill_duplicates":        intent.Int(int64(dups)),
		"bill_duplicate_settled": intent.Bool(settled),
		"bill_ref_unclear":       intent.Bool(key == ""),
		"paid_refs_unclear":      intent.Int(int64(unclearPaid)),
		"open_credit":            intent.Int(int64(openCredit)),
		"iban_current":           intent.Bool(isCurrent),
		"iban_cooling_off":       intent.Bool(coolingOff),
		"budget_currency":        intent.Str(q.Budget.Currency),
		"confirm_above":          intent.Int(int64(p.cfg.ConfirmAbove)),
		"max_amount":             intent.Int(int64(p.cfg.MaxAmount)),
	}, nil
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
	accounts, err := p.src.BankAccounts(ctx, company, erp.BankAccountQuery{Vendor: vendor})
	if err != nil {
		return nil, err
	}
	current := ""
	if cur, ok := erp.Current(accounts, vendor); ok {
		current = cur.Sanitized
	}
	return map[string]intent.Value{
		"vendor_name":  intent.Str(vs[0].Name),
		"vendor_phone": intent.Str(vs[0].Phone),
		"current_iban": intent.Str(current),
	}, nil
}
