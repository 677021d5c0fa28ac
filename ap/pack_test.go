package ap_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/intentplane/intentplane/ap"
	"github.com/intentplane/intentplane/core/gateway"
	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/erp"
)

// TestPayToAccountOnFile: whatever the agent spelled, what executes is
// the vendor's current trusted account on file, with its provenance.
func TestPayToAccountOnFile(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, vendor, bill, iban string
	}{
		{"as on file", "ACME Supplies", "INV-2290", "DE89370400440532013000"},
		{"print format", "ACME Supplies", "INV-2290", "DE89 3704 0044 0532 0130 00"},
		{"lower case, odd spaces", "  acme   supplies ", "inv-2290", "de89 37040044 0532013000 "},
		{"IBAN prefix", "ACME SUPPLIES", " INV-2290 ", "IBAN DE89 3704 0044 0532 0130 00"},
		{"IBAN: prefix, bill number", "Acme Supplies", "BILL/2026/11/0001", "iban: DE89370400440532013000"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			tok := e.mandate("m-1", ap.DemoCompany, "EUR")
			d := e.decide(tok, ap.ActionPayBill, pay(tt.vendor, tt.bill, tt.iban, "850.00"))
			if d.Verdict != intent.Allow || !d.Executed {
				t.Fatalf("verdict %s: %s", d.Verdict, message(d))
			}
			bill := e.bill(ap.DemoCompany, ap.DemoBill)
			vendor := e.vendor(ap.DemoCompany, ap.DemoVendor)
			want := intent.Args{
				"vendor": intent.Str(vendor.ID), "bill": intent.Str(bill.ID), "iban": intent.Str(ap.DemoIBAN),
				"amount": intent.AmountValue(85000, 2), "currency": intent.Str("EUR"),
			}
			if diff := cmp.Diff(want, d.Operation.Args); diff != "" {
				t.Errorf("executed operation (-want, +got):\n%s", diff)
			}
			var sources []string
			for _, r := range d.Resolved {
				sources = append(sources, r.Param+"<-"+r.Provenance.Source)
			}
			if diff := cmp.Diff([]string{"vendor<-registry:vendors", "bill<-registry:bills", "iban<-registry:bank_accounts"}, sources); diff != "" {
				t.Errorf("provenance (-want, +got):\n%s", diff)
			}
			ps := e.payments(ap.DemoCompany)
			if len(ps) != 1 || ps[0].Amount != (intent.Money{Currency: "EUR", Amount: 85000}) || ps[0].Bill != bill.ID || ps[0].Key != d.OperationHash.String() {
				t.Fatalf("payments %+v", ps)
			}
			accounts, _ := e.erp.BankAccounts(context.Background(), ap.DemoCompany, erp.BankAccountQuery{ID: ps[0].BankAccount})
			if len(accounts) != 1 || accounts[0].Sanitized != ap.DemoIBAN {
				t.Errorf("paid to %+v, want the account on file", accounts)
			}
			if bill.PaymentState != erp.Paid || bill.Residual != 0 {
				t.Errorf("bill after payment: %s residual %d", bill.PaymentState, bill.Residual)
			}
			var out struct{ Payment, PaidTo string }
			if err := json.Unmarshal([]byte(d.Output), &out); err != nil || out.Payment != ps[0].ID {
				t.Errorf("output %s: %v", d.Output, err)
			}
			if d.Receipt.Output != "payment "+ps[0].ID+" of bill "+bill.ID+" dated "+ps[0].Day || ps[0].Day == "" {
				t.Errorf("receipt keeps %q", d.Receipt.Output)
			}
		})
	}
}

