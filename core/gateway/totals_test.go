package gateway_test

import (
	"context"
	"crypto/ed25519"
	"fmt"
	"math"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/intentplane/intentplane/core/approval"
	"github.com/intentplane/intentplane/core/contract"
	"github.com/intentplane/intentplane/core/gateway"
	"github.com/intentplane/intentplane/core/gateway/gatewaytest"
	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/mandate"
	"github.com/intentplane/intentplane/core/state"
)

// totalsSchema is gatewaytest's schema with the facts sent_today and, for
// TestTotalsConverted, amount_company and company_currency.
var totalsSchema = strings.Replace(gatewaytest.Schema, "paid_today: Long },",
	"paid_today: Long, sent_today: Long, amount_company?: Long, company_currency?: String },", 1)

const totalsPolicy = `
@id("send") @reason("payments to resolved recipients")
permit (principal, action == Action::"pay.send", resource);

@id("confirm-day") @approval("confirm") @reason("a recipient's day above 1,000.00 needs a person to confirm")
forbid (principal, action == Action::"pay.send", resource)
when { context.amount + context.facts.sent_today > 100000 } unless { context.approval.confirm };
`

// totalsWorld is newWorld's pack with a running total on pay.send: what
// was sent to the recipient in the day (UTC), given as sent_today, with
// the provider's paid_today (always 0 here) as its outside part.
func totalsWorld(t *testing.T, exec gateway.Executor) (*world, *consumeCrash) {
	return totalsWorldWith(t, exec, "", "", nil)
}

// totalsWorldWith is totalsWorld with the contract's TotalsAmount and
// TotalsCurrency, and a further context provider if not nil.
func totalsWorldWith(t *testing.T, exec gateway.Executor, amount, currency string, extra gateway.ContextProvider) (*world, *consumeCrash) {
	t.Helper()
	c, err := contract.New(contract.Contract{Action: "pay.send", Budget: "amount", Resource: "recipient",
		TotalsAmount: amount, TotalsCurrency: currency,
		Totals: []contract.Total{{Name: "sent_today", By: []string{"recipient"}, Window: contract.Day, Outside: "paid_today"}},
		Params: []contract.Parameter{
			{Name: "recipient", Type: contract.String(64), Required: true, Critical: true, Normalizer: gatewaytest.Normalize,
				Sources: []contract.Source{contract.FromMandate("payees"), contract.FromRegistry("beneficiaries")}},
			{Name: "amount", Type: contract.Amount(2), Required: true},
			{Name: "memo", Type: contract.String(140)},
		}})
	if err != nil {
		t.Fatal(err)
	}
	return crashWorldWith(t, exec, func(p *gateway.Pack) {
		p.Contracts = []*contract.Contract{c}
		p.Policies = fstest.MapFS{"policy.cedar": {Data: []byte(totalsPolicy)}, "schema.cedarschema": {Data: []byte(totalsSchema)}}
		if extra != nil {
			p.Context = append(p.Context, extra)
		}
	})
}

