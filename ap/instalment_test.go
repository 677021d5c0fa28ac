package ap_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/intentplane/intentplane/ap"
	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/erp"
)

// withResidual returns args with the residual the payment is paid against.
func withResidual(args map[string]any, residual string) map[string]any {
	args["residual"] = residual
	return args
}

// addBill enters a posted EUR bill of the demo vendor and returns it.
func (e *env) addBill(ref string, total intent.Amount) erp.Bill {
	e.t.Helper()
	b, err := e.erp.AddBill(context.Background(), ap.DemoCompany, erp.Bill{Ref: ref, Vendor: e.vendor(ap.DemoCompany, ap.DemoVendor).ID, Currency: "EUR", Total: total})
	if err != nil {
		e.t.Fatal(err)
	}
	return b
}

// instalmentConfirmAbove (5,000.00) keeps the confirmation threshold out
// of the way of the instalment and credit tests: instalments of one bill
// add up (cumulative limits, tested in cumulative_test.go), and two of
// 800.00 would ask a person at the default 1,000.00.
const instalmentConfirmAbove = 500000

// TestInstalments (issue 13): 800.00 and then 800.00 of a 1,600.00 bill
// are two operations, each paid against the residual it leaves; the same
// call sent again executes once; a third is refused, the residual bounds
// every instalment.
func TestInstalments(t *testing.T) {
	t.Parallel()
	e := newEnvConfig(t, ap.Config{ConfirmAbove: instalmentConfirmAbove})
	b := e.addBill("INV-1600", 160000)
	tok := e.mandate("m-1", ap.DemoCompany, "EUR")

	first := e.decide(tok, ap.ActionPayBill, withResidual(pay(ap.DemoVendor, b.Name, ap.DemoIBAN, "800.00"), "1600.00"))
	if !first.Executed {
		t.Fatalf("first instalment: %s %s", first.Verdict, message(first))
	}
	var out struct{ Residual string }
	if err := json.Unmarshal([]byte(first.Output), &out); err != nil || out.Residual != "800.00" {
		t.Fatalf("first instalment's answer: %v %s", err, first.Output)
	}
	retry := e.decide(tok, ap.ActionPayBill, withResidual(pay(ap.DemoVendor, b.Name, ap.DemoIBAN, "800.00"), "1600.00"))
	if retry.Executed || code(retry) != intent.CodeReplayed || retry.OperationHash != first.OperationHash {
		t.Fatalf("the first call again: %s %s %s; want it answered as already executed", retry.Verdict, code(retry), message(retry))
	}
	second := e.decide(tok, ap.ActionPayBill, withResidual(pay(ap.DemoVendor, b.Name, ap.DemoIBAN, "800.00"), out.Residual))
	if !second.Executed || second.OperationHash == first.OperationHash {
		t.Fatalf("second instalment: %s %s", second.Verdict, message(second))
	}
	for _, residual := range []string{"1600.00", "800.00"} { // the first and the second call: executed
		d := e.decide(tok, ap.ActionPayBill, withResidual(pay(ap.DemoVendor, b.Name, ap.DemoIBAN, "800.00"), residual))
		if code(d) != intent.CodeReplayed {
			t.Errorf("third instalment against %s: %s %s", residual, code(d), message(d))
		}
	}
	for _, args := range []map[string]any{
		pay(ap.DemoVendor, b.Name, ap.DemoIBAN, "800.00"),
		withResidual(pay(ap.DemoVendor, b.Name, ap.DemoIBAN, "800.00"), "400.00"),
	} {
		if d := e.decide(tok, ap.ActionPayBill, args); code(d) != intent.CodePolicyDenied || !strings.Contains(message(d), "more than the bill still owes") {
			t.Errorf("third instalment %v: %s %s; want refused as above the residual", args, code(d), message(d))
		}
	}
	if got := e.bill(ap.DemoCompany, "INV-1600"); got.Residual != 0 || got.PaymentState != erp.Paid {
		t.Errorf("bill after two instalments: residual %d, %s", got.Residual, got.PaymentState)
	}
	if n := len(e.payments(ap.DemoCompany)); n != 2 {
		t.Errorf("%d payments, want 2", n)
	}
	e.verifyReceipts(ap.DemoCompany)
}