// TestAttacks: every way the issue's attacker tries to redirect or repeat
// a payment is refused, with nothing paid.
func TestAttacks(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		setup   func(e *env)
		args    map[string]any
		code    intent.Code
		mention string
	}{
		{
			name:    "IBAN from the email",
			args:    pay("ACME Supplies", "INV-2290", "LT12 1000 0111 0100 1000", "850.00"),
			code:    intent.CodeNotTrusted,
			mention: "Payments go only to the vendor's bank account on file",
		},
		{
			name:    "archived previous account",
			args:    pay("ACME Supplies", "INV-2290", ap.DemoOldIBAN, "850.00"),
			code:    intent.CodeNotTrusted,
			mention: "archived",
		},
		{
			name: "untrusted account typed in by a clerk",
			setup: func(e *env) {
				e.addAccount(ap.DemoCompany, ap.DemoVendor, ap.DemoEmailIBAN, false, true, 5)
			},
			args:    pay("ACME Supplies", "INV-2290", ap.DemoEmailIBAN, "850.00"),
			code:    intent.CodePolicyDenied,
			mention: "not trusted",
		},
		{
			name: "another valid account of the same vendor",
			setup: func(e *env) {
				e.addAccount(ap.DemoCompany, ap.DemoVendor, "BE68539007547034", true, true, 20)
			},
			args:    pay("ACME Supplies", "INV-2290", "BE68539007547034", "850.00"),
			code:    intent.CodePolicyDenied,
			mention: "not the vendor's current account",
		},
		{
			name: "the attacker's account on file for another vendor",
			setup: func(e *env) {
				e.addVendor(ap.DemoCompany, "Initech")
				e.addAccount(ap.DemoCompany, "Initech", ap.DemoEmailIBAN, true, true, 10)
			},
			args:    pay("ACME Supplies", "INV-2290", ap.DemoEmailIBAN, "850.00"),
			code:    intent.CodePolicyDenied,
			mention: "belongs to another vendor",
		},
		{
			name: "the vendor's number also on file for another vendor",
			setup: func(e *env) {
				e.addVendor(ap.DemoCompany, "Initech")
				e.addAccount(ap.DemoCompany, "Initech", ap.DemoIBAN, true, true, 10)
			},
			args:    pay("ACME Supplies", "INV-2290", ap.DemoIBAN, "850.00"),
			code:    intent.CodePolicyDenied,
			mention: "more than one vendor",
		},
		{
			name: "bill named with another vendor",
			setup: func(e *env) {
				e.addVendor(ap.DemoCompany, "Initech")
			},
			args:    pay("Initech", "INV-2290", ap.DemoIBAN, "850.00"),
			code:    intent.CodePolicyDenied,
			mention: "not from the vendor named",
		},
		{
			name: "archived vendor",
			setup: func(e *env) {
				v, _ := e.erp.AddVendor(context.Background(), ap.DemoCompany, erp.Vendor{Name: "Dormant Ltd", Active: false})
				b, _ := e.erp.AddBankAccount(context.Background(), ap.DemoCompany, erp.BankAccount{Vendor: v.ID, Number: "BE68539007547034", Trusted: true, Active: true, SetAt: t0.AddDate(-1, 0, 0)})
				_, _ = e.erp.AddBill(context.Background(), ap.DemoCompany, erp.Bill{Ref: "D-1", Vendor: v.ID, Currency: "EUR", Total: 1000, BankAccount: b.ID})
			},
			args:    pay("Dormant Ltd", "D-1", "BE68539007547034", "10.00"),
			code:    intent.CodePolicyDenied,
			mention: "vendor is archived",
		},
		{
			name: "draft bill",
			setup: func(e *env) {
				_, _ = e.erp.AddBill(context.Background(), ap.DemoCompany, erp.Bill{Ref: "INV-2299", Vendor: e.vendor(ap.DemoCompany, ap.DemoVendor).ID, Currency: "EUR", Total: 1000, State: erp.StateDraft})
			},
			args:    pay("ACME Supplies", "INV-2299", ap.DemoIBAN, "10.00"),
			code:    intent.CodePolicyDenied,
			mention: "not posted",
		},
		{
			name: "bill blocked for payment",
			setup: func(e *env) {
				if err := e.erp.BlockPayment(context.Background(), ap.DemoCompany, e.bill(ap.DemoCompany, ap.DemoBill).ID, true); err != nil {
					panic(err)
				}
			},
			args:    pay("ACME Supplies", "INV-2290", ap.DemoIBAN, "850.00"),
			code:    intent.CodePolicyDenied,
			mention: "blocked for payment in the ERP",
		},
		{
			name: "a payment already in flight",
			setup: func(e *env) {
				_, _ = e.erp.AddPayment(context.Background(), ap.DemoCompany, erp.Payment{Bill: e.bill(ap.DemoCompany, ap.DemoBill).ID, Amount: intent.Money{Currency: "EUR", Amount: 85000}, State: erp.PaymentDraft})
			},
			args:    pay("ACME Supplies", "INV-2290", ap.DemoIBAN, "850.00"),
			code:    intent.CodePolicyDenied,
			mention: "already registered and not yet posted",
		},
		{
			name:    "credit note as a bill",
			setup:   func(e *env) { e.creditNote(ap.DemoBill, "CN-2290", 10000) },
			args:    pay("ACME Supplies", "CN-2290", ap.DemoIBAN, "100.00"),
			code:    intent.CodeNotTrusted,
			mention: "Only the company's vendor bills on file can be paid",
		},
		{
			name:    "full total after a credit note",
			setup:   func(e *env) { e.creditNote(ap.DemoBill, "CN-2290", 10000) },
			args:    pay("ACME Supplies", "INV-2290", ap.DemoIBAN, "850.00"),
			code:    intent.CodePolicyDenied,
			mention: "more than the bill still owes",
		},
		{
			name:    "above the residual",
			args:    pay("ACME Supplies", "INV-2290", ap.DemoIBAN, "850.01"),
			code:    intent.CodePolicyDenied,
			mention: "more than the bill still owes",
		},
		{
			name:    "another currency",
			args:    map[string]any{"vendor": "ACME Supplies", "bill": "INV-2290", "iban": ap.DemoIBAN, "amount": "850.00", "currency": "usd"},
			code:    intent.CodeBadArgument, // issue 24: the amount is read in the currency named
			mention: "was given in USD, but this operation pays in EUR",
		},
		{
			name:    "unknown bill",
			args:    pay("ACME Supplies", "INV-9999", ap.DemoIBAN, "850.00"),
			code:    intent.CodeNotTrusted,
			mention: "ap.list_open_bills",
		},
		{
			name:    "unknown vendor",
			args:    pay("ACME Supplies Ltd", "INV-2290", ap.DemoIBAN, "850.00"),
			code:    intent.CodeNotTrusted,
			mention: "Only the company's vendors on file",
		},
		{
			name:    "vendor in look-alike letters",
			args:    pay("\u0410CME Supplies", "INV-2290", ap.DemoIBAN, "850.00"),
			code:    intent.CodeBadArgument,
			mention: "look-alike characters are refused",
		},
		{
			name:    "zero-width space in the vendor",
			args:    pay("AC\u200bME Supplies", "INV-2290", ap.DemoIBAN, "850.00"),
			code:    intent.CodeBadArgument,
			mention: "U+200B",
		},
		{
			name:    "an extra argument",
			args:    map[string]any{"vendor": "ACME Supplies", "bill": "INV-2290", "iban": ap.DemoIBAN, "amount": "850.00", "currency": "EUR", "approved": true},
			code:    intent.CodeBadArgument,
			mention: `unknown argument "approved"`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			if tt.setup != nil {
				tt.setup(e)
			}
			tok := e.mandate("m-1", ap.DemoCompany, "EUR")
			d := e.decide(tok, ap.ActionPayBill, tt.args)
			if d.Verdict != intent.Deny || code(d) != tt.code {
				t.Fatalf("verdict %s code %s (%s), want deny %s", d.Verdict, code(d), message(d), tt.code)
			}
			if !strings.Contains(message(d), tt.mention) {
				t.Errorf("message %q does not mention %q", message(d), tt.mention)
			}
			for _, p := range e.payments(ap.DemoCompany) {
				if p.State != erp.PaymentDraft {
					t.Errorf("a payment was made: %+v", p)
				}
			}
			if d.Receipt.Seq == 0 || d.Receipt.Result != "not_executed" || d.Receipt.Code != tt.code {
				t.Errorf("receipt %+v", d.Receipt)
			}
		})
	}
}

