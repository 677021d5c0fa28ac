package ap

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/intentplane/intentplane/core/gateway"
	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/normalize"
	"github.com/intentplane/intentplane/erp"
)

// executor carries out allowed operations on the ERP with resolved values
// only, for the company that owns the mandate. The ERP checks a payment
// again (bill, account, amount, currency) whatever the policy decided.
// Outputs are JSON text.
type executor struct {
	src     erp.Source
	cfg     Config // CoolingOff and Now, for get_vendor's in_cooling_off
	decided *decided
}

var (
	_ gateway.Executor = executor{}
	_ gateway.Settler  = executor{}
)

// Lookup implements gateway.Settler for reconciliation after a crash: a
// payment (ap.pay_bill) executed if the company has a payment registered
// under the operation hash as its idempotency key (erp.Payment.Key: the
// memo of an Odoo payment), whatever its state since: one read of the
// payments under that key (erp.PaymentQuery.Key), never every payment of
// the company. Only payments hold a
// budget reservation, so Lookup of any other action is an error. It reads
// as the ERP's reader and writes nothing.
func (x executor) Lookup(ctx context.Context, owner intent.Owner, action intent.Action, hash intent.OperationHash) (bool, error) {
	if action != ActionPayBill {
		return false, fmt.Errorf("ap: %s keeps no idempotency record to settle", action)
	}
	key := hash.String()
	ps, err := x.src.Payments(ctx, string(owner), erp.PaymentQuery{Key: key})
	if err != nil {
		return false, err
	}
	for _, p := range ps {
		if p.Key == key {
			return true, nil
		}
	}
	return false, nil
}

// The JSON shapes of the outputs. Amounts are exact decimals in strings.
type (
	billJSON struct {
		Bill         string `json:"bill"`
		Number       string `json:"number"`
		Ref          string `json:"ref,omitempty"`
		Vendor       string `json:"vendor"`
		VendorName   string `json:"vendor_name"`
		Currency     string `json:"currency"`
		Total        string `json:"total,omitempty"`    // absent when the currency is not supported
		Residual     string `json:"residual,omitempty"` // absent when the currency is not supported
		Due          string `json:"due,omitempty"`
		PaymentState string `json:"payment_state"`
		Note         string `json:"note,omitempty"` // why the amounts are absent
		// Credit is the vendor's open credit that a payment of the bill
		// nets (see creditsFor), NetDue what is then left to pay in
		// money; both absent without credit.
		Credit string `json:"credit,omitempty"`
		NetDue string `json:"net_due,omitempty"`
	}
	listJSON struct {
		Bills      []billJSON `json:"bills"`
		NextOffset int        `json:"next_offset,omitempty"` // set when there are more
		offset     int        // of this page, for the summary
	}
	accountJSON struct {
		IBAN        string `json:"iban"`
		Since       string `json:"since"`
		CoolingOff  bool   `json:"in_cooling_off,omitempty"` // payments to it need four eyes
		BankAccount string `json:"bank_account"`
		// Shared says, when its number is on file for other vendors too,
		// which, and that nothing is paid to it until that is corrected.
		Shared string `json:"shared,omitempty"`
	}
	vendorJSON struct {
		Vendor  string       `json:"vendor"`
		Name    string       `json:"name"`
		Active  bool         `json:"active"`
		Account *accountJSON `json:"current_account"`
		// NoCurrent says why Account is null.
		NoCurrent string `json:"no_current_account,omitempty"`
		// Untrusted lists accounts on file the ERP does not allow
		// payments to, Unusable those that cannot be paid as typed.
		Untrusted []unusableJSON `json:"untrusted_accounts,omitempty"`
		Unusable  []unusableJSON `json:"unusable_accounts,omitempty"`
	}
	unusableJSON struct {
		BankAccount string `json:"bank_account"`
		Number      string `json:"number_as_typed"`
		Why         string `json:"why"`
	}
	paidJSON struct {
		Payment      string `json:"payment"`
		Bill         string `json:"bill"`
		Number       string `json:"number"`
		Ref          string `json:"ref,omitempty"`
		Amount       string `json:"amount"`
		Currency     string `json:"currency"`
		IBAN         string `json:"paid_to"`
		Date         string `json:"date,omitempty"` // the payment's date in the company's calendar
		Residual     string `json:"residual"`
		PaymentState string `json:"payment_state"`
		// CreditNotes are the credit notes netted with the payment, and
		// Note what a person must still do about them.
		CreditNotes []string `json:"credit_notes_applied,omitempty"`
		Note        string   `json:"note,omitempty"`
	}
	changedJSON struct {
		Vendor      string `json:"vendor"`
		BankAccount string `json:"bank_account"`
		IBAN        string `json:"iban"`
		Since       string `json:"since"`
	}
)

