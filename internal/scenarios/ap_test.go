package scenarios_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/intentplane/intentplane/ap"
	"github.com/intentplane/intentplane/core/approval"
	"github.com/intentplane/intentplane/core/gateway"
	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/mandate"
	"github.com/intentplane/intentplane/erp"
	"github.com/intentplane/intentplane/internal/testclock"
)

// apStart is when the AP scenarios start: a Monday in November 2026, while
// the demo bills are open.
var apStart = time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)

var apActions = []intent.Action{ap.ActionPayBill, ap.ActionChangeVendorBank, ap.ActionListOpenBills, ap.ActionGetVendor}

// apHarness is the AP pack over the demo ERP (ap.DemoERP) with in-memory
// call-backs, on a store of kind k.
type apHarness struct {
	*harness
	erp       *erp.Mem
	callbacks *ap.CallbackMem
}

func newAP(t *testing.T, k storeKind) *apHarness {
	t.Helper()
	c := testclock.New(apStart)
	books, cbs := ap.DemoERP(c.Now), &ap.CallbackMem{}
	pack, err := ap.NewPack(books, ap.Config{Callbacks: cbs, Now: c.Now})
	if err != nil {
		t.Fatal(err)
	}
	return &apHarness{harness: newHarness(t, k, apStart, pack, c), erp: books, callbacks: cbs}
}

// mandate issues a mandate id for the demo company over every AP action,
// with a budget of 50,000.00 EUR.
func (h *apHarness) apMandate(id string) string {
	return h.mandate(mandate.Mandate{ID: id, Owner: ap.DemoCompany, Scope: apActions, Budget: intent.Money{Currency: "EUR", Amount: 5000000}})
}

func pay(bill, iban, amount string) map[string]any {
	return map[string]any{"vendor": ap.DemoVendor, "bill": bill, "iban": iban, "amount": amount, "currency": "EUR"}
}

// payments returns the payments of the demo company made through the
// gateway (with an idempotency key): not the demo's payment made by hand
// before (ap.DemoPaidBill).
func (h *apHarness) payments() []erp.Payment {
	h.t.Helper()
	ps, err := h.erp.Payments(context.Background(), ap.DemoCompany, erp.PaymentQuery{})
	if err != nil {
		h.t.Fatal(err)
	}
	return slices.DeleteFunc(ps, func(p erp.Payment) bool { return p.Key == "" })
}

// TestAPPayments: on every store, the payment to the account on file
// executes with the operation hash as the ERP's idempotency key; the
// email's IBAN is refused; a payment above the threshold steps up, then
// executes with a person's approval; replays of the operation and of the
// approval are refused; the ledger holds exactly what was paid.
func TestAPPayments(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, k storeKind) {
		h := newAP(t, k)
		tok := h.apMandate("m-ap")

		d := h.decide(tok, ap.ActionPayBill, pay(ap.DemoBill, "DE89 3704 0044 0532 0130 00", "425.00"))
		if d.Verdict != intent.Allow || !d.Executed {
			t.Fatalf("pay to the account on file: %s %s %s", d.Verdict, code(d), message(d))
		}
		if ps := h.payments(); len(ps) != 1 || ps[0].Key != d.OperationHash.String() || ps[0].Amount.Amount != 42500 {
			t.Fatalf("payments %+v", ps)
		}
		if d := h.decide(tok, ap.ActionPayBill, pay(ap.DemoBill, "LT12 1000 0111 0100 1000", "425.00")); d.Verdict != intent.Deny || code(d) != intent.CodeNotTrusted || d.Executed {
			t.Fatalf("the email's IBAN: %s %s %s", d.Verdict, code(d), message(d))
		}
		// The same instalment again is the same operation: a replay.
		if d := h.decide(tok, ap.ActionPayBill, pay(ap.DemoBill, ap.DemoIBAN, "425.00")); d.Executed || code(d) != intent.CodeReplayed {
			t.Fatalf("same operation again: %s %s %s", d.Verdict, code(d), message(d))
		}

		big := pay(ap.DemoBill2, ap.DemoIBAN, "2400.00")
		d = h.decide(tok, ap.ActionPayBill, big)
		if d.Verdict != intent.StepUp || d.Level != intent.LevelConfirm || d.Executed {
			t.Fatalf("above the threshold: %s %s %s", d.Verdict, d.Level, message(d))
		}
		a := h.approve("alice", d)
		if d := h.decide(tok, ap.ActionPayBill, big, a); d.Verdict != intent.Allow || !d.Executed {
			t.Fatalf("approved: %s %s %s", d.Verdict, code(d), message(d))
		}
		if d := h.decide(tok, ap.ActionPayBill, big, a); d.Executed {
			t.Fatalf("approved payment replayed: %s %s %s", d.Verdict, code(d), message(d))
		}
		if n := len(h.payments()); n != 2 {
			t.Errorf("%d payments, want 2", n)
		}
		h.checkBudget("m-ap", 42500+240000)
		h.checkReceipts()
	})
}

