package gatewaytest

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing/fstest"
	"time"

	"github.com/intentplane/intentplane/core/contract"
	"github.com/intentplane/intentplane/core/gateway"
	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/mandate"
	"github.com/intentplane/intentplane/core/resolve"
	"github.com/intentplane/intentplane/core/state"
)

// currencySchema and currencyPolicy are the fx pack's: fx.send pays a
// trusted recipient an amount in a currency, which a context provider
// gives as the fact payment_currency (the contract's BudgetCurrency).
const (
	currencySchema = schemaHead + `action "fx.send" appliesTo {
  principal: Owner, resource: Resource,
  context: {
    args: { recipient: String, amount: Long, currency: String, memo: String },
    facts: { payment_currency: String, recipient_trusted?: Bool },
    approval: Approval, mandate: Mandate, amount: Long,
  },
};
`
	currencyPolicy = `@id("send") @reason("payments to resolved recipients")
permit (principal, action == Action::"fx.send", resource);
`
)

// PerCurrency pays, from clients goroutines at once through one gateway
// over st, 150 payments of 1.00 EUR and 150 of 1.00 USD under a mandate
// with a budget of 100.00 EUR and one of 50.00 USD, then one of 1.00 GBP.
// It returns an error unless exactly 100 EUR and 50 USD payments executed,
// each budget's account (the mandate id; state.BudgetAccount for USD)
// shows exactly its budget committed and nothing reserved, and the GBP
// payment was refused as budget.exceeded naming the budgets. For the
// stores' tests: budgets are exact per currency under concurrency.
func PerCurrency(ctx context.Context, st gateway.Store, clients int) error {
	var mu sync.Mutex
	executed := map[string]int{}
	exec := gateway.ExecutorFunc(func(ctx context.Context, op intent.Operation, h intent.OperationHash) (gateway.Result, error) {
		mu.Lock()
		executed[op.Args["currency"].Str]++
		mu.Unlock()
		return gateway.Result{Output: `{"ok":true}`}, nil
	})
	gw, tok, err := currencyGateway(st, exec)
	if err != nil {
		return err
	}
	send1 := func(currency string, i int) (gateway.Decision, error) {
		body := fmt.Appendf(nil, `{"action":"fx.send","args":{"recipient":"DE89","amount":"1.00","currency":%q,"memo":"%s-%d"}}`, currency, currency, i)
		return gw.Decide(ctx, gateway.Request{Mandate: tok, Proposal: body})
	}
	if err := concurrently(clients, 300, func(j int) error {
		_, err := send1([]string{"EUR", "USD"}[j%2], j)
		return err
	}); err != nil {
		return err
	}
	if executed["EUR"] != 100 || executed["USD"] != 50 {
		return fmt.Errorf("executed %d EUR and %d USD payments of 1.00; want exactly 100 and 50", executed["EUR"], executed["USD"])
	}
	for acct, want := range map[string]intent.Amount{perCurrencyMandate: 100_00, state.BudgetAccount(perCurrencyMandate, "USD"): 50_00} {
		u, err := st.Usage(ctx, acct)
		if err != nil {
			return err
		}
		if u.Committed != want || u.Reserved != 0 {
			return fmt.Errorf("account %q: %+v; want %d committed, nothing reserved", acct, u, want)
		}
	}
	d, err := send1("GBP", 0)
	if err != nil {
		return err
	}
	if d.Executed || d.Refusal == nil || d.Refusal.Code != intent.CodeBudgetExceeded || !strings.Contains(d.Refusal.Message, "no budget in GBP (its budgets: 100.00 EUR, 50.00 USD)") {
		return fmt.Errorf("a GBP payment: executed %v, refusal %+v; want refused, no budget in GBP", d.Executed, d.Refusal)
	}
	return nil
}

// perCurrencyMandate is the id of PerCurrency's mandate.
const perCurrencyMandate = "m-per-currency"

// currencyGateway returns PerCurrency's gateway over st, the fx pack
// executing with exec, and its mandate: 100.00 EUR and 50.00 USD.
func currencyGateway(st gateway.Store, exec gateway.Executor) (*gateway.Gateway, string, error) {
	send, err := contract.New(contract.Contract{Action: "fx.send", Budget: "amount", BudgetCurrency: "payment_currency", Resource: "recipient",
		Params: []contract.Parameter{
			{Name: "recipient", Type: contract.String(64), Required: true, Critical: true, Normalizer: Normalize,
				Sources: []contract.Source{contract.FromRegistry("beneficiaries")}},
			{Name: "amount", Type: contract.Amount(2), Required: true},
			{Name: "currency", Type: contract.String(3), Required: true},
			{Name: "memo", Type: contract.String(140), Required: true},
		}})
	if err != nil {
		return nil, "", err
	}
	fx := gateway.ContextFunc(func(ctx context.Context, q gateway.FactQuery) (map[string]intent.Value, error) {
		return map[string]intent.Value{"payment_currency": q.Args["currency"]}, nil
	})
	issuerPub, issuer, _, _ := Keys()
	now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	gw, err := gateway.New(gateway.Config{Audience: Audience, Issuers: mandate.StaticKeys{"issuer": issuerPub}, Now: func() time.Time { return now }},
		st, gateway.Pack{
			Name: "fx", Contracts: []*contract.Contract{send},
			Policies:   fstest.MapFS{"policy.cedar": {Data: []byte(currencyPolicy)}, "schema.cedarschema": {Data: []byte(currencySchema)}},
			Registries: map[string]resolve.Registry{"beneficiaries": recipients()},
			Context:    []gateway.ContextProvider{fx}, Executor: exec,
		})
	if err != nil {
		return nil, "", err
	}
	tok, err := mandate.Issue(mandate.Mandate{
		ID: perCurrencyMandate, Audience: Audience, Owner: "owner:fx", Scope: []intent.Action{"fx.send"},
		Budget: intent.Money{Currency: "EUR", Amount: 100_00}, Budgets: []intent.Money{{Currency: "USD", Amount: 50_00}},
		Mode: mandate.ModeKnownCounterparties, NotBefore: now.Add(-time.Hour), Expiry: now.Add(time.Hour),
	}, "issuer", issuer)
	return gw, tok, err
}

// concurrently runs do(0) to do(n-1) from clients goroutines and returns
// the first error, after every goroutine has stopped. A goroutine whose
// do fails keeps taking jobs, skipping them, so that the jobs are never
// left without a taker.
func concurrently(clients, n int, do func(int) error) error {
	jobs := make(chan int)
	errs := make(chan error, clients)
	var wg sync.WaitGroup
	for range clients {
		wg.Go(func() {
			failed := false
			for j := range jobs {
				if failed {
					continue
				}
				if err := do(j); err != nil {
					errs <- err
					failed = true
				}
			}
		})
	}
	for j := range n {
		jobs <- j
	}
	close(jobs)
	wg.Wait()
	close(errs)
	return <-errs
}