func (x executor) Execute(ctx context.Context, op intent.Operation, hash intent.OperationHash) (gateway.Result, error) {
	company := string(op.Owner)
	var out any
	var summary string
	switch op.Action {
	case ActionListOpenBills:
		l, err := x.list(ctx, company, op)
		if err != nil {
			return gateway.Result{}, err
		}
		out, summary = l, fmt.Sprintf("%d open bills from %d", len(l.Bills), l.offset)
	case ActionGetVendor:
		vj, err := x.vendor(ctx, company, op.Args["vendor"].Str)
		if err != nil {
			return gateway.Result{}, err
		}
		out, summary = vj, "vendor "+vj.Vendor
	case ActionPayBill:
		return x.pay(ctx, company, op, hash)
	case ActionChangeVendorBank:
		a, err := x.src.ChangeBankAccount(ctx, company, erp.BankChange{Vendor: op.Args["vendor"].Str, Number: op.Args["iban"].Str, Key: hash.String()})
		if err != nil {
			return gateway.Result{}, refusedByERP(err)
		}
		out = changedJSON{Vendor: a.Vendor, BankAccount: a.ID, IBAN: normalize.FormatIBAN(a.Sanitized), Since: timeOut(a.SetAt)}
		summary = "bank account " + a.ID + " of vendor " + a.Vendor
	default:
		return gateway.Result{}, notExecuted("the accounts-payable pack has no such action", nil)
	}
	b, err := json.Marshal(out)
	if err != nil {
		return gateway.Result{}, err
	}
	return gateway.Result{Output: string(b), Summary: summary}, nil
}

// list reads a page of the company's open bills (ap.list_open_bills).
func (x executor) list(ctx context.Context, company string, op intent.Operation) (listJSON, error) {
	// The contract bounds both (contract.IntegerIn): 1..MaxListLimit, 0 or more.
	limit, offset := DefaultListLimit, 0
	if v, ok := op.Args["limit"]; ok {
		limit = int(v.Int)
	}
	if v, ok := op.Args["offset"]; ok {
		offset = int(v.Int)
	}
	bs, err := x.src.Bills(ctx, company, erp.BillQuery{Open: true, Vendor: op.Args["vendor"].Str, Limit: limit + 1, Offset: offset})
	if err != nil {
		return listJSON{}, err
	}
	l := listJSON{Bills: []billJSON{}, offset: offset}
	if len(bs) > limit {
		bs, l.NextOffset = bs[:limit], offset+limit
	}
	credit, err := x.src.Bills(ctx, company, erp.BillQuery{OpenCredit: true, Vendor: op.Args["vendor"].Str})
	if err != nil {
		return listJSON{}, err
	}
	for _, b := range bs {
		bj := billOut(b, b.VendorName)
		showCredit(&bj, b, append(slices.Clip(credit), bs...))
		l.Bills = append(l.Bills, bj)
	}
	return l, nil
}