// TestTotals: the day's total is a fact, its reservation is released on a
// step-up and committed on execution, the step-up shows it, and a new day
// starts from zero.
func TestTotals(t *testing.T) {
	t.Parallel()
	w, _ := totalsWorld(t, &crashing{ran: map[intent.OperationHash]bool{}})
	tok, err := mandate.Issue(mandate.Mandate{
		ID: "m-emma-2d", Issuer: "bank-app", Audience: "intentplane-test", Owner: "emma",
		Scope: []intent.Action{"pay.send"}, Budget: intent.Money{Currency: "EUR", Amount: 1000000},
		Mode: mandate.ModeKnownCounterparties, NotBefore: t0, Expiry: t0.Add(48 * time.Hour),
	}, "bank-app", w.issuer)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	acct := state.TotalAccount("emma", "pay", "sent_today", "EUR", w.now.Format(time.DateOnly), "GB29")
	if d := w.decide(tok, send("GB29", "600.00")); !d.Executed || d.Facts["sent_today"].Int != 0 {
		t.Fatalf("first: %s %v %+v", d.Verdict, d.Facts["sent_today"], d.Refusal)
	}
	d := w.decide(tok, send("GB29", "600.01"))
	if d.Verdict != intent.StepUp || d.Facts["sent_today"].Int != 60000 {
		t.Fatalf("second: %s %v %+v", d.Verdict, d.Facts["sent_today"], d.Refusal)
	}
	if want := "(this payment 600.01 EUR; paid to GB29 today 600.00 EUR)"; !strings.Contains(d.Refusal.Message, want) {
		t.Errorf("the step-up does not show %q: %s", want, d.Refusal.Message)
	}
	if u, _ := w.store.Usage(ctx, acct); u.Committed != 60000 || u.Reserved != 0 {
		t.Errorf("after the step-up: %+v, want 600.00 committed and nothing reserved", u)
	}
	if d = w.decide(tok, send("GB29", "600.01"), w.approve("alice", d)); !d.Executed {
		t.Fatalf("confirmed: %s %+v", d.Verdict, d.Refusal)
	}
	if u, _ := w.store.Usage(ctx, acct); u.Committed != 120001 || u.Reserved != 0 {
		t.Errorf("after the second: %+v, want 1200.01 committed", u)
	}
	w.now = w.now.Add(24 * time.Hour)
	if d := w.decide(tok, send("GB29", "600.02")); !d.Executed || d.Facts["sent_today"].Int != 0 {
		t.Errorf("the next day: %s %v %+v", d.Verdict, d.Facts["sent_today"], d.Refusal)
	}
}

// TestReconcileTotals: a crash after executing leaves the operation's
// budget and total reservations open; reconciliation commits both, with
// one receipt; a crash before the nonce releases both.
func TestReconcileTotals(t *testing.T) {
	t.Parallel()
	exec := &crashing{ran: map[intent.OperationHash]bool{}}
	w, st := totalsWorld(t, exec)
	tok := w.mandate("emma", 1000000)
	ctx := context.Background()
	acct := state.TotalAccount("emma", "pay", "sent_today", "EUR", w.now.Format(time.DateOnly), "GB29")
	crashTwice(t, w, st, exec, tok)
	exec.set("")
	if u, _ := w.store.Usage(ctx, acct); u.Reserved != 300 {
		t.Fatalf("before reconciling: %+v, want 3.00 reserved", u)
	}
	w.now = w.now.Add(2 * time.Second)
	rep, err := w.gw.Reconcile(ctx, w.now)
	if err != nil {
		t.Fatal(err)
	}
	if n, r := rep.Count(gateway.OutcomeCommitted), rep.Count(gateway.OutcomeReleased); n != 2 || r != 2 {
		t.Errorf("committed %d, released %d, want 2 and 2 (budget and total of each): %+v", n, r, rep.Settlements)
	}
	if u, _ := w.store.Usage(ctx, acct); u.Committed != 200 || u.Reserved != 0 {
		t.Errorf("after reconciling: %+v, want 2.00 committed", u)
	}
	if rs, err := w.store.Receipts(ctx, "emma", 1, 0); err != nil || len(rs) != 2 {
		t.Errorf("%d reconciliation receipts (%v), want 2: one per operation", len(rs), err)
	}
}

// convertedFacts gives amount_company (the amount, doubled: a made-up
// rate of 0.5 units per unit of XTS) and company_currency XTS, unless
// missing.
type convertedFacts struct{ missing bool }

func (c convertedFacts) Facts(_ context.Context, q gateway.FactQuery) (map[string]intent.Value, error) {
	if c.missing || q.Action != "pay.send" {
		return nil, nil
	}
	return map[string]intent.Value{"amount_company": intent.Int(2 * q.Args["amount"].Int), "company_currency": intent.Str("XTS")}, nil
}