// TestBudgetCurrency: a mandate whose budget is in another currency than
// the bill never pays it.
func TestBudgetCurrency(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tok := e.mandate("m-usd", ap.DemoCompany, "USD")
	d := e.decide(tok, ap.ActionPayBill, pay("ACME Supplies", "INV-2290", ap.DemoIBAN, "850.00"))
	if code(d) != intent.CodePolicyDenied || !strings.Contains(message(d), "the bill is in EUR, a currency the user authorised no budget in") {
		t.Fatalf("%s %s", d.Verdict, message(d))
	}
	if d.Facts["budget_currency"] != intent.Str("USD") {
		t.Errorf("budget_currency fact = %v", d.Facts["budget_currency"])
	}
}

// TestSecondPaymentRefused: a paid bill is never paid again, whatever the
// amount or spelling, and a partial payment leaves the rest payable.
func TestSecondPaymentRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tok := e.mandate("m-1", ap.DemoCompany, "EUR")
	if d := e.decide(tok, ap.ActionPayBill, pay("ACME Supplies", "INV-2290", ap.DemoIBAN, "400.00")); !d.Executed {
		t.Fatalf("partial payment: %s", message(d))
	}
	if b := e.bill(ap.DemoCompany, ap.DemoBill); b.Residual != 45000 || b.PaymentState != erp.Partial {
		t.Fatalf("after a partial payment: %+v", b)
	}
	if d := e.decide(tok, ap.ActionPayBill, pay("ACME Supplies", "INV-2290", ap.DemoIBAN, "450.01")); code(d) != intent.CodePolicyDenied {
		t.Fatalf("more than the rest: %s %s", d.Verdict, message(d))
	}
	if d := e.decide(tok, ap.ActionPayBill, pay("ACME Supplies", "INV-2290", ap.DemoIBAN, "450.00")); !d.Executed {
		t.Fatalf("the rest: %s", message(d))
	}
	for _, args := range []map[string]any{
		pay("ACME Supplies", "INV-2290", ap.DemoIBAN, "850.00"),
		pay("ACME Supplies", " inv-2290", "de89 3704 0044 0532 0130 00", "0.01"),
		withResidual(pay("ACME Supplies", "BILL/2026/11/0001", ap.DemoIBAN, "450.00"), "450.00"),
	} {
		d := e.decide(tok, ap.ActionPayBill, args)
		if code(d) != intent.CodePolicyDenied || !strings.Contains(message(d), "already paid") {
			t.Errorf("second payment %v: %s %s", args, d.Verdict, message(d))
		}
	}
	// The rest's own call again is that operation: it executed.
	if d := e.decide(tok, ap.ActionPayBill, pay("ACME Supplies", "BILL/2026/11/0001", ap.DemoIBAN, "450.00")); code(d) != intent.CodeReplayed {
		t.Errorf("the rest again: %s %s", d.Verdict, message(d))
	}
	if n := len(e.payments(ap.DemoCompany)); n != 2 {
		t.Errorf("%d payments, want 2", n)
	}
	e.verifyReceipts(ap.DemoCompany)
}