// vendor shows a vendor and its current account (ap.get_vendor).
func (x executor) vendor(ctx context.Context, company, value string) (vendorJSON, error) {
	v, err := findVendor(ctx, x.src, company, value)
	if err != nil {
		return vendorJSON{}, notExecuted("the vendor is not on file", err)
	}
	as, err := x.src.BankAccounts(ctx, company, erp.BankAccountQuery{Vendor: v.ID, Active: true})
	if err != nil {
		return vendorJSON{}, err
	}
	vj := vendorJSON{Vendor: v.ID, Name: v.Name, Active: v.Active}
	for _, a := range as {
		switch {
		case !usable(a):
			vj.Unusable = append(vj.Unusable, unusableJSON{BankAccount: a.ID, Number: a.Number, Why: accountProblem(a)})
		case !a.Trusted:
			vj.Untrusted = append(vj.Untrusted, unusableJSON{BankAccount: a.ID, Number: a.Number, Why: untrustedWhy})
		}
	}
	cur, ok := erp.Current(as, v.ID)
	if !ok || !usable(cur) {
		vj.NoCurrent = noCurrentText(vj)
		return vj, nil
	}
	key, _ := keyOf(cur)
	vj.Account = &accountJSON{IBAN: showAccount(key), Since: timeOut(cur.SetAt), BankAccount: cur.ID,
		CoolingOff: x.cfg.coolingOff(cur)}
	shared, err := accountsWithKey(ctx, x.src, company, key, erp.BankAccountQuery{Active: true})
	if err != nil {
		return vendorJSON{}, err
	}
	shared = slices.DeleteFunc(shared, func(a erp.BankAccount) bool { k, ok := keyOf(a); return !ok || k != key })
	if slices.ContainsFunc(shared, func(a erp.BankAccount) bool { return a.Vendor != v.ID }) {
		who, err := holdersText(ctx, x.src, company, shared)
		if err != nil {
			return vendorJSON{}, err
		}
		vj.Account.Shared = "the number is on file for more than one vendor: " + who +
			"; it is unusable: nothing is paid to it until the accounting team keeps it on one vendor only in the ERP"
	}
	return vj, nil
}

// untrustedWhy says why an account on file that the ERP does not allow
// payments to is not paid.
const untrustedWhy = "the ERP does not allow payments to it: in Odoo, \"Send Money\" is off on the account (as for every account " +
	"entered in Odoo's forms); a person allowed to validate bank accounts must switch it on after checking it with the vendor; " +
	"no payment goes to it until then"

// noCurrentText says why the vendor of vj has no current account.
func noCurrentText(vj vendorJSON) string {
	switch {
	case len(vj.Untrusted) > 0:
		return "no active bank account of the vendor is trusted in the ERP: see untrusted_accounts"
	case len(vj.Unusable) > 0:
		return "no active bank account of the vendor can be paid as typed in the ERP: see unusable_accounts"
	}
	return "the vendor has no active bank account on file"
}

