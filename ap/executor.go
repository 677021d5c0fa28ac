package ap

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
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
	src erp.Source
	cfg Config // CoolingOff and Now, for get_vendor's in_cooling_off
}

var _ gateway.Executor = executor{}

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
	}
	listJSON struct {
		Bills []billJSON `json:"bills"`
	}
	accountJSON struct {
		IBAN        string `json:"iban"`
		Since       string `json:"since"`
		CoolingOff  bool   `json:"in_cooling_off,omitempty"` // payments to it need four eyes
		BankAccount string `json:"bank_account"`
	}
	vendorJSON struct {
		Vendor  string       `json:"vendor"`
		Name    string       `json:"name"`
		Active  bool         `json:"active"`
		Account *accountJSON `json:"current_account"`
	}
	paidJSON struct {
		Payment      string `json:"payment"`
		Bill         string `json:"bill"`
		Number       string `json:"number"`
		Ref          string `json:"ref,omitempty"`
		Amount       string `json:"amount"`
		Currency     string `json:"currency"`
		IBAN         string `json:"paid_to"`
		Residual     string `json:"residual"`
		PaymentState string `json:"payment_state"`
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
		bs, err := x.src.Bills(ctx, company, erp.BillQuery{Open: true, Vendor: op.Args["vendor"].Str})
		if err != nil {
			return gateway.Result{}, err
		}
		names, err := x.vendorNames(ctx, company)
		if err != nil {
			return gateway.Result{}, err
		}
		l := listJSON{Bills: []billJSON{}}
		for _, b := range bs {
			l.Bills = append(l.Bills, billOut(b, names[b.Vendor]))
		}
		out, summary = l, fmt.Sprintf("%d open bills", len(l.Bills))
	case ActionGetVendor:
		v, err := findVendor(ctx, x.src, company, op.Args["vendor"].Str)
		if err != nil {
			return gateway.Result{}, notExecuted("the vendor is not on file", err)
		}
		as, err := x.src.BankAccounts(ctx, company, erp.BankAccountQuery{Vendor: v.ID})
		if err != nil {
			return gateway.Result{}, err
		}
		vj := vendorJSON{Vendor: v.ID, Name: v.Name, Active: v.Active}
		if cur, ok := erp.Current(as, v.ID); ok {
			vj.Account = &accountJSON{IBAN: normalize.FormatIBAN(cur.Sanitized), Since: timeOut(cur.SetAt), BankAccount: cur.ID,
				CoolingOff: x.cfg.coolingOff(cur)}
		}
		out, summary = vj, "vendor "+v.ID
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

// pay registers the payment on the vendor's account holding the resolved
// number; the ERP refuses it if anything changed since the decision.
func (x executor) pay(ctx context.Context, company string, op intent.Operation, hash intent.OperationHash) (gateway.Result, error) {
	billID, vendor, number := op.Args["bill"].Str, op.Args["vendor"].Str, op.Args["iban"].Str
	if c := op.Args["currency"].Str; !supportedCurrency(c) { // the normalizer refused it already
		return gateway.Result{}, notExecuted(unsupportedText(c), nil)
	}
	as, err := x.src.BankAccounts(ctx, company, erp.BankAccountQuery{Vendor: vendor, Number: number})
	if err != nil {
		return gateway.Result{}, err
	}
	cur, ok := erp.Current(as, vendor)
	if !ok {
		return gateway.Result{}, notExecuted("the bank account is no longer an active, trusted account of the vendor", nil)
	}
	p, err := x.src.RegisterPayment(ctx, company, erp.PaymentRequest{
		Bill:        billID,
		BankAccount: cur.ID,
		Amount:      intent.Money{Currency: op.Args["currency"].Str, Amount: intent.Amount(op.Args["amount"].Int)},
		Key:         hash.String(),
	})
	if err != nil {
		return gateway.Result{}, refusedByERP(err)
	}
	out := paidJSON{
		Payment: p.ID, Bill: p.Bill, Amount: intent.FormatAmount(p.Amount.Amount, 2), Currency: p.Amount.Currency,
		IBAN: normalize.FormatIBAN(cur.Sanitized),
	}
	if bs, err := x.src.Bills(ctx, company, erp.BillQuery{ID: billID}); err == nil && len(bs) == 1 {
		out.Number, out.Ref = bs[0].Name, bs[0].Ref
		out.Residual, out.PaymentState = intent.FormatAmount(bs[0].Residual, 2), string(bs[0].PaymentState)
	}
	b, err := json.Marshal(out)
	if err != nil {
		return gateway.Result{}, err
	}
	return gateway.Result{Output: string(b), Summary: fmt.Sprintf("payment %s of bill %s", p.ID, p.Bill)}, nil
}

func (x executor) vendorNames(ctx context.Context, company string) (map[string]string, error) {
	vs, err := x.src.Vendors(ctx, company, erp.VendorQuery{})
	if err != nil {
		return nil, err
	}
	names := make(map[string]string, len(vs))
	for _, v := range vs {
		names[v.ID] = v.Name
	}
	return names, nil
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
// their text names only the company's own records. Any other error may
// have left money moving and is reported as such by the gateway.
func refusedByERP(err error) error {
	if errors.Is(err, erp.ErrRefused) || errors.Is(err, erp.ErrNotFound) {
		return notExecuted("the ERP refused it: "+err.Error(), err)
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
	if !supportedCurrency(b.Currency) { // its minor unit is not hundredths: never shown at the wrong scale
		out.Note = unsupportedText(b.Currency) + "."
		return out
	}
	out.Total, out.Residual = intent.FormatAmount(b.Total, 2), intent.FormatAmount(b.Residual, 2)
	return out
}

// timeOut formats a time for outputs: RFC 3339 in UTC, "" for zero.
func timeOut(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}