// TestAPConcurrentPaymentsOfOneBill: on every store, 100 concurrent
// payments of one bill under 100 mandates, with different amounts: exactly
// one executes, the others are refused as in flight or already paid, and
// no budget stays reserved.
func TestAPConcurrentPaymentsOfOneBill(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, k storeKind) {
		h := newAP(t, k)
		const n = 100
		toks := make([]string, n)
		for i := range toks {
			toks[i] = h.apMandate(fmt.Sprintf("m-%d", i))
		}
		var wg sync.WaitGroup
		var mu sync.Mutex
		executed, codes := 0, map[intent.Code]int{}
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				amount := "850.00"
				if i%2 == 1 {
					amount = intent.FormatAmount(intent.Amount(85000-i), 2)
				}
				d, err := h.gw.Decide(context.Background(), gateway.Request{Mandate: toks[i], Proposal: proposal(t, ap.ActionPayBill, pay(ap.DemoBill, ap.DemoIBAN, amount))})
				if err != nil {
					t.Error(err)
					return
				}
				h.count(d)
				mu.Lock()
				defer mu.Unlock()
				if d.Executed {
					executed++
				} else {
					codes[code(d)]++
				}
			}()
		}
		wg.Wait()
		if executed != 1 {
			t.Fatalf("%d of %d concurrent payments executed, want 1 (refusals: %v)", executed, n, codes)
		}
		for c, k := range codes {
			if c != intent.CodeInFlight && c != intent.CodePolicyDenied {
				t.Errorf("%d refusals %s", k, c)
			}
		}
		if ps := h.payments(); len(ps) != 1 {
			t.Fatalf("%d payments in the ERP, want 1", len(ps))
		}
		var committed intent.Amount
		for i := range n {
			u, err := h.store.Usage(context.Background(), fmt.Sprintf("m-%d", i))
			if err != nil {
				t.Fatal(err)
			}
			if u.Reserved != 0 {
				t.Errorf("m-%d: %d still reserved", i, u.Reserved)
			}
			committed += u.Committed
		}
		if p := h.payments()[0]; committed != p.Amount.Amount {
			t.Errorf("committed %d over every mandate, paid %d", committed, p.Amount.Amount)
		}
		h.checkReceipts()
	})
}

// TestAPBankChange: on every store, a bank-detail change is refused without
// a call-back, steps up to four eyes with one, executes with two
// approvers, and the new account then needs four eyes during its
// cooling-off period.
func TestAPBankChange(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, k storeKind) {
		h := newAP(t, k)
		tok := h.apMandate("m-bank-change")
		change := map[string]any{"vendor": ap.DemoVendor, "iban": "LT12 1000 0111 0100 1000"}
		if d := h.decide(tok, ap.ActionChangeVendorBank, change); code(d) != intent.CodeNotTrusted || !strings.Contains(message(d), "call-back") {
			t.Fatalf("change without a call-back: %s %s %s", d.Verdict, code(d), message(d))
		}
		vs, err := h.erp.Vendors(context.Background(), ap.DemoCompany, erp.VendorQuery{Name: ap.DemoVendor})
		if err != nil || len(vs) != 1 {
			t.Fatalf("vendor: %v %v", vs, err)
		}
		if err := h.callbacks.Record(context.Background(), ap.Callback{ID: "cb-1", Company: ap.DemoCompany, Vendor: vs[0].ID,
			Number: ap.DemoEmailIBAN, Phone: ap.DemoVendorPhone, CalledBy: "dana", At: h.clock.Now().Add(-time.Minute)}); err != nil {
			t.Fatal(err)
		}
		d := h.decide(tok, ap.ActionChangeVendorBank, change)
		if d.Verdict != intent.StepUp || d.Level != intent.LevelFourEyes {
			t.Fatalf("with a call-back: %s %s %s", d.Verdict, d.Level, message(d))
		}
		if one := h.decide(tok, ap.ActionChangeVendorBank, change, h.approve("alice", d)); one.Executed || one.Verdict != intent.StepUp {
			t.Fatalf("one approver: %s %s %s", one.Verdict, code(one), message(one))
		}
		as := []approval.Approval{h.approve("alice", d), h.approve("bob", d)}
		if ok := h.decide(tok, ap.ActionChangeVendorBank, change, as...); ok.Verdict != intent.Allow || !ok.Executed {
			t.Fatalf("four eyes: %s %s %s", ok.Verdict, code(ok), message(ok))
		}
		if again := h.decide(tok, ap.ActionChangeVendorBank, change, as...); again.Executed {
			t.Fatalf("four eyes replayed: %s %s %s", again.Verdict, code(again), message(again))
		}
		all, err := h.erp.BankAccounts(context.Background(), ap.DemoCompany, erp.BankAccountQuery{Vendor: vs[0].ID})
		if err != nil {
			t.Fatal(err)
		}
		if cur, _ := erp.Current(all, vs[0].ID); cur.Sanitized != ap.DemoEmailIBAN {
			t.Fatalf("current account after the change: %+v", cur)
		}
		p := h.decide(tok, ap.ActionPayBill, pay(ap.DemoBill, ap.DemoEmailIBAN, "850.00"))
		if p.Verdict != intent.StepUp || p.Level != intent.LevelFourEyes || !strings.Contains(message(p), "cooling-off") {
			t.Fatalf("payment during cooling-off: %s %s %s", p.Verdict, p.Level, message(p))
		}
		if ok := h.decide(tok, ap.ActionPayBill, pay(ap.DemoBill, ap.DemoEmailIBAN, "850.00"), h.approve("alice", p), h.approve("bob", p)); !ok.Executed {
			t.Fatalf("payment during cooling-off with four eyes: %s %s %s", ok.Verdict, code(ok), message(ok))
		}
		h.checkBudget("m-bank-change", 85000)
		h.checkReceipts()
	})
}
