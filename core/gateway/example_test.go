package gateway_test

import (
	"context"
	"crypto/ed25519"
	"fmt"
	"testing/fstest"
	"time"

	"github.com/intentplane/intentplane/core/contract"
	"github.com/intentplane/intentplane/core/gateway"
	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/mandate"
	"github.com/intentplane/intentplane/core/resolve"
	"github.com/intentplane/intentplane/store/mem"
)

// A pack is a domain: contracts, trusted sources, a Cedar policy and an
// executor. This one pays a recipient from the user's address book; the
// agent's spelling of the recipient is only used to look it up there.
func ExampleGateway_Decide() {
	// 1. The pack's one action: pay.send, whose recipient is critical (it
	// must resolve through the "payees" registry) and whose amount is
	// reserved against the mandate's budget.
	send, err := contract.New(contract.Contract{Action: "pay.send", Budget: "amount", Resource: "recipient", Params: []contract.Parameter{
		{Name: "recipient", Type: contract.String(64), Required: true, Critical: true, Sources: []contract.Source{contract.FromRegistry("payees")}},
		{Name: "amount", Type: contract.Amount(2), Required: true},
	}})
	if err != nil {
		panic(err)
	}
	payees := resolve.RegistryFunc(func(ctx context.Context, owner intent.Owner, v string) (resolve.Record, error) {
		if owner == "emma" && v == "GB29NWBK60161331926819" {
			return resolve.Record{ID: "payee-1", Value: v}, nil
		}
		return resolve.Record{}, resolve.ErrNoMatch
	})
	// The policy: payments are allowed; above 1,000.00 a person confirms.
	policy := fstest.MapFS{
		"schema.cedarschema": {Data: []byte(`entity Owner; entity Resource;
type Approval = { confirm: Bool, four_eyes: Bool };
type Mandate = { mode: String };
action "pay.send" appliesTo { principal: Owner, resource: Resource,
  context: { args: { recipient: String, amount: Long }, facts: {}, approval: Approval, mandate: Mandate, amount: Long } };`)},
		"policy.cedar": {Data: []byte(`@id("send") @reason("payments to payees on file")
permit (principal, action == Action::"pay.send", resource);
@id("confirm-large") @approval("confirm") @reason("payments above 1,000.00 need a person to confirm")
forbid (principal, action == Action::"pay.send", resource) when { context.amount > 100000 } unless { context.approval.confirm };`)},
	}
	pack := gateway.Pack{
		Name: "pay", Contracts: []*contract.Contract{send}, Policies: policy,
		Registries: map[string]resolve.Registry{"payees": payees},
		Executor: gateway.ExecutorFunc(func(ctx context.Context, op intent.Operation, h intent.OperationHash) (gateway.Result, error) {
			return gateway.Result{Output: "sent EUR " + op.Args["amount"].String() + " to " + op.Args["recipient"].Str}, nil
		}),
	}

	// 2. The gateway trusts one mandate issuer (the user's banking app).
	issuerPub, issuerKey, _ := ed25519.GenerateKey(nil)
	now := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	gw, err := gateway.New(gateway.Config{
		Audience: "example-gateway",
		Issuers:  mandate.StaticKeys{"bank-app": issuerPub},
		Now:      func() time.Time { return now },
	}, mem.New(func() time.Time { return now }), pack)
	if err != nil {
		panic(err)
	}

	// 3. The user's mandate: pay.send, up to 5,000.00 EUR, for an hour.
	// The front door holds it; the agent never sees it.
	token, err := mandate.Issue(mandate.Mandate{
		ID: "m-1", Audience: "example-gateway", Owner: "emma", Scope: []intent.Action{"pay.send"},
		Budget: intent.Money{Currency: "EUR", Amount: 500000}, Mode: mandate.ModeKnownCounterparties,
		NotBefore: now, Expiry: now.Add(time.Hour),
	}, "bank-app", issuerKey)
	if err != nil {
		panic(err)
	}

	// 4. The agent proposes; the gateway decides.
	for _, proposal := range []string{
		`{"action":"pay.send","args":{"recipient":"GB29NWBK60161331926819","amount":"120.00"}}`,  // a payee on file
		`{"action":"pay.send","args":{"recipient":"LT121000011101001000","amount":"120.00"}}`,    // an IBAN read in an email
		`{"action":"pay.send","args":{"recipient":"GB29NWBK60161331926819","amount":"2500.00"}}`, // above 1,000.00
	} {
		d, err := gw.Decide(context.Background(), gateway.Request{Mandate: token, Proposal: []byte(proposal)})
		if err != nil {
			panic(err) // the receipt could not be stored
		}
		if d.Refusal != nil {
			fmt.Println(d.Verdict, d.Refusal.Code)
			continue
		}
		fmt.Println(d.Verdict, d.Output)
	}
	// Output:
	// allow sent EUR 120.00 to GB29NWBK60161331926819
	// deny resolve.no_trusted_source
	// step_up approval.required
}