// TestConfirmThreshold: above 1,000.00 a person confirms this exact
// operation; the approval covers nothing else and is used once.
func TestConfirmThreshold(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tok := e.mandate("m-1", ap.DemoCompany, "EUR")
	args := pay("ACME Supplies", "INV-2291", ap.DemoIBAN, "2400.00")
	d := e.decide(tok, ap.ActionPayBill, args)
	if d.Verdict != intent.StepUp || d.Level != intent.LevelConfirm || d.Executed {
		t.Fatalf("want a step-up to confirm, got %s %s %s", d.Verdict, d.Level, message(d))
	}
	if !strings.Contains(message(d), "confirmation threshold") {
		t.Errorf("step-up message: %s", message(d))
	}
	alice := e.approve("alice", d)
	if other := e.decide(tok, ap.ActionPayBill, pay("ACME Supplies", "INV-2291", ap.DemoIBAN, "2399.99"), alice); code(other) != intent.CodeApprovalInvalid {
		t.Fatalf("approval of 2400.00 used for 2399.99: %s %s", other.Verdict, message(other))
	}
	ok := e.decide(tok, ap.ActionPayBill, args, alice)
	if ok.Verdict != intent.Allow || !ok.Executed || len(ok.Receipt.Approvals) != 1 {
		t.Fatalf("confirmed payment: %s %s", ok.Verdict, message(ok))
	}
	if again := e.decide(tok, ap.ActionPayBill, args, alice); again.Executed {
		t.Fatal("the approval was used twice")
	}
	if n := len(e.payments(ap.DemoCompany)); n != 1 {
		t.Errorf("%d payments, want 1", n)
	}
}

