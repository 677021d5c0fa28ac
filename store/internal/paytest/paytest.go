// Package paytest is a minimal payment pack and gateway wiring shared by the
// stores' crash, multi-replica and benchmark tests: one action, pay.send,
// whose recipient resolves through a fixed registry, whose amount is
// reserved against the mandate's budget, and which needs a person's
// confirmation above 100.00. Keys come from fixed seeds so that separate
// processes agree on them.
//
// It is for tests only. It imports core/ and the standard library; it must
// never import a store, a pack or a front door.
package paytest

import (
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"fmt"
	"io"
	"os"
	"sync"
	"testing/fstest"
	"time"

	"github.com/intentplane/intentplane/core/approval"
	"github.com/intentplane/intentplane/core/contract"
	"github.com/intentplane/intentplane/core/gateway"
	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/mandate"
	"github.com/intentplane/intentplane/core/resolve"
)

const schema = `
entity Owner;
entity Resource;
type Approval = { confirm: Bool, four_eyes: Bool };
type Mandate = { mode: String };
action "pay.send" appliesTo {
  principal: Owner, resource: Resource,
  context: {
    args: { recipient: String, amount: Long, memo?: String },
    facts: { recipient_trusted?: Bool },
    approval: Approval, mandate: Mandate, amount: Long,
  },
};
`

const policyText = `
@id("send") @reason("payments to resolved recipients")
permit (principal, action == Action::"pay.send", resource);

@id("untrusted") @reason("the recipient is not trusted")
forbid (principal, action == Action::"pay.send", resource)
when { context.facts has recipient_trusted && !context.facts.recipient_trusted };

@id("confirm-large") @approval("confirm") @reason("payments above 100.00 need a person to confirm")
forbid (principal, action == Action::"pay.send", resource)
when { context.amount > 10000 } unless { context.approval.confirm };
`

// Audience is the gateway's name in the test mandates.
const Audience = "intentplane-storetest"

// Recipients are the trusted recipients of every owner.
var Recipients = []string{"GB29", "DE89", "FR14", "NL91", "BE68", "IT60", "ES91", "AT61"}

// Approver is the name of the one approver.
const Approver = "alice"

type seed byte

func (s seed) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(s)
	}
	return len(p), nil
}

func keyPair(b byte) (ed25519.PublicKey, ed25519.PrivateKey) {
	pub, priv, _ := ed25519.GenerateKey(seed(b))
	return pub, priv
}

// Keys returns the fixed issuer and approver key pairs.
func Keys() (issuerPub ed25519.PublicKey, issuer ed25519.PrivateKey, approverPub ed25519.PublicKey, approver ed25519.PrivateKey) {
	issuerPub, issuer = keyPair(1)
	approverPub, approver = keyPair(2)
	return
}

// CheckpointKey returns the fixed checkpoint signing key pair.
func CheckpointKey() (ed25519.PublicKey, ed25519.PrivateKey) { return keyPair(3) }

// Pack returns the pay pack with exec as its executor.
func Pack(exec gateway.Executor) (gateway.Pack, error) {
	trusted := map[string]bool{}
	for _, r := range Recipients {
		trusted[r] = true
	}
	payees := resolve.RegistryFunc(func(ctx context.Context, owner intent.Owner, v string) (resolve.Record, error) {
		if !trusted[v] {
			return resolve.Record{}, resolve.ErrNoMatch
		}
		return resolve.Record{ID: "payee-" + v, Value: v, Attrs: map[string]intent.Value{"trusted": intent.Bool(true)}}, nil
	})
	send, err := contract.New(contract.Contract{Action: "pay.send", Budget: "amount", Resource: "recipient", Params: []contract.Parameter{
		{Name: "recipient", Type: contract.String(64), Required: true, Critical: true, Sources: []contract.Source{contract.FromRegistry("payees")}},
		{Name: "amount", Type: contract.Amount(2), Required: true},
		{Name: "memo", Type: contract.String(140)},
	}})
	if err != nil {
		return gateway.Pack{}, err
	}
	return gateway.Pack{
		Name:       "pay",
		Contracts:  []*contract.Contract{send},
		Policies:   fstest.MapFS{"policy.cedar": {Data: []byte(policyText)}, "schema.cedarschema": {Data: []byte(schema)}},
		Registries: map[string]resolve.Registry{"payees": payees},
		Executor:   exec,
	}, nil
}

