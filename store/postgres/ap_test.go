package postgres_test

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/intentplane/intentplane/ap"
	"github.com/intentplane/intentplane/core/gateway"
	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/mandate"
	"github.com/intentplane/intentplane/erp"
	"github.com/intentplane/intentplane/store/postgres"
)

// TestAPPayBill runs the accounts-payable pack on the demo ERP through the
// gateway on PostgreSQL: the payment executes once and its replay is
// refused. Regression (issue 11): the record-lock key of ap.pay_bill holds
// NUL bytes, which a text column refused, so every payment was refused as
// "state store unavailable".
func TestAPPayBill(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	start := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	clock := func() time.Time { return start }
	books := ap.DemoERP(clock)
	pack, err := ap.NewPack(books, ap.Config{Callbacks: &ap.CallbackMem{}, Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	issuerPub, issuerKey, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	st, _ := open(t, postgres.Config{})
	gw, err := gateway.New(gateway.Config{
		Audience: "intentplane-test",
		Issuers:  mandate.StaticKeys{"finance-console": issuerPub},
		Now:      clock,
	}, st, pack)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := mandate.Issue(mandate.Mandate{
		ID: "m-ap", Audience: "intentplane-test", Owner: ap.DemoCompany, Scope: []intent.Action{ap.ActionPayBill},
		Budget: intent.Money{Currency: "EUR", Amount: 500000}, Mode: mandate.ModeKnownCounterparties,
		NotBefore: start.Add(-time.Minute), Expiry: start.Add(time.Hour),
	}, "finance-console", issuerKey)
	if err != nil {
		t.Fatal(err)
	}
	body, err := json.Marshal(map[string]any{"action": ap.ActionPayBill, "args": map[string]any{
		"vendor": "ACME Supplies", "bill": "INV-2290", "iban": ap.DemoIBAN, "amount": "850.00", "currency": "EUR"}})
	if err != nil {
		t.Fatal(err)
	}
	pay := func() gateway.Decision {
		t.Helper()
		d, err := gw.Decide(ctx, gateway.Request{Mandate: tok, Proposal: body})
		if err != nil {
			t.Fatalf("Decide: %v", err)
		}
		return d
	}
	if d := pay(); d.Verdict != intent.Allow || !d.Executed {
		t.Fatalf("first payment: verdict %v, executed %v, refusal %+v; want allowed and executed", d.Verdict, d.Executed, d.Refusal)
	}
	// The replay is refused by the policy (the bill is paid now) before
	// the operation's nonce would refuse it.
	if d := pay(); d.Verdict != intent.Deny || d.Refusal == nil || d.Refusal.Code != intent.CodePolicyDenied && d.Refusal.Code != intent.CodeReplayed {
		t.Fatalf("second payment: verdict %v, refusal %+v; want refused as paid or replayed", d.Verdict, d.Refusal)
	}
	payments, err := books.Payments(ctx, ap.DemoCompany, erp.PaymentQuery{})
	if err != nil {
		t.Fatal(err)
	}
	// Not the demo's payment made by hand before (ap.DemoPaidBill).
	payments = slices.DeleteFunc(payments, func(p erp.Payment) bool { return p.Key == "" })
	if len(payments) != 1 || payments[0].Amount.Amount != 85000 {
		t.Fatalf("payments = %+v, want one of 850.00", payments)
	}
	if u, err := st.Usage(ctx, "m-ap"); err != nil || u.Committed != 85000 || u.Reserved != 0 {
		t.Fatalf("Usage = %+v, %v; want 850.00 committed, nothing reserved", u, err)
	}
}