// TestThresholdsFromConfig: an operator changes the thresholds in
// ap.Config, not in the embedded policy.
func TestThresholdsFromConfig(t *testing.T) {
	t.Parallel()
	e := newEnvConfig(t, ap.Config{ConfirmAbove: 50000, MaxAmount: 200000})
	tok := e.mandate("m-1", ap.DemoCompany, "EUR")
	if d := e.decide(tok, ap.ActionPayBill, pay("ACME Supplies", "INV-2290", ap.DemoIBAN, "850.00")); d.Verdict != intent.StepUp {
		t.Errorf("850.00 above a 500.00 threshold: %s %s", d.Verdict, message(d))
	}
	d := e.decide(tok, ap.ActionPayBill, pay("ACME Supplies", "INV-2291", ap.DemoIBAN, "2400.00"))
	if code(d) != intent.CodePolicyDenied || !strings.Contains(message(d), "limit for the assistant") || !strings.Contains(message(d), "ap.Config.MaxAmount") {
		t.Errorf("2400.00 above a 2000.00 limit: %s %s", d.Verdict, message(d))
	}
	if d := e.decide(tok, ap.ActionPayBill, pay("ACME Supplies", "INV-2291", ap.DemoIBAN, "2400.00"), e.approve("alice", d), e.approve("bob", d)); d.Executed {
		t.Error("approvals lifted the maximum")
	}
}

// TestBudget: beyond the mandate's budget nothing executes and no one is
// asked to approve.
func TestBudget(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tok, err := issue(ap.DemoCompany, 100000)
	if err != nil {
		t.Fatal(err)
	}
	d := e.decide(tok, ap.ActionPayBill, pay("ACME Supplies", "INV-2291", ap.DemoIBAN, "2400.00"))
	if code(d) != intent.CodeBudgetExceeded {
		t.Fatalf("%s %s", d.Verdict, message(d))
	}
}

// TestDuplicateBill: the same invoice entered twice under another spelling
// of its reference is stepped up while neither is paid, and refused once
// one of them is.
func TestDuplicateBill(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	acme := e.vendor(ap.DemoCompany, ap.DemoVendor)
	if _, err := e.erp.AddBill(context.Background(), ap.DemoCompany, erp.Bill{Ref: "INV 02290", Vendor: acme.ID, Currency: "EUR", Total: 85000}); err != nil {
		t.Fatal(err)
	}
	tok := e.mandate("m-1", ap.DemoCompany, "EUR")
	d := e.decide(tok, ap.ActionPayBill, pay("ACME Supplies", "INV-2290", ap.DemoIBAN, "850.00"))
	if d.Verdict != intent.StepUp || d.Level != intent.LevelConfirm || !strings.Contains(message(d), `may be the same invoice as another bill of the vendor: BILL/`) ||
		!strings.Contains(message(d), `vendor reference "INV 02290", 850.00 EUR, unpaid): same invoice number, same amount`) {
		t.Fatalf("possible duplicate: %s %s", d.Verdict, message(d))
	}
	if d.Facts["bill_duplicates"] != intent.Int(1) {
		t.Errorf("bill_duplicates = %v", d.Facts["bill_duplicates"])
	}
	if ok := e.decide(tok, ap.ActionPayBill, pay("ACME Supplies", "INV-2290", ap.DemoIBAN, "850.00"), e.approve("alice", d)); !ok.Executed {
		t.Fatalf("confirmed: %s", message(ok))
	}
	for _, spelling := range []string{"INV 02290", "inv 02290"} {
		dup := e.decide(tok, ap.ActionPayBill, pay("ACME Supplies", spelling, ap.DemoIBAN, "850.00"))
		if code(dup) != intent.CodePolicyDenied || !strings.Contains(message(dup), "very likely the same invoice as a bill of the vendor that is already paid") ||
			!strings.Contains(message(dup), `BILL/2026/11/0001 (vendor reference "INV-2290", 850.00 EUR, paid)`) {
			t.Errorf("duplicate %q of a paid bill: %s %s", spelling, dup.Verdict, message(dup))
		}
	}
}