// TestInstalmentStaleResidual: a residual that is no longer the bill's
// (a payment was made since it was read) is refused with the reason.
func TestInstalmentStaleResidual(t *testing.T) {
	t.Parallel()
	e := newEnvConfig(t, ap.Config{ConfirmAbove: instalmentConfirmAbove})
	b := e.addBill("INV-1600", 160000)
	if _, err := e.erp.AddPayment(t.Context(), ap.DemoCompany, erp.Payment{Bill: b.ID, Amount: intent.Money{Currency: "EUR", Amount: 50000}}); err != nil {
		t.Fatal(err)
	}
	tok := e.mandate("m-1", ap.DemoCompany, "EUR")
	d := e.decide(tok, ap.ActionPayBill, withResidual(pay(ap.DemoVendor, b.Name, ap.DemoIBAN, "800.00"), "1600.00"))
	if code(d) != intent.CodePolicyDenied || !strings.Contains(message(d), "residual given is not what the bill owes now") {
		t.Fatalf("stale residual: %s %s", code(d), message(d))
	}
	// A payment made outside the assistant is no earlier call of it: a
	// call that gives no residual is paid without a person.
	if d := e.decide(tok, ap.ActionPayBill, pay(ap.DemoVendor, b.Name, ap.DemoIBAN, "800.00")); !d.Executed {
		t.Fatalf("without residual after a payment made in the ERP: %s %s", d.Verdict, message(d))
	}
}

// lossy is an ERP whose answer to the first payment is lost after the
// payment was made, as a timeout after sending would lose it.
type lossy struct {
	erp.Source
	lost atomic.Bool
}

var errAnswerLost = errors.New("test: the ERP's answer was lost")

func (l *lossy) RegisterPayment(ctx context.Context, company string, r erp.PaymentRequest) (erp.Payment, error) {
	p, err := l.Source.RegisterPayment(ctx, company, r)
	if err == nil && l.lost.CompareAndSwap(false, true) {
		return erp.Payment{}, errAnswerLost
	}
	return p, err
}

// TestInstalmentRetryAfterLostAnswer: the ERP's answer to the first
// instalment is lost (the payment was made); the same call sent again,
// although the bill's residual has changed since, is the same operation
// and pays nothing, while the second instalment, paid against the
// residual the first left, pays.
func TestInstalmentRetryAfterLostAnswer(t *testing.T) {
	t.Parallel()
	e := newEnvWrapped(t, ap.Config{ConfirmAbove: instalmentConfirmAbove}, func(s erp.Source) erp.Source { return &lossy{Source: s} })
	b := e.addBill("INV-1600", 160000)
	tok := e.mandate("m-1", ap.DemoCompany, "EUR")
	call := withResidual(pay(ap.DemoVendor, b.Name, ap.DemoIBAN, "800.00"), "1600.00")

	first := e.decide(tok, ap.ActionPayBill, call)
	if first.Executed || code(first) != intent.CodeExecutionFailed {
		t.Fatalf("first instalment with its answer lost: %s %s %s", first.Verdict, code(first), message(first))
	}
	if got := e.bill(ap.DemoCompany, "INV-1600"); got.Residual != 80000 {
		t.Fatalf("the first instalment was not made in the ERP: residual %d", got.Residual)
	}
	retry := e.decide(tok, ap.ActionPayBill, call)
	if retry.Executed || code(retry) != intent.CodeReplayed || retry.OperationHash != first.OperationHash {
		t.Fatalf("retry after the lost answer: %s %s %s", retry.Verdict, code(retry), message(retry))
	}
	if n := len(e.payments(ap.DemoCompany)); n != 1 {
		t.Fatalf("%d payments after the retry, want 1", n)
	}
	second := e.decide(tok, ap.ActionPayBill, withResidual(pay(ap.DemoVendor, b.Name, ap.DemoIBAN, "800.00"), "800.00"))
	if !second.Executed {
		t.Fatalf("second instalment: %s %s", second.Verdict, message(second))
	}
	if got, n := e.bill(ap.DemoCompany, "INV-1600"), len(e.payments(ap.DemoCompany)); got.Residual != 0 || n != 2 {
		t.Errorf("after both instalments: residual %d, %d payments; want 0 and 2", got.Residual, n)
	}
}

