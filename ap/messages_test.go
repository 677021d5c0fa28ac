package ap_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/intentplane/intentplane/ap"
	"github.com/intentplane/intentplane/core/gateway"
	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/erp"
)

// Refusals and ap.get_vendor say what a person must correct in the ERP,
// naming the records (found by a new-user trial on a real Odoo 17); each
// case stays refused.

// otherNumber is a valid IBAN that no account of the demo ERP holds.
const otherNumber = "BE68539007547034"

// getVendor returns ap.get_vendor's output for vendor, decoded.
func (e *env) getVendor(tok, vendor string) map[string]any {
	e.t.Helper()
	d := e.decide(tok, ap.ActionGetVendor, map[string]any{"vendor": vendor})
	if !d.Executed {
		e.t.Fatalf("get_vendor %s: %s", vendor, message(d))
	}
	var out map[string]any
	if err := json.Unmarshal([]byte(d.Output), &out); err != nil {
		e.t.Fatal(err)
	}
	return out
}

// refused decides a payment with args and checks that it is refused with
// code, its message mentioning each of mentions, and that nothing was paid.
func (e *env) refused(tok string, args map[string]any, c intent.Code, mentions ...string) gateway.Decision {
	e.t.Helper()
	d := e.decide(tok, ap.ActionPayBill, args)
	if d.Verdict != intent.Deny || code(d) != c {
		e.t.Fatalf("%s %s %s, want deny %s", d.Verdict, code(d), message(d), c)
	}
	for _, m := range mentions {
		if !strings.Contains(message(d), m) {
			e.t.Errorf("message %q lacks %q", message(d), m)
		}
	}
	if ps := e.payments(ap.DemoCompany); len(ps) != 0 {
		e.t.Errorf("paid: %+v", ps)
	}
	return d
}

// addVendorBill adds a vendor with one active account number (trusted or
// not) and a posted bill of 100.00 EUR with reference ref.
func (e *env) addVendorBill(name, number string, trusted bool, ref string) erp.Vendor {
	e.t.Helper()
	e.addVendor(ap.DemoCompany, name)
	e.addAccount(ap.DemoCompany, name, number, trusted, true, 10)
	v := e.vendor(ap.DemoCompany, name)
	if _, err := e.erp.AddBill(context.Background(), ap.DemoCompany, erp.Bill{Ref: ref, Vendor: v.ID, Currency: "EUR", Total: 10000}); err != nil {
		e.t.Fatal(err)
	}
	return v
}

// TestSendMoneyOff: an account entered in Odoo's forms is untrusted (Send
// Money off). ap.get_vendor says why there is no current account, and the
// refusal of a payment to it says what must be switched on, not that it
// is not the vendor's current account.
func TestSendMoneyOff(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.addVendorBill("Birch Ltd", otherNumber, false, "B-1")
	tok := e.mandate("m-1", ap.DemoCompany, "EUR")
	out := e.getVendor(tok, "Birch Ltd")
	if out["current_account"] != nil {
		t.Fatalf("current_account %v for an untrusted account", out["current_account"])
	}
	if s, _ := out["no_current_account"].(string); !strings.Contains(s, "untrusted_accounts") {
		t.Errorf("no_current_account %q", s)
	}
	un, _ := out["untrusted_accounts"].([]any)
	if len(un) != 1 || !strings.Contains(un[0].(map[string]any)["why"].(string), `"Send Money" is off`) ||
		un[0].(map[string]any)["number_as_typed"] != otherNumber {
		t.Errorf("untrusted_accounts %v", out["untrusted_accounts"])
	}
	d := e.refused(tok, pay("Birch Ltd", "B-1", otherNumber, "10.00"), intent.CodePolicyDenied, `"Send Money" is off`)
	if strings.Contains(message(d), "not the vendor's current account") {
		t.Errorf("message %q", message(d))
	}
}

// TestSharedNumberNamed: one account number on file for two vendors is
// refused naming both (names, vendor IDs, accounts); ap.get_vendor flags
// it as shared and unusable for each.
func TestSharedNumberNamed(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ltd := e.addVendorBill("Echo Ltd", otherNumber, true, "E-1")
	trading := e.addVendorBill("Echo Trading", otherNumber, true, "E-2")
	tok := e.mandate("m-1", ap.DemoCompany, "EUR")
	want := []string{`"Echo Ltd" (vendor ID ` + ltd.ID + `, bank account`, `"Echo Trading" (vendor ID ` + trading.ID + `, bank account`}
	e.refused(tok, pay("Echo Ltd", "E-1", otherNumber, "10.00"), intent.CodePolicyDenied, append(want, "more than one vendor")...)
	for _, name := range []string{"Echo Ltd", "Echo Trading"} {
		cur, _ := e.getVendor(tok, name)["current_account"].(map[string]any)
		shared, _ := cur["shared"].(string)
		for _, w := range append(want, "unusable") {
			if !strings.Contains(shared, w) {
				t.Errorf("%s: shared %q lacks %q", name, shared, w)
			}
		}
	}
	if cur, _ := e.getVendor(tok, "ACME Supplies")["current_account"].(map[string]any); cur["shared"] != nil {
		t.Errorf("ACME's own account flagged shared: %v", cur)
	}
}