// TestTotalsConverted: with Contract.TotalsAmount the totals add up the
// converted amount in the currency the contract names, the step-up shows
// both amounts; a provider that does not give the facts fails closed.
func TestTotalsConverted(t *testing.T) {
	t.Parallel()
	for _, missing := range []bool{false, true} {
		w, _ := totalsWorldWith(t, &crashing{ran: map[intent.OperationHash]bool{}}, "amount_company", "company_currency", convertedFacts{missing})
		tok := w.mandate("emma", 1000000)
		d := w.decide(tok, send("GB29", "300.00"))
		if missing {
			if d.Executed || d.Refusal == nil || d.Refusal.Code != intent.CodeContextFailed {
				t.Errorf("without the converted amount: %s %+v; want refused, systems unreadable", d.Verdict, d.Refusal)
			}
			continue
		}
		if !d.Executed {
			t.Fatalf("first: %s %+v", d.Verdict, d.Refusal)
		}
		acct := state.TotalAccount("emma", "pay", "sent_today", "XTS", w.now.Format(time.DateOnly), "GB29")
		if u, _ := w.store.Usage(context.Background(), acct); u.Committed != 60000 {
			t.Errorf("the day's total in XTS: %+v, want 600.00 committed", u)
		}
		// The policy adds the amount to the day's total in XTS.
		d = w.decide(tok, send("GB29", "400.01"))
		if d.Verdict != intent.StepUp || !strings.Contains(d.Refusal.Message, "(this payment 400.01 EUR (800.02 XTS); paid to GB29 today 600.00 XTS)") {
			t.Errorf("second: %s %+v", d.Verdict, d.Refusal)
		}
	}
}

// TestTotalsOverflowRefused (issue 24): an amount that, added to what the
// recipient's total already holds, would overflow the total is refused by
// the policy with its reason, not told that the store is unavailable;
// nothing executes and nothing stays reserved.
func TestTotalsOverflowRefused(t *testing.T) {
	t.Parallel()
	exec := &crashing{ran: map[intent.OperationHash]bool{}}
	w, _ := totalsWorld(t, exec)
	tok := w.mandate("emma", math.MaxInt64)
	if d := w.decide(tok, send("GB29", "600.00")); !d.Executed {
		t.Fatalf("first: %s %+v", d.Verdict, d.Refusal)
	}
	for _, amount := range []string{"92233720368547758.07", "92233720368547158.08"} {
		d := w.decide(tok, send("GB29", amount))
		if d.Verdict != intent.Deny || d.Refusal == nil || d.Refusal.Code != intent.CodePolicyDenied ||
			!strings.Contains(d.Refusal.Message, "would exceed the largest total the gateway can keep") ||
			!strings.Contains(d.Refusal.Message, "to GB29 today") {
			t.Errorf("%s after 600.00: %s %+v, want a policy refusal naming the total", amount, d.Verdict, d.Refusal)
		}
	}
	acct := state.TotalAccount("emma", "pay", "sent_today", "EUR", w.now.Format(time.DateOnly), "GB29")
	if u, _ := w.store.Usage(context.Background(), acct); u.Committed != 60000 || u.Reserved != 0 {
		t.Errorf("the total after the refusals: %+v, want 600.00 committed and nothing reserved", u)
	}
	// The largest amount that fits with the total is the policy's to
	// decide (here: a person confirms).
	if d := w.decide(tok, send("GB29", "92233720368547158.07")); d.Verdict != intent.StepUp {
		t.Errorf("the largest amount that fits: %s %+v, want a step-up", d.Verdict, d.Refusal)
	}
}

// TestPolicyOverflowRefused (issue 24): a policy that adds to the amount
// and overflows tells the agent that the amount is too large to check,
// with the policy's id, as a policy refusal, not "could not decide".
func TestPolicyOverflowRefused(t *testing.T) {
	t.Parallel()
	pol := `
@id("send") @reason("payments to resolved recipients")
permit (principal, action == Action::"pay.send", resource);

@id("fee-limit") @reason("a payment and its fee above 1,000.00")
forbid (principal, action == Action::"pay.send", resource)
when { context.amount + 150 > 100000 };
`
	w, _ := crashWorldWith(t, &crashing{ran: map[intent.OperationHash]bool{}}, func(p *gateway.Pack) {
		p.Policies = fstest.MapFS{"policy.cedar": {Data: []byte(pol)}, "schema.cedarschema": {Data: []byte(gatewaytest.Schema)}}
	})
	tok := w.mandate("emma", math.MaxInt64)
	d := w.decide(tok, send("GB29", "92233720368547758.07"))
	if d.Verdict != intent.Deny || d.Refusal == nil || d.Refusal.Code != intent.CodePolicyDenied ||
		!strings.Contains(d.Refusal.Message, "policy fee-limit cannot add this amount") {
		t.Errorf("overflowing policy: %s %+v, want a policy refusal naming fee-limit", d.Verdict, d.Refusal)
	}
	if d := w.decide(tok, send("GB29", "998.00")); !d.Executed {
		t.Errorf("998.00: %s %+v", d.Verdict, d.Refusal)
	}
}