// TestInstalmentWithoutResidual: an instalment that does not say what it
// is paid against is the same operation as an earlier identical call
// (already executed), and under another mandate, where the operation
// differs, a person confirms that it is not a retry of the earlier
// payment of the same amount. A payment of another amount needs nothing.
func TestInstalmentWithoutResidual(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	b := e.addBill("INV-1600", 160000)
	tok := e.mandate("m-1", ap.DemoCompany, "EUR")
	half := pay(ap.DemoVendor, b.Name, ap.DemoIBAN, "800.00")
	if d := e.decide(tok, ap.ActionPayBill, half); !d.Executed {
		t.Fatalf("first instalment: %s %s", d.Verdict, message(d))
	}
	d := e.decide(tok, ap.ActionPayBill, half)
	if code(d) != intent.CodeReplayed || !strings.Contains(message(d), "must say so in its arguments") {
		t.Fatalf("the same call again: %s %s", code(d), message(d))
	}
	tok2 := e.mandate("m-2", ap.DemoCompany, "EUR")
	d = e.decide(tok2, ap.ActionPayBill, half)
	if d.Verdict != intent.StepUp || d.Level != intent.LevelConfirm || !strings.Contains(message(d), "not a retry of the earlier payment") {
		t.Fatalf("the same amount under another mandate: %s %s", d.Verdict, message(d))
	}
	if d.Facts["bill_same_amount_paid"] != intent.Int(1) {
		t.Errorf("bill_same_amount_paid = %v, want 1", d.Facts["bill_same_amount_paid"])
	}
	if d = e.decide(tok2, ap.ActionPayBill, half, e.approve("alice", d)); !d.Executed {
		t.Fatalf("confirmed: %s %s", d.Verdict, message(d))
	}
	if got := e.bill(ap.DemoCompany, "INV-1600"); got.Residual != 0 {
		t.Errorf("residual %d, want 0", got.Residual)
	}
}

// openCredit enters a posted credit note of the demo vendor of total
// (minor units, EUR), reversing the bill with ID reverses if not empty.
func (e *env) openCredit(ref string, total intent.Amount, reverses string) erp.Bill {
	e.t.Helper()
	c, err := e.erp.AddBill(context.Background(), ap.DemoCompany, erp.Bill{Ref: ref, Vendor: e.vendor(ap.DemoCompany, ap.DemoVendor).ID,
		Kind: erp.KindCreditNote, Currency: "EUR", Total: total, Reverses: reverses})
	if err != nil {
		e.t.Fatal(err)
	}
	return c
}

// TestCreditNoteNetted (issue 13): with an open credit note of the vendor,
// the gross is asked of a person (refused when the credit note reverses
// this very bill: TestCreditNoteOfTheBill), the net is confirmed by a person
// who is shown the credit, and paid: one payment of the net amount, the
// credit note reconciled with the bill, both settled.
func TestCreditNoteNetted(t *testing.T) {
	t.Parallel()
	e := newEnvConfig(t, ap.Config{ConfirmAbove: instalmentConfirmAbove})
	cn := e.openCredit("CN-77", 10000, "")
	tok := e.mandate("m-1", ap.DemoCompany, "EUR")

	l := e.decide(tok, ap.ActionListOpenBills, map[string]any{"vendor": ap.DemoVendor})
	if !strings.Contains(l.Output, `"ref":"INV-2290"`) || !strings.Contains(l.Output, `"credit":"100.00","net_due":"750.00"`) {
		t.Fatalf("list_open_bills does not show the credit and the net: %s", l.Output)
	}
	// Issue 24: the credit is tied to no bill, so the gross is not a
	// dead end: a person may pay it and keep the credit for later.
	gross := e.decide(tok, ap.ActionPayBill, pay(ap.DemoVendor, ap.DemoBill, ap.DemoIBAN, "850.00"))
	if gross.Verdict != intent.StepUp || !strings.Contains(message(gross), "not tied to this bill ("+cn.Name+" (100.00 EUR))") {
		t.Fatalf("gross: %s %s %s", gross.Verdict, code(gross), message(gross))
	}
	net := pay(ap.DemoVendor, ap.DemoBill, ap.DemoIBAN, "750.00")
	d := e.decide(tok, ap.ActionPayBill, net)
	if d.Verdict != intent.StepUp || d.Level != intent.LevelConfirm || !strings.Contains(message(d), "netted with this payment") {
		t.Fatalf("net: %s %s", d.Verdict, message(d))
	}
	for k, want := range map[string]intent.Value{
		"bill_credit": intent.Int(10000), "bill_net_due": intent.Int(75000), "bill_residual": intent.Int(85000),
		"bill_credit_notes": intent.Str(cn.Name + " (100.00 EUR)"),
	} {
		if d.Facts[k] != want {
			t.Errorf("the approver is shown %s = %v, want %v", k, d.Facts[k], want)
		}
	}
	d = e.decide(tok, ap.ActionPayBill, net, e.approve("alice", d))
	if !d.Executed {
		t.Fatalf("confirmed: %s %s", d.Verdict, message(d))
	}
	var out struct {
		Residual    string
		CreditNotes []string `json:"credit_notes_applied"`
	}
	if err := json.Unmarshal([]byte(d.Output), &out); err != nil || out.Residual != "0.00" || len(out.CreditNotes) != 1 {
		t.Errorf("answer: %v %s", err, d.Output)
	}
	if b := e.bill(ap.DemoCompany, ap.DemoBill); b.Residual != 0 || b.PaymentState != erp.Paid {
		t.Errorf("bill after netting: residual %d, %s; want 0, paid", b.Residual, b.PaymentState)
	}
	if c := e.bill(ap.DemoCompany, "CN-77"); c.Residual != 0 {
		t.Errorf("credit note residual %d, want 0", c.Residual)
	}
	ps := e.payments(ap.DemoCompany)
	if len(ps) != 1 || ps[0].Amount.Amount != 75000 {
		t.Fatalf("payments %+v; want one of 750.00", ps)
	}
	// The credit is used: the vendor's next bill is paid without asking.
	if d := e.decide(tok, ap.ActionPayBill, pay(ap.DemoVendor, ap.DemoBill2, ap.DemoIBAN, "900.00")); !d.Executed {
		t.Errorf("next bill after the credit was used: %s %s", d.Verdict, message(d))
	}
}

