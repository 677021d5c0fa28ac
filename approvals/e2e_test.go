package approvals_test

import (
	"context"
	"crypto/ed25519"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/intentplane/intentplane/approvals"
	"github.com/intentplane/intentplane/core/approval"
	"github.com/intentplane/intentplane/core/gateway"
	"github.com/intentplane/intentplane/core/gateway/gatewaytest"
	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/mandate"
	"github.com/intentplane/intentplane/core/resolve"
	"github.com/intentplane/intentplane/internal/browsertest"
	"github.com/intentplane/intentplane/internal/testclock"
	"github.com/intentplane/intentplane/store/mem"
)

// pendingFrom is what a front door does with a step-up: the Pending shows
// exactly what the gateway decided on.
func pendingFrom(d gateway.Decision, currency string) approval.Request {
	return approval.Request{
		Operation: *d.Operation, Hash: d.OperationHash, Level: d.Level,
		Resolved: d.Resolved, Reason: d.Refusal.Message, Currency: currency,
	}
}

// TestEndToEnd: a real gateway steps up, the request goes to the page, a
// person signs in and approves in Chromium, the approvals are fed back to
// gateway.Decide and the operation executes once; one cent more needs
// another approval. The approval page's receipts land in the gateway's
// store, in the owner's chain.
func TestEndToEnd(t *testing.T) {
	b := browsertest.Start(t)
	clk := testclock.New(t0)
	st := mem.New(clk.Now)

	// The approval page, logging into the gateway's store.
	var h http.Handler
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h.ServeHTTP(w, r) }))
	defer ts.Close()
	cfg := approvals.Config{BaseURL: ts.URL, Now: clk.Now}
	for _, name := range []string{"alice", "bob"} {
		cfg.Approvers = append(cfg.Approvers, approvals.Approver{Name: name, Passcode: hashes()[name], Key: approverKeys[name]})
	}
	page, err := approvals.New(cfg, st, st)
	if err != nil {
		t.Fatal(err)
	}
	h = page.Handler()

	// The gateway, trusting the page's approver keys.
	issuerPub, issuer, _ := ed25519.GenerateKey(seed(1))
	var executed []intent.Operation
	beneficiaries := resolve.RegistryFunc(func(ctx context.Context, owner intent.Owner, v string) (resolve.Record, error) {
		if owner == "emma" && v == "GB29" {
			return resolve.Record{ID: "ben-1", Value: "GB29", Version: "4", At: t0.Add(-90 * 24 * time.Hour)}, nil
		}
		return resolve.Record{}, resolve.ErrNoMatch
	})
	// The shared test pack "pay": payments above 1,000.00 need a person
	// to confirm.
	pack, err := gatewaytest.Pack(gatewaytest.Options{Beneficiaries: beneficiaries,
		Executor: gateway.ExecutorFunc(func(ctx context.Context, op intent.Operation, h intent.OperationHash) (gateway.Result, error) {
			executed = append(executed, op)
			return gateway.Result{Output: "ok", Summary: "tx-" + h.String()[:8]}, nil
		})})
	if err != nil {
		t.Fatal(err)
	}
	gw, err := gateway.New(gateway.Config{
		Audience: "intentplane-test", Issuers: mandate.StaticKeys{"bank-app": issuerPub},
		Approvers: page.Keys(), Now: clk.Now,
	}, st, pack)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := mandate.Issue(mandate.Mandate{
		ID: "m-emma", Issuer: "bank-app", Audience: "intentplane-test", Owner: "emma",
		Scope: []intent.Action{"pay.send"}, Budget: intent.Money{Currency: "EUR", Amount: 1000000},
		Mode: mandate.ModeKnownCounterparties, NotBefore: t0, Expiry: t0.Add(time.Hour),
	}, "bank-app", issuer)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	decide := func(body string, as ...approval.Approval) gateway.Decision {
		t.Helper()
		d, err := gw.Decide(ctx, gateway.Request{Mandate: tok, Proposal: []byte(body), Approvals: as})
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	body := func(amount string) string {
		return fmt.Sprintf(`{"action":"pay.send","args":{"recipient":"gb 29","amount":%q,"memo":"rent"}}`, amount)
	}

	// 1. The gateway steps up.
	d := decide(body("1500.00"))
	if d.Verdict != intent.StepUp || d.Level != intent.LevelConfirm {
		t.Fatalf("want a step-up, got %s %+v", d.Verdict, d.Refusal)
	}
	// 2. The front door submits it and waits (wait = N).
	tk, err := page.Request(ctx, pendingFrom(d, "EUR"))
	if err != nil {
		t.Fatal(err)
	}
	awaited := make(chan approvals.Outcome, 1)
	go func() {
		out, err := approvals.Await(ctx, page, tk.ID, 60*time.Second)
		if err != nil {
			t.Error(err)
		}
		awaited <- out
	}()
	// 3. A person signs in and approves in the browser.
	tctx := browsertest.Tab(t, b)
	openAs(t, tctx, tk.URL, "alice")
	if got := text(t, tctx, "#amount-amount"); got != "1,500.00 EUR" {
		t.Fatalf("amount shown %q", got)
	}
	do(t, tctx, chromedp.Click(chromedp.ID("approve")), chromedp.WaitVisible(chromedp.ID("decided")))
	var out approvals.Outcome
	select {
	case out = <-awaited:
	case <-time.After(30 * time.Second):
		t.Fatal("Await did not return after the approval")
	}
	if out.Status != approvals.StatusApproved || len(out.Approvals) != 1 {
		t.Fatalf("outcome %+v", out)
	}
	// 4. One cent more is another operation: the approval does not cover it.
	if d := decide(body("1500.01"), out.Approvals...); d.Verdict != intent.Deny || d.Refusal.Code != intent.CodeApprovalInvalid {
		t.Fatalf("one cent more with the approval: %s %+v", d.Verdict, d.Refusal)
	}
	if d := decide(body("1500.01")); d.Verdict != intent.StepUp || d.OperationHash == out.Hash {
		t.Fatalf("one cent more needs its own approval: %s", d.Verdict)
	}
	// 5. The approval fed back to the gateway: the operation executes.
	ok := decide(body("1500.00"), out.Approvals...)
	if ok.Verdict != intent.Allow || !ok.Executed || len(executed) != 1 || executed[0].Args["amount"].Int != 150000 {
		t.Fatalf("approved operation: %s %+v", ok.Verdict, ok.Refusal)
	}
	if len(ok.Receipt.Approvals) != 1 || ok.Receipt.Approvals[0].Approver != "alice" {
		t.Fatalf("receipt evidence %+v", ok.Receipt.Approvals)
	}
	// 6. The approval is single use.
	if d := decide(body("1500.00"), out.Approvals...); d.Verdict != intent.Deny || d.Executed {
		t.Fatalf("replayed approval: %s %+v", d.Verdict, d.Refusal)
	}
	if len(executed) != 1 {
		t.Fatalf("executed %d times", len(executed))
	}
	// The owner's chain holds the step-up, the approval request, the
	// decision and the execution, in order.
	rs, err := st.Receipts(ctx, "emma", 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range rs[:6] {
		got = append(got, r.Verdict.String()+"/"+r.Result)
	}
	want := []string{"step_up/not_executed", "step_up/not_executed", "step_up/not_executed", "deny/not_executed", "step_up/not_executed", "allow/executed"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("chain %v, want %v", got, want)
	}
	if rs[2].Approvals[0].ID != out.Approvals[0].ID || rs[5].Approvals[0].ID != out.Approvals[0].ID {
		t.Fatal("the decision's receipt and the execution's do not name the same approval")
	}
}
