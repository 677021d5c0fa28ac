// Package gatewaytest is the "pay" test pack, the one pack every test of
// the pipeline shares (core/gateway's, the stores' crash, multi-replica and
// benchmark tests, the approval page's end-to-end test): pay.send pays a
// recipient that resolves through the mandate's "payees" claim or the
// "beneficiaries" registry, reserves its amount against the mandate's
// budget, needs a person's confirmation above Options.ConfirmAbove and two
// people's above 10,000.00; pay.balance reads. Keys come from fixed seeds so
// that separate processes agree on them.
//
// It is for tests only. It imports core/ and the standard library; it must
// never import a store, a pack or a front door.
package gatewaytest

import (
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
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

// schemaHead is what the test packs' Cedar schemas share: entities and
// the types of the standard context.
const schemaHead = `
entity Owner;
entity Resource;
type Approval = { confirm: Bool, four_eyes: Bool };
type Mandate = { mode: String };
`

// Schema is the pack's Cedar schema.
const Schema = schemaHead + `action "pay.send" appliesTo {
  principal: Owner, resource: Resource,
  context: {
    args: { recipient: String, amount: Long, memo?: String },
    facts: { recipient_trusted?: Bool, paid_today: Long },
    approval: Approval, mandate: Mandate, amount: Long,
  },
};
action "pay.balance" appliesTo {
  principal: Owner, resource: Resource,
  context: { args: {}, facts: { paid_today: Long }, approval: Approval, mandate: Mandate, amount: Long },
};
`

// Policy is the pack's Cedar policy: a person confirms payments above
// confirmAbove (minor units), two people those above 10,000.00, and a
// recipient whose record says it is not trusted is refused.
func Policy(confirmAbove intent.Amount) string {
	return fmt.Sprintf(`
@id("read") @reason("reading moves no money")
permit (principal, action == Action::"pay.balance", resource);

@id("send") @reason("payments to resolved recipients")
permit (principal, action == Action::"pay.send", resource);

@id("untrusted-account") @reason("the recipient's bank account is not trusted")
forbid (principal, action == Action::"pay.send", resource)
when { context.facts has recipient_trusted && !context.facts.recipient_trusted };

@id("confirm-large") @approval("confirm") @reason("payments above %s need a person to confirm")
forbid (principal, action == Action::"pay.send", resource)
when { context.amount > %d } unless { context.approval.confirm };

@id("four-eyes-huge") @approval("four_eyes") @reason("payments above 10,000.00 need two people")
forbid (principal, action == Action::"pay.send", resource)
when { context.amount > 1000000 } unless { context.approval.four_eyes };
`, grouped(confirmAbove), confirmAbove)
}

// grouped formats minor units with two decimals and thousands separated by
// commas: 100000 is "1,000.00".
func grouped(a intent.Amount) string {
	s := intent.FormatAmount(a, 2)
	for i := len(s) - 6; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// Options configures Pack. The zero value of each field means the default
// stated on it.
type Options struct {
	// Executor carries out operations; nil means a Recorder.
	Executor gateway.Executor
	// Beneficiaries is the recipients' registry; nil means Recipients,
	// trusted, for every owner.
	Beneficiaries resolve.Registry
	// Context are the context providers; nil means one that says nothing
	// was paid today (fact paid_today = 0).
	Context []gateway.ContextProvider
	// ConfirmAbove is the amount, in minor units, above which a person
	// confirms; zero means 1,000.00.
	ConfirmAbove intent.Amount
	// Exclusive makes pay.send hold its recipient while it runs.
	Exclusive bool
}

// Normalize is the recipient's normalizer: spaces removed, upper case;
// characters outside ASCII are refused.
func Normalize(s string) (string, error) {
	if strings.ContainsFunc(s, func(r rune) bool { return r > 127 }) {
		return "", errors.New("non-ASCII characters are refused")
	}
	return strings.ToUpper(strings.ReplaceAll(s, " ", "")), nil
}

// Pack returns the pay pack.
func Pack(o Options) (gateway.Pack, error) {
	if o.Executor == nil {
		o.Executor = &Recorder{}
	}
	if o.Beneficiaries == nil {
		o.Beneficiaries = recipients()
	}
	if o.Context == nil {
		o.Context = []gateway.ContextProvider{gateway.ContextFunc(func(ctx context.Context, q gateway.FactQuery) (map[string]intent.Value, error) {
			return map[string]intent.Value{"paid_today": intent.Int(0)}, nil
		})}
	}
	if o.ConfirmAbove == 0 {
		o.ConfirmAbove = 1000_00
	}
	var exclusive []string
	if o.Exclusive {
		exclusive = []string{"recipient"}
	}
	send, err := contract.New(contract.Contract{Action: "pay.send", Budget: "amount", Resource: "recipient", Exclusive: exclusive, Params: []contract.Parameter{
		{Name: "recipient", Type: contract.String(64), Required: true, Critical: true, Normalizer: Normalize,
			Sources: []contract.Source{contract.FromMandate("payees"), contract.FromRegistry("beneficiaries")}},
		{Name: "amount", Type: contract.Amount(2), Required: true},
		{Name: "memo", Type: contract.String(140)},
	}})
	if err != nil {
		return gateway.Pack{}, err
	}
	balance, err := contract.New(contract.Contract{Action: "pay.balance", ReadOnly: true})
	if err != nil {
		return gateway.Pack{}, err
	}
	return gateway.Pack{
		Name:       "pay",
		Contracts:  []*contract.Contract{send, balance},
		Policies:   fstest.MapFS{"policy.cedar": {Data: []byte(Policy(o.ConfirmAbove))}, "schema.cedarschema": {Data: []byte(Schema)}},
		Registries: map[string]resolve.Registry{"beneficiaries": o.Beneficiaries},
		Context:    o.Context,
		Executor:   o.Executor,
	}, nil
}

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

// KeyPair returns the Ed25519 key pair derived from a seed of 32 bytes b:
// the same in every process. For tests only.
func KeyPair(b byte) (ed25519.PublicKey, ed25519.PrivateKey) {
	pub, priv, _ := ed25519.GenerateKey(seed(b))
	return pub, priv
}

// Keys returns the fixed issuer and approver key pairs.
func Keys() (issuerPub ed25519.PublicKey, issuer ed25519.PrivateKey, approverPub ed25519.PublicKey, approver ed25519.PrivateKey) {
	issuerPub, issuer = KeyPair(1)
	approverPub, approver = KeyPair(2)
	return
}

// CheckpointKey returns the fixed checkpoint signing key pair.
func CheckpointKey() (ed25519.PublicKey, ed25519.PrivateKey) { return KeyPair(3) }

func recipients() resolve.Registry {
	trusted := map[string]bool{}
	for _, r := range Recipients {
		trusted[r] = true
	}
	return resolve.RegistryFunc(func(ctx context.Context, owner intent.Owner, v string) (resolve.Record, error) {
		if !trusted[v] {
			return resolve.Record{}, resolve.ErrNoMatch
		}
		return resolve.Record{ID: "payee-" + v, Value: v, Attrs: map[string]intent.Value{"trusted": intent.Bool(true)}}, nil
	})
}

// Gateway returns a gateway over st with the pay pack executing through
// exec, persons confirming payments above 100.00 (the stores' tests).
func Gateway(st gateway.Store, exec gateway.Executor) (*gateway.Gateway, error) {
	p, err := Pack(Options{Executor: exec, ConfirmAbove: 100_00})
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
		return approval.Approval{}, fmt.Errorf("gatewaytest: decision has no operation")
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