// TestTermsFactsAlwaysGiven: every payment decision carries the facts of
// instalments and credit notes, which the schema declares optional (so
// that older decision manifests stay valid) and the policy reads.
func TestTermsFactsAlwaysGiven(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	d := e.decide(e.mandate("m-1", ap.DemoCompany, "EUR"), ap.ActionPayBill, pay(ap.DemoVendor, ap.DemoBill, ap.DemoIBAN, "100.00"))
	for k, want := range map[string]intent.Value{
		"bill_total": intent.Int(85000), "bill_same_amount_paid": intent.Int(0), "bill_credit": intent.Int(0),
		"bill_net_due": intent.Int(85000), "bill_credit_notes": intent.Str(""),
	} {
		if got, ok := d.Facts[k]; !ok || got != want {
			t.Errorf("fact %s = %v (given %v), want %v", k, got, ok, want)
		}
	}
}

// unreconciling is an ERP that makes the payment but reconciles none of
// the credit notes it is asked to net, as an ERP whose reconciliation
// failed after the payment.
type unreconciling struct{ erp.Source }

func (u unreconciling) RegisterPayment(ctx context.Context, company string, r erp.PaymentRequest) (erp.Payment, error) {
	credits := r.Credits
	r.Credits = nil
	p, err := u.Source.RegisterPayment(ctx, company, r)
	p.Unreconciled = credits
	return p, err
}

// TestCreditNoteNotReconciled: the payment of the net stands when the ERP
// fails to reconcile the credit note afterwards, and the answer tells the
// agent which credit notes the accounting team must reconcile.
func TestCreditNoteNotReconciled(t *testing.T) {
	t.Parallel()
	e := newEnvWrapped(t, ap.Config{}, func(s erp.Source) erp.Source { return unreconciling{s} })
	cn := e.openCredit("CN-77", 10000, "")
	tok := e.mandate("m-1", ap.DemoCompany, "EUR")
	net := pay(ap.DemoVendor, ap.DemoBill, ap.DemoIBAN, "750.00")
	d := e.decide(tok, ap.ActionPayBill, net)
	d = e.decide(tok, ap.ActionPayBill, net, e.approve("alice", d))
	if !d.Executed || !strings.Contains(d.Output, "could not be reconciled") || !strings.Contains(d.Output, cn.Name+" ("+cn.ID+")") || !strings.Contains(d.Output, `"residual":"100.00"`) {
		t.Fatalf("net paid, credit note not reconciled: %s %s %s", d.Verdict, message(d), d.Output)
	}
	if ps := e.payments(ap.DemoCompany); len(ps) != 1 || ps[0].Amount.Amount != 75000 {
		t.Errorf("payments %+v; want one of 750.00", ps)
	}
}