// TestAmountScaleMatchesCurrency (issue 24): an amount read with another
// scale than its currency's minor unit (a tool reading 2 decimals under a
// JPY budget, where ¥100 became 10000 minor units and was refused as
// "exceeding" a ¥500 budget) is refused for that reason before anything
// is reserved; an amount at the currency's scale is counted and shown
// with its exponent ("100 JPY", "1.250 KWD").
func TestAmountScaleMatchesCurrency(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		currency string
		scale    uint8
		budget   intent.Amount
		amount   string
		want     string // in the step-up or refusal
	}{
		{"JPY", 0, 500, "100", "this payment 100 JPY; paid to GB29 today 100 JPY"},
		{"KWD", 3, 500000, "1.250", "this payment 1.250 KWD; paid to GB29 today 1.250 KWD"},
		{"JPY", 2, 50000, "100", `The amount "amount" is read with 2 decimals, but its currency JPY has 0`},
		{"KWD", 2, 500000, "1.25", `The amount "amount" is read with 2 decimals, but its currency KWD has 3`},
		{"EUR", 0, 500, "100", `The amount "amount" is read with 0 decimals, but its currency EUR has 2`},
	} {
		t.Run(fmt.Sprintf("%s-%d", c.currency, c.scale), func(t *testing.T) {
			t.Parallel()
			ct, err := contract.New(contract.Contract{Action: "pay.send", Budget: "amount", Resource: "recipient",
				Totals: []contract.Total{{Name: "sent_today", By: []string{"recipient"}, Window: contract.Day, Outside: "paid_today"}},
				Params: []contract.Parameter{
					{Name: "recipient", Type: contract.String(64), Required: true, Critical: true, Normalizer: gatewaytest.Normalize,
						Sources: []contract.Source{contract.FromMandate("payees"), contract.FromRegistry("beneficiaries")}},
					{Name: "amount", Type: contract.Amount(c.scale), Required: true},
					{Name: "memo", Type: contract.String(140)},
				}})
			if err != nil {
				t.Fatal(err)
			}
			pol := `@id("send") permit (principal, action == Action::"pay.send", resource);
@id("confirm") @approval("confirm") forbid (principal, action == Action::"pay.send", resource) when { context.amount > 0 } unless { context.approval.confirm };`
			exec := &crashing{ran: map[intent.OperationHash]bool{}}
			w, _ := crashWorldWith(t, exec, func(p *gateway.Pack) {
				p.Contracts = []*contract.Contract{ct}
				p.Policies = fstest.MapFS{"policy.cedar": {Data: []byte(pol)}, "schema.cedarschema": {Data: []byte(totalsSchema)}}
			})
			tok, err := mandate.Issue(mandate.Mandate{
				ID: "m-" + c.currency, Issuer: "bank-app", Audience: "intentplane-test", Owner: "emma",
				Scope: []intent.Action{"pay.send"}, Budget: intent.Money{Currency: c.currency, Amount: c.budget},
				Mode: mandate.ModeKnownCounterparties, NotBefore: t0, Expiry: t0.Add(time.Hour),
			}, "bank-app", w.issuer)
			if err != nil {
				t.Fatal(err)
			}
			d := w.decide(tok, send("GB29", c.amount))
			if int(c.scale) == (intent.Money{Currency: c.currency}).Exponent() {
				if d = w.decide(tok, send("GB29", c.amount), w.approve("alice", d)); !d.Executed {
					t.Fatalf("confirmed: %s %+v", d.Verdict, d.Refusal)
				}
				// The second shows the total with the currency's exponent,
				// and the budget counts minor units of the currency.
				d = w.decide(tok, `{"action":"pay.send","args":{"recipient":"GB29","amount":"`+c.amount+`","memo":"2"}}`)
				if d.Refusal == nil || !strings.Contains(d.Refusal.Message, c.want) {
					t.Fatalf("second: %s %+v; want %q", d.Verdict, d.Refusal, c.want)
				}
				return
			}
			if d.Refusal == nil || !strings.Contains(d.Refusal.Message, c.want) {
				t.Fatalf("%s %+v; want %q", d.Verdict, d.Refusal, c.want)
			}
			if d.Verdict != intent.Deny || d.Refusal.Code != intent.CodeBadArgument {
				t.Errorf("%s %s; want a bad argument", d.Verdict, d.Refusal.Code)
			}
			acct := state.TotalAccount("emma", "pay", "sent_today", c.currency, w.now.Format(time.DateOnly), "GB29")
			if u, _ := w.store.Usage(context.Background(), acct); u.Committed != 0 || u.Reserved != 0 {
				t.Errorf("the refused amount is counted: %+v", u)
			}
		})
	}
}