// TestConcurrentPaymentsOfOneBill: 100 concurrent payments of one bill,
// with different amounts and under different mandates: exactly one
// executes.
func TestConcurrentPaymentsOfOneBill(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	const n = 100
	toks := make([]string, n)
	for i := range toks {
		toks[i] = e.mandate(fmt.Sprintf("m-%d", i), ap.DemoCompany, "EUR")
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	executed := 0
	codes := map[intent.Code]int{}
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			amount := "850.00"
			if i%2 == 1 {
				amount = intent.FormatAmount(intent.Amount(85000-i), 2)
			}
			d, err := e.gw.Decide(context.Background(), gateway.Request{Mandate: toks[i], Proposal: mustJSON(t, ap.ActionPayBill, pay("ACME Supplies", "INV-2290", ap.DemoIBAN, amount))})
			if err != nil {
				t.Error(err)
				return
			}
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
	if ps := e.payments(ap.DemoCompany); len(ps) != 1 {
		t.Fatalf("%d payments in the ERP, want 1", len(ps))
	}
	for c := range codes {
		if c != intent.CodeInFlight && c != intent.CodePolicyDenied {
			t.Errorf("unexpected refusal code %s", c)
		}
	}
	if got := e.verifyReceipts(ap.DemoCompany); got != n {
		t.Errorf("%d receipts for %d decisions", got, n)
	}
}

// TestAmountEdgeCases: amounts are exact decimals with at most two
// fraction digits, above zero; everything else is refused before any
// record is read.
func TestAmountEdgeCases(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		amount any
		code   intent.Code // "" means executed
		minor  int64
	}{
		{"plain", "850.00", "", 85000},
		{"JSON number", 850, "", 85000},
		{"trailing zeros", "850.0000", "", 85000},
		{"one decimal", "850.0", "", 85000},
		{"partial", "0.01", "", 1},
		{"German separators", "1.250,00", intent.CodeBadArgument, 0},
		{"comma decimal", "850,00", intent.CodeBadArgument, 0},
		{"thousands separator", "1,250.00", intent.CodeBadArgument, 0},
		{"apostrophe separator", "1'250.00", intent.CodeBadArgument, 0},
		{"space separator", "1 250.00", intent.CodeBadArgument, 0},
		{"three decimals", "850.001", intent.CodeBadArgument, 0},
		{"float noise", 849.9999999999999, intent.CodeBadArgument, 0},
		{"exponent", "8.5e2", intent.CodeBadArgument, 0},
		{"zero", "0.00", intent.CodeBadArgument, 0},
		{"negative", "-850.00", intent.CodeBadArgument, 0},
		{"plus sign", "+850.00", intent.CodeBadArgument, 0},
		{"currency in the amount", "850.00 EUR", intent.CodeBadArgument, 0},
		{"overflows int64", "99999999999999999999.00", intent.CodeBadArgument, 0},
		{"largest amount", "92233720368547758.07", intent.CodePolicyDenied, 0},
		{"empty", "", intent.CodeBadArgument, 0},
		{"bool", true, intent.CodeBadArgument, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			tok := e.mandate("m-1", ap.DemoCompany, "EUR")
			args := pay("ACME Supplies", "INV-2290", ap.DemoIBAN, "")
			args["amount"] = tt.amount
			if tt.name == "largest amount" {
				tok, _ = issue(ap.DemoCompany, 1<<62)
			}
			d := e.decide(tok, ap.ActionPayBill, args)
			if code(d) != tt.code {
				t.Fatalf("amount %v: code %q (%s), want %q", tt.amount, code(d), message(d), tt.code)
			}
			if tt.code == "" && (len(e.payments(ap.DemoCompany)) != 1 || e.payments(ap.DemoCompany)[0].Amount.Amount != intent.Amount(tt.minor)) {
				t.Errorf("payments %+v, want one of %d", e.payments(ap.DemoCompany), tt.minor)
			}
		})
	}
}