// Gateway returns a gateway over st with the pay pack executing through
// exec.
func Gateway(st gateway.Store, exec gateway.Executor) (*gateway.Gateway, error) {
	p, err := Pack(exec)
	if err != nil {
		return nil, err
	}
	issuerPub, _, approverPub, _ := Keys()
	return gateway.New(gateway.Config{
		Audience:  Audience,
		Issuers:   mandate.StaticKeys{"issuer": issuerPub},
		Approvers: approval.StaticKeys{Approver: approverPub},
	}, st, p)
}

// Mandate returns a mandate token for owner, with id and a budget in EUR
// minor units, valid from an hour before now for a day.
func Mandate(id string, owner intent.Owner, budget intent.Amount, now time.Time) (string, error) {
	_, issuer, _, _ := Keys()
	return mandate.Issue(mandate.Mandate{
		ID: id, Issuer: "issuer", Audience: Audience, Owner: owner,
		Scope: []intent.Action{"pay.send"}, Budget: intent.Money{Currency: "EUR", Amount: budget},
		Mode: mandate.ModeKnownCounterparties, NotBefore: now.Add(-time.Hour), Expiry: now.Add(24 * time.Hour),
	}, "issuer", issuer)
}

// Send returns a pay.send proposal; amount is a decimal with two places.
func Send(recipient, amount, memo string) []byte {
	return fmt.Appendf(nil, `{"action":"pay.send","args":{"recipient":%q,"amount":%q,"memo":%q}}`, recipient, amount, memo)
}

// Approve returns the approver's approval of the operation a step-up
// decision named. Its ID is derived from the operation hash and tag, so
// that callers in separate processes make the same approval.
func Approve(d gateway.Decision, tag string, now time.Time) (approval.Approval, error) {
	if d.Operation == nil {
		return approval.Approval{}, fmt.Errorf("paytest: decision has no operation")
	}
	_, _, _, priv := Keys()
	id := sha256.Sum256([]byte(d.OperationHash.String() + "/" + tag))
	return approval.Sign(approval.Approval{
		ID: fmt.Sprintf("%x", id[:16]), Operation: d.OperationHash, MandateID: d.Operation.MandateID,
		Approver: Approver, IssuedAt: now.Add(-time.Minute), ExpiresAt: now.Add(time.Hour),
	}, priv)
}

// Execution is one operation the Recorder executed.
type Execution struct {
	Hash   intent.OperationHash
	Amount intent.Amount
}

// Recorder is an executor that records what it executes and, if Out is set,
// writes one line "exec HASH AMOUNT\n" per execution to it before
// returning (and syncs it, if it is an *os.File), like an external system
// that has done the work. It is safe for concurrent use.
type Recorder struct {
	Out io.Writer

	mu   sync.Mutex
	done []Execution
}

// Execute implements gateway.Executor.
func (r *Recorder) Execute(ctx context.Context, op intent.Operation, h intent.OperationHash) (gateway.Result, error) {
	amount := intent.Amount(op.Args["amount"].Int)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.done = append(r.done, Execution{Hash: h, Amount: amount})
	if r.Out != nil {
		if _, err := fmt.Fprintf(r.Out, "exec %s %d\n", h, amount); err != nil {
			return gateway.Result{}, err
		}
		if f, ok := r.Out.(*os.File); ok {
			if err := f.Sync(); err != nil {
				return gateway.Result{}, err
			}
		}
	}
	return gateway.Result{Output: `{"ok":true}`}, nil
}

// Executions returns what was executed so far.
func (r *Recorder) Executions() []Execution {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Execution(nil), r.done...)
}