// TestRetryAfterBudgetUsed (issue 24): a retry of a payment that executed,
// once the budget is used up (by it), is told that it executed, not that
// it exceeds the budget: with or without the approval it needed, and
// after a restart of the gateway on the same store. Another payment is
// still told the budget is used.
func TestRetryAfterBudgetUsed(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	tok := w.mandate("emma", 120000)
	small, large := send("GB29", "600.00"), send("GB29", "1100.00")
	if d := w.decide(tok, small); !d.Executed {
		t.Fatalf("first: %s %+v", d.Verdict, d.Refusal)
	}
	d := w.decide(tok, send("GB29", "600.00")+" ")
	if d.Executed || d.Refusal == nil || d.Refusal.Code != intent.CodeReplayed {
		t.Fatalf("retry: %s %+v; want already executed", d.Verdict, d.Refusal)
	}
	w2 := newWorld(t)
	tok2 := w2.mandate("emma", 110000)
	d = w2.decide(tok2, large)
	if d.Verdict != intent.StepUp {
		t.Fatalf("large: %s %+v; want a step-up", d.Verdict, d.Refusal)
	}
	if d = w2.decide(tok2, large, w2.approve("alice", d)); !d.Executed {
		t.Fatalf("large approved: %s %+v", d.Verdict, d.Refusal)
	}
	restarted, err := gateway.New(gateway.Config{
		Audience:  "intentplane-test",
		Issuers:   mandate.StaticKeys{"bank-app": w2.issuer.Public().(ed25519.PublicKey)},
		Approvers: approval.StaticKeys{"alice": w2.approvers["alice"].Public().(ed25519.PublicKey)},
		Now:       func() time.Time { return w2.now },
	}, w2.store, w2.pack)
	if err != nil {
		t.Fatal(err)
	}
	for _, gw := range []*gateway.Gateway{w2.gw, restarted} {
		for _, as := range [][]approval.Approval{nil, {w2.approve("alice", d)}} {
			r, err := gw.Decide(context.Background(), gateway.Request{Mandate: tok2, Proposal: []byte(large), Approvals: as})
			if err != nil || r.Executed || r.Refusal == nil || r.Refusal.Code != intent.CodeReplayed {
				t.Errorf("retry of the large payment (%d approvals): %s %+v %v; want already executed", len(as), r.Verdict, r.Refusal, err)
			}
		}
	}
	if d := w2.decide(tok2, send("GB29", "50.00")); d.Executed || d.Refusal == nil || d.Refusal.Code != intent.CodeBudgetExceeded {
		t.Errorf("another payment: %s %+v; want the budget exceeded", d.Verdict, d.Refusal)
	}
}