// TestIBANEdgeCases: spellings of the account on file pay it; look-alikes,
// typos and numbers not on file are refused, each with its reason.
func TestIBANEdgeCases(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		iban    string
		code    intent.Code // "" means executed
		mention string
	}{
		{"electronic", "DE89370400440532013000", "", ""},
		{"print", "DE89 3704 0044 0532 0130 00", "", ""},
		{"lower case", "de89370400440532013000", "", ""},
		{"extra spaces", "  DE89  3704 0044 0532 0130 00  ", "", ""},
		{"IBAN prefix", "IBAN DE89370400440532013000", "", ""},
		{"IBAN: prefix lower case", "iban:de89 3704 0044 0532 0130 00", "", ""},
		{"wrong check digits", "DE88 3704 0044 0532 0130 00", intent.CodeBadArgument, "check digits"},
		{"one digit changed", "DE89 3704 0044 0532 0130 01", intent.CodeBadArgument, "mod-97"},
		{"one digit missing", "DE89 3704 0044 0532 0130 0", intent.CodeBadArgument, "iban"},
		{"Cyrillic E", "D\u041589370400440532013000", intent.CodeBadArgument, "U+0415"},
		{"full-width digit", "DE\uff1989370400440532013000", intent.CodeBadArgument, "U+FF19"},
		{"zero-width space", "DE89\u200b370400440532013000", intent.CodeBadArgument, "zero-width"},
		{"no-break spaces are separators", "DE89\u00a03704\u00a00044\u00a00532\u00a00130\u00a000", "", ""},
		{"thin spaces are separators", "DE89\u20093704\u20090044\u20090532\u20090130\u200900", "", ""},
		{"dashes are separators", "DE89-3704-0044-0532-0130-00", "", ""},
		{"en dash", "DE89\u20133704 0044 0532 0130 00", intent.CodeBadArgument, "U+2013"},
		{"letter O for zero", "DE89 37O4 0044 0532 0130 00", intent.CodeBadArgument, "iban"},
		{"letter O for zero, check digits matching", "DE59 3704 0044 0532 O130 00", intent.CodeBadArgument, "position 21 must be a digit"},
		{"not an IBAN country", "UK89370400440532013000", intent.CodeBadArgument, "iban"},
		{"valid, not on file", "GB29 NWBK 6016 1331 9268 19", intent.CodeNotTrusted, "account on file"},
		{"the other company's vendor's", ap.DemoOtherIBAN, intent.CodeNotTrusted, "account on file"},
		{"empty", "", intent.CodeBadArgument, "iban"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			tok := e.mandate("m-1", ap.DemoCompany, "EUR")
			d := e.decide(tok, ap.ActionPayBill, pay("ACME Supplies", "INV-2290", tt.iban, "850.00"))
			if code(d) != tt.code {
				t.Fatalf("iban %q: code %q (%s), want %q", tt.iban, code(d), message(d), tt.code)
			}
			if !strings.Contains(message(d), tt.mention) {
				t.Errorf("message %q does not mention %q", message(d), tt.mention)
			}
			if tt.code == "" && d.Operation.Args["iban"] != intent.Str(ap.DemoIBAN) {
				t.Errorf("executed iban %v", d.Operation.Args["iban"])
			}
		})
	}
}

func mustJSON(t *testing.T, action intent.Action, args map[string]any) []byte {
	t.Helper()
	b, err := json.Marshal(map[string]any{"action": action, "args": args})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func (e *env) addVendor(company, name string) {
	e.t.Helper()
	if _, err := e.erp.AddVendor(context.Background(), company, erp.Vendor{Name: name, Phone: "+1 555 0100 200", Active: true}); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) addAccount(company, vendor, number string, trusted, active bool, seq int) {
	e.t.Helper()
	_, err := e.erp.AddBankAccount(context.Background(), company, erp.BankAccount{
		Vendor: e.vendor(company, vendor).ID, Number: number, Trusted: trusted, Active: active, Sequence: seq, SetAt: t0.AddDate(0, -6, 0),
	})
	if err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) creditNote(billRef, ref string, amount intent.Amount) {
	e.t.Helper()
	b := e.bill(ap.DemoCompany, billRef)
	if _, err := e.erp.AddBill(context.Background(), ap.DemoCompany, erp.Bill{Ref: ref, Vendor: b.Vendor, Kind: erp.KindCreditNote, Currency: b.Currency, Total: amount, Reverses: b.ID}); err != nil {
		e.t.Fatal(err)
	}
}

func TestNewPackErrors(t *testing.T) {
	t.Parallel()
	if _, err := ap.NewPack(nil, ap.Config{}); err == nil {
		t.Error("NewPack(nil) succeeded")
	}
	for _, cfg := range []ap.Config{{ConfirmAbove: -1}, {MaxAmount: -1}, {CoolingOff: -time.Second}, {CallbackValidity: -time.Second}} {
		if _, err := ap.NewPack(erp.NewMem(nil), cfg); err == nil {
			t.Errorf("NewPack with %+v succeeded", cfg)
		}
	}
}