// TestCyrillicLookalikeNamed: an IBAN typed in the ERP with a Cyrillic Е
// is not on file under its ASCII spelling; paying to the ASCII IBAN names
// the vendor's unusable account and the character, as for a dotless ı.
func TestCyrillicLookalikeNamed(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.addVendorBill("Wessex Mills", "GB82 W\u0415ST 1234 5698 7654 32", true, "W-1")
	tok := e.mandate("m-1", ap.DemoCompany, "EUR")
	e.refused(tok, pay("Wessex Mills", "W-1", "GB82 WEST 1234 5698 7654 32", "10.00"), intent.CodeNotTrusted,
		"U+0415", "not plain ASCII", "corrects it in Odoo", "bank account")
	// Another vendor's IBAN is still only "not on file".
	if d := e.refused(tok, pay("Wessex Mills", "W-1", "GB33 BUKB 2020 1555 5555 55", "10.00"), intent.CodeNotTrusted); strings.Contains(message(d), "U+0415") {
		t.Errorf("%s", message(d))
	}
}

// TestOtherVendorsBillFirst: a bill of another vendor than the one named
// is refused saying so first, not that the account is another vendor's.
func TestOtherVendorsBillFirst(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.addVendorBill("Maria Lopez", otherNumber, true, "ML-1")
	tok := e.mandate("m-1", ap.DemoCompany, "EUR")
	d := e.refused(tok, pay("Maria Lopez", ap.DemoBill, otherNumber, "10.00"), intent.CodePolicyDenied, "not from the vendor named")
	if strings.Contains(message(d), "belongs to another vendor") {
		t.Errorf("message %q", message(d))
	}
}

// TestCreditNoteNotPaid: after a credit note reversing a bill, the
// step-up's totals say what credit notes settled apart from what was paid.
func TestCreditNoteNotPaid(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.creditNote(ap.DemoBill2, "CN-2291", 50000)
	tok := e.mandate("m-1", ap.DemoCompany, "EUR")
	d := e.decide(tok, ap.ActionPayBill, pay(ap.DemoVendor, ap.DemoBill2, ap.DemoIBAN, "1900.00"))
	if d.Verdict != intent.StepUp {
		t.Fatalf("%s %s", d.Verdict, message(d))
	}
	want := "paid to ACME Supplies for this bill 500.00 EUR (of which 500.00 EUR settled by credit notes, not paid)"
	if !strings.Contains(message(d), want) {
		t.Errorf("message %q lacks %q", message(d), want)
	}
}

// historyFails is an ERP whose read of a vendor's bills with their
// payments (the duplicate checks' whole history) fails with err.
type historyFails struct {
	erp.Source
	err error
}

func (h historyFails) Bills(ctx context.Context, company string, q erp.BillQuery) ([]erp.Bill, error) {
	if q.Vendor != "" && q.WithPayments {
		return nil, h.err
	}
	return h.Source.Bills(ctx, company, q)
}

// TestVendorWithTooManyBills: a payment to a vendor with more open
// bills, credit notes, candidates and payments than the ERP gives in one
// read of a decision (erp.BillQuery.Decision)
// (erp.ErrTooMany, odoo.MaxRead on Odoo) is refused, and the refusal
// says so and what the user can do (pay it in the ERP itself), never to
// try again later, which would never help; any other failure of that
// read is still to be tried again later, without its detail.
func TestVendorWithTooManyBills(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name          string
		err           error
		want, notWant []string
	}{
		{"too many", fmt.Errorf("odoo: %w", &erp.TooManyError{Max: 2000, What: "bills, credit notes and payments"}),
			[]string{"nothing was done", "trying again will not change that", "more than 2,000 bills, credit notes and payments in the ERP",
				"more than intentplane reads in one decision", "duplicate invoices", "pay this bill in the ERP itself"},
			[]string{"Try again later", "ask for a page"}},
		{"too many, no count", erp.ErrTooMany,
			[]string{"more open bills, credit notes, payments and bills resembling this one in the ERP than intentplane reads in one decision", "in the ERP itself"},
			[]string{"Try again later"}},
		{"unreachable", errors.New("odoo: dial tcp 10.0.0.7:8069: connection refused"),
			[]string{"could not be read", "Try again later"},
			[]string{"10.0.0.7", "ERP itself", "will not change"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			e := newEnvWrapped(t, ap.Config{}, func(s erp.Source) erp.Source { return historyFails{s, c.err} })
			d := e.refused(e.mandate("m-many", ap.DemoCompany, "EUR"), pay(ap.DemoVendor, ap.DemoBill, ap.DemoIBAN, "850.00"), intent.CodeContextFailed, c.want...)
			for _, m := range c.notWant {
				if strings.Contains(message(d), m) {
					t.Errorf("message %q says %q", message(d), m)
				}
			}
			if d.Executed || d.Receipt.Seq == 0 || d.Receipt.Code != intent.CodeContextFailed {
				t.Errorf("receipt %+v: want a stored refusal with code %s", d.Receipt, intent.CodeContextFailed)
			}
		})
	}
}