// pay registers the payment on the vendor's account holding the resolved
// number. It hands the ERP the bill and the account as the decision read
// them (see decided), so that the payment costs only the ERP's own calls;
// without them (the decision was made by another process, or long ago) it
// lets the ERP read them again. The ERP refuses it if anything it checks
// changed.
func (x executor) pay(ctx context.Context, company string, op intent.Operation, hash intent.OperationHash) (gateway.Result, error) {
	billID, vendor, number := op.Args["bill"].Str, op.Args["vendor"].Str, op.Args["iban"].Str
	if c := op.Args["currency"].Str; !supportedCurrency(c) { // the normalizer refused it already
		return gateway.Result{}, notExecuted(unsupportedText(c), nil)
	}
	req := erp.PaymentRequest{
		Bill:   billID,
		Amount: intent.Money{Currency: op.Args["currency"].Str, Amount: intent.Amount(op.Args["amount"].Int)},
		Key:    hash.String(),
	}
	credits, fresh := x.decided.takeCredits(company, billID)
	bill, acct, ok := x.decided.take(company, billID, vendor, number)
	if !fresh {
		ok = false
		var err error
		if credits, err = creditsNow(ctx, x.src, company, vendor, billID, intent.Amount(op.Args["amount"].Int)); err != nil {
			return gateway.Result{}, notExecuted("the ERP could not be read, so nothing was paid", err)
		}
	}
	req.Credits = creditIDs(credits)
	if ok {
		req.Decided, req.Account, req.BankAccount = &bill, &acct, acct.ID
	} else {
		as, err := accountsWithKey(ctx, x.src, company, number, erp.BankAccountQuery{Vendor: vendor, Active: true})
		if err != nil {
			return gateway.Result{}, notExecuted("the ERP could not be read, so nothing was paid", err)
		}
		cur, ok := erp.Current(as, vendor)
		if key, usable := keyOf(cur); !ok || !usable || key != number {
			return gateway.Result{}, notExecuted("the bank account is no longer an active, trusted account of the vendor", nil)
		}
		acct, req.BankAccount = cur, cur.ID
	}
	p, err := x.src.RegisterPayment(ctx, company, req)
	if err != nil {
		return gateway.Result{}, refusedByERP(err)
	}
	out := paidJSON{
		Payment: p.ID, Bill: p.Bill, Amount: p.Amount.Decimal(), Currency: p.Amount.Currency,
		IBAN: showAccount(number), Date: p.Day,
	}
	credited := netted(&out, credits, p)
	if req.Decided != nil {
		// What is left follows from the residual read while deciding, the
		// vendor held since: the payment and the credit notes are
		// reconciled with this bill only.
		left := max(bill.Residual-p.Amount.Amount-credited, 0)
		out.Number, out.Ref, out.Residual = bill.Name, bill.Ref, money(left, bill.Currency)
		out.PaymentState = string(erp.Partial)
		if left == 0 {
			out.PaymentState = string(erp.Paid)
		}
	} else if bs, err := x.src.Bills(ctx, company, erp.BillQuery{ID: billID}); err == nil && len(bs) == 1 {
		out.Number, out.Ref = bs[0].Name, bs[0].Ref
		out.Residual, out.PaymentState = money(bs[0].Residual, bs[0].Currency), string(bs[0].PaymentState)
	}
	b, err := json.Marshal(out)
	if err != nil {
		return gateway.Result{}, err
	}
	summary := fmt.Sprintf("payment %s of bill %s", p.ID, p.Bill)
	if p.Day != "" {
		summary += " dated " + p.Day
	}
	return gateway.Result{Output: string(b), Summary: summary}, nil
}

// notExecuted is an error the gateway reports to the agent as msg, certain
// that nothing was written.
func notExecuted(msg string, err error) error {
	if err == nil {
		err = errors.New(msg)
	}
	return gateway.Visible(msg, fmt.Errorf("%w: %w", gateway.ErrNotExecuted, err))
}

// refusedByERP marks the ERP's refusals as certain to have written nothing;
// their text names only the company's own records. A write that failed
// before anything was written (erp.ErrNotWritten: the ERP could not be
// reached, refused the connector's identity, or failed and rolled back) is
// not executed either, with a reason in general words (its detail may name
// hosts and the ERP's configuration). Any other error (an answer lost
// after the request was sent) may have left money moving and is reported
// as such by the gateway.
func refusedByERP(err error) error {
	switch {
	case errors.Is(err, erp.ErrRefused) || errors.Is(err, erp.ErrNotFound):
		return notExecuted("the ERP refused it: "+err.Error(), err)
	case errors.Is(err, erp.ErrNotWritten):
		return notExecuted("the ERP did not carry it out and nothing was written: it could not be reached, refused the connector's "+
			"access, or failed and rolled back; an operator must look at the connector's log before it is tried again", err)
	}
	return err
}

func billOut(b erp.Bill, vendorName string) billJSON {
	due := ""
	if !b.Due.IsZero() {
		due = b.Due.UTC().Format(time.DateOnly)
	}
	out := billJSON{
		Bill: b.ID, Number: b.Name, Ref: b.Ref, Vendor: b.Vendor, VendorName: vendorName, Currency: b.Currency,
		Due: due, PaymentState: string(b.PaymentState),
	}
	if !supportedCurrency(b.Currency) { // its minor unit is unknown: never shown at a guessed scale
		out.Note = unsupportedText(b.Currency) + "."
		return out
	}
	out.Total, out.Residual = money(b.Total, b.Currency), money(b.Residual, b.Currency)
	return out
}

// timeOut formats a time for outputs: RFC 3339 in UTC, "" for zero.
func timeOut(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}
