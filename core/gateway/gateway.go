package gateway

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/intentplane/intentplane/core/approval"
	"github.com/intentplane/intentplane/core/contract"
	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/mandate"
	"github.com/intentplane/intentplane/core/policy"
	"github.com/intentplane/intentplane/core/receipt"
	"github.com/intentplane/intentplane/core/resolve"
	"github.com/intentplane/intentplane/core/state"
)

// Config configures a Gateway. The zero value of each optional field means
// the default stated on it.
type Config struct {
	// Audience is this gateway's name; a mandate must be issued for it.
	// Required.
	Audience string
	// Issuers gives the public keys of mandate issuers. Required.
	Issuers mandate.Keys
	// Revoker is asked whether a mandate was revoked, on every decision;
	// nil means mandates are never revoked.
	Revoker mandate.Revoker
	// Approvers gives the approvers' public keys; nil means no approval
	// can ever be valid, so every step-up ends in a refusal.
	Approvers approval.Keys
	// ApproverScope says whether approver may approve operations of owner
	// (the people of one company approve that company's payments); nil
	// means every configured approver may approve for every owner.
	ApproverScope func(approver string, owner intent.Owner) bool
	// Now returns the current time; nil means time.Now.
	Now func() time.Time
	// Sleep waits for d, between retries of a receipt's append; nil means
	// time.Sleep. Tests give a fake clock's.
	Sleep func(d time.Duration)
	// Logger receives one debug line per decision; nil means discard.
	Logger *slog.Logger
	// Limits bound proposals; the zero value means contract's defaults.
	Limits contract.Limits
	// LockTTL is how long a record lock (see contract.Contract.Exclusive)
	// holds if the gateway holding it dies before giving it back; zero
	// means 10 minutes. It must exceed the longest execution.
	LockTTL time.Duration
	// Rand is the source of the random part of lock-holder ids, read once
	// by New; nil means crypto/rand.
	Rand io.Reader
}

// Request is one decision to make.
type Request struct {
	// Mandate is the session's signed mandate token, held by the front
	// door, never by the agent.
	Mandate string
	// Proposal is the agent's proposal, verbatim.
	Proposal []byte
	// Approvals were obtained on a channel the agent cannot drive, for the
	// operation a previous StepUp named.
	Approvals []approval.Approval
}

// Decision is the gateway's answer to a Request.
type Decision struct {
	Verdict intent.Verdict
	// Refusal explains a Deny or a StepUp to the agent; nil on Allow.
	Refusal *intent.Refusal
	// Level is the approval level a StepUp requires.
	Level intent.Level
	// Operation is the resolved operation, when it could be built.
	Operation *intent.Operation
	// OperationHash is its hash (zero if Operation is nil); approvals are
	// signed over it.
	OperationHash intent.OperationHash
	// Resolved lists each critical value with its provenance.
	Resolved []intent.Resolved
	// Facts are the facts the policy saw.
	Facts map[string]intent.Value
	// Policies are the determining policies, sorted.
	Policies []string
	// Currency is the ISO 4217 code of the operation's amount (the one
	// reserved against the budget): the contract's BudgetCurrency fact,
	// else the currency of the mandate's main budget; "" when the action
	// moves no money or the decision ended before the context step. A
	// front door shows amounts in it (approval.Request.Currency).
	Currency string
	// Executed reports whether the operation was carried out.
	Executed bool
	// Output is the executor's output on Allow.
	Output string
	// Receipt is the receipt appended for this decision. When the store
	// is a state.DeferredLog and the decision changed nothing (see
	// Decide), the receipt is stored after Decide returns and Seq, Prev
	// and Hash are zero here.
	Receipt receipt.Receipt
}

// Gateway decides proposals. It is safe for concurrent use.
type Gateway struct {
	cfg       Config
	store     Store
	contracts map[intent.Action]*route
	now       func() time.Time
	log       *slog.Logger
	verifier  mandate.Verifier
	holders   holders
	sleep     func(time.Duration)
	lockTTL   time.Duration

	// sensitive: some contract has a Sensitive parameter.
	sensitive bool

	mu       sync.Mutex
	mandates map[string]*mandate.Mandate // verified tokens
}

type route struct {
	contract *contract.Contract
	pack     *Pack
	engine   *policy.Engine
	guards   map[string]bool // ids of the engine's approval guards
	resolver resolve.Resolver
}

// maxCachedMandates bounds the cache of verified mandate tokens.
const maxCachedMandates = 4096

// New builds a gateway over st with the given packs. It loads and validates
// every pack's policy (a policy that does not parse or validate is an error
// naming file and line) and refuses duplicate pack names or actions, an
// action outside its pack's prefix, a pack without executor, and a Config
// without Audience or Issuers.
func New(cfg Config, st Store, packs ...Pack) (*Gateway, error) {
	if cfg.Audience == "" || cfg.Issuers == nil {
		return nil, errors.New("gateway: config needs Audience and Issuers")
	}
	if st == nil {
		return nil, errors.New("gateway: a store is required")
	}
	g := &Gateway{
		cfg:       cfg,
		store:     st,
		contracts: map[intent.Action]*route{},
		now:       cfg.Now,
		log:       cfg.Logger,
		mandates:  map[string]*mandate.Mandate{},
	}
	if g.now == nil {
		g.now = time.Now
	}
	if g.log == nil {
		g.log = slog.New(slog.DiscardHandler)
	}
	g.lockTTL, g.sleep = cfg.LockTTL, cfg.Sleep
	if g.sleep == nil {
		g.sleep = time.Sleep
	}
	random := cfg.Rand
	if random == nil {
		random = rand.Reader
	}
	if _, err := io.ReadFull(random, g.holders.prefix[:]); err != nil {
		return nil, fmt.Errorf("gateway: reading the random part of lock-holder ids: %w", err)
	}
	if g.lockTTL <= 0 {
		g.lockTTL = 10 * time.Minute
	}
	g.verifier = mandate.Verifier{Keys: cfg.Issuers, Audience: cfg.Audience, Revoker: cfg.Revoker, Now: g.now}
	names := map[string]bool{}
	for i := range packs {
		p := &packs[i]
		if p.Name == "" || names[p.Name] {
			return nil, fmt.Errorf("gateway: pack name %q is empty or used twice", p.Name)
		}
		names[p.Name] = true
		if err := g.addPack(p); err != nil {
			return nil, err
		}
	}
	return g, nil
}

// addPack loads p's policy and routes its actions to it.
func (g *Gateway) addPack(p *Pack) error {
	if p.Executor == nil || p.Policies == nil {
		return fmt.Errorf("gateway: pack %s needs an executor and policies", p.Name)
	}
	eng, err := policy.Load(p.Policies)
	if err != nil {
		return fmt.Errorf("gateway: pack %s: %w", p.Name, err)
	}
	guards := map[string]bool{}
	for _, pi := range eng.Policies() {
		guards[pi.ID] = pi.Guard()
	}
	for _, c := range p.Contracts {
		if c == nil || !strings.HasPrefix(string(c.Action), p.Name+".") {
			return fmt.Errorf("gateway: pack %s: every action must start with %q", p.Name, p.Name+".")
		}
		if _, dup := g.contracts[c.Action]; dup {
			return fmt.Errorf("gateway: action %s declared twice", c.Action)
		}
		for _, prm := range c.Critical() {
			for _, s := range prm.Sources {
				if s.Kind == contract.SourceRegistry && p.Registries[s.Name] == nil {
					return fmt.Errorf("gateway: pack %s: %s argument %q uses %s, which the pack does not provide", p.Name, c.Action, prm.Name, s)
				}
			}
		}
		g.sensitive = g.sensitive || c.HasSensitive()
		g.contracts[c.Action] = &route{contract: c, pack: p, engine: eng, guards: guards, resolver: resolve.Resolver{Registries: p.Registries}}
	}
	return nil
}

// Contract returns the contract of action, for front doors that describe
// actions to agents.
func (g *Gateway) Contract(action intent.Action) (*contract.Contract, bool) {
	r, ok := g.contracts[action]
	if !ok {
		return nil, false
	}
	return r.contract, true
}

// Actions returns every action the gateway knows, sorted.
func (g *Gateway) Actions() []intent.Action {
	out := make([]intent.Action, 0, len(g.contracts))
	for a := range g.contracts {
		out = append(out, a)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// Decide runs the pipeline on one proposal and, when allowed, executes it
// exactly once. Every outcome, allowed or not, appends a receipt. Decide
// returns an error only when that receipt could not be stored (the receipt
// of an operation that executed, or may have, is retried for about five
// seconds first): the decision is then reported as it was taken (an
// executed operation stays executed), and the caller must alert an
// operator.
//
// When the store is a state.DeferredLog, the receipt of a decision that
// changed nothing (a read-only action, or any decision that executed
// nothing) is appended deferred: Decide returns without waiting until it
// is durable. Whatever such a decision wrote before (a reservation given
// back, an approval consumed) was durable when written, and the receipt of
// an operation that executed, or may have, is durable before Decide
// returns.
func (g *Gateway) Decide(ctx context.Context, req Request) (Decision, error) {
	st := &decision{req: req, now: g.now().UTC(), exec: executionState{result: receipt.ResultNotExecuted}}
	d := &st.out
	d.Verdict = intent.Allow
	if r := g.runGuarded(ctx, st); r != nil {
		d.Verdict, d.Refusal = intent.Deny, r
		if r.Code == intent.CodeApprovalRequired {
			d.Verdict = intent.StepUp
		}
	}
	return g.receipt(ctx, st)
}

// 10. Receipt: every decision appends one to its owner's chain.
func (g *Gateway) receipt(ctx context.Context, st *decision) (Decision, error) {
	d := &st.out
	r := g.receiptOf(st)
	if dl, ok := g.store.(state.DeferredLog); ok && st.changedNothing() {
		if err := dl.AppendDeferred(ctx, r); err == nil {
			d.Receipt = r
			return *d, nil
		}
		// Refused outright (a closed store): Append says why, or stores it.
	}
	stored, err := g.store.Append(ctx, r)
	if err != nil && r.Result != receipt.ResultNotExecuted {
		// Something may have happened in the world: try harder to record
		// it, even if the caller gave up, before reporting the loss.
		stored, err = g.appendRetrying(context.WithoutCancel(ctx), r)
	}
	if g.log.Enabled(ctx, slog.LevelDebug) { // spares boxing the attributes
		g.log.Debug("decision", "action", st.proposal.Action, "verdict", d.Verdict.String(), "code", r.Code, "owner", r.Owner)
	}
	if err != nil {
		d.Receipt = r
		g.log.Error("receipt not stored", "owner", r.Owner, "operation", r.Operation, "result", r.Result, "err", err)
		return *d, fmt.Errorf("gateway: receipt not stored: %w", err)
	}
	d.Receipt = stored
	return *d, nil
}

// changedNothing reports whether the decision changed nothing that its
// receipt must be durable for: it executed nothing, or only a read-only
// action.
func (st *decision) changedNothing() bool {
	switch st.exec.result {
	case receipt.ResultNotExecuted:
		return true
	case receipt.ResultExecuted:
		return st.route != nil && st.route.contract.ReadOnly
	}
	return false
}

// receiptOf is the receipt of the decision, sensitive values replaced by
// their digests.
func (g *Gateway) receiptOf(st *decision) receipt.Receipt {
	d := &st.out
	args, resolved := st.args, d.Resolved
	sensitive := g.sensitiveOf(st)
	if st.route != nil && sensitive != nil {
		args, resolved = receipt.RedactArgs(args, sensitive), receipt.RedactResolved(resolved, sensitive)
	}
	var p *intent.Proposal
	if st.decoded {
		p = &st.proposal
	}
	r := receipt.Receipt{
		Owner:     st.owner(),
		Time:      st.now,
		MandateID: st.mandateID(),
		Action:    st.proposal.Action,
		Sent:      receipt.SentFor(st.req.Proposal, p, sensitive),
		Args:      args,
		Resolved:  resolved,
		Facts:     d.Facts,
		Verdict:   d.Verdict,
		Policies:  d.Policies,
		Approvals: st.approved.evidence,
		Result:    st.exec.result,
		Output:    st.exec.summary,
		Operation: st.op.hash,
	}
	if d.Refusal != nil {
		r.Code, r.Message = d.Refusal.Code, d.Refusal.Message
	}
	return r
}

// sensitiveOf says which arguments of st's proposal are secret, for its
// receipt: its action's sensitive parameters; every argument when the
// action has no contract here (misspelled, or the proposal did not decode)
// while some contract of the gateway has a secret parameter, since the
// proposal may then carry a secret under any name, or in JSON that does
// not parse; nil when nothing is secret.
func (g *Gateway) sensitiveOf(st *decision) receipt.Sensitive {
	rt := st.route
	if rt == nil && st.decoded {
		rt = g.contracts[st.proposal.Action]
	}
	switch {
	case rt != nil && rt.contract.HasSensitive():
		c := rt.contract
		return func(name string) bool { prm, ok := c.Param(name); return ok && prm.Sensitive }
	case rt == nil && g.sensitive:
		return func(string) bool { return true }
	}
	return nil
}

// appendRetrying retries Append with growing waits, about five seconds in
// all, for the receipt of an operation that executed. A store that lost the
// answer of a commit that did happen may then hold the receipt twice, which
// is better than not at all.
func (g *Gateway) appendRetrying(ctx context.Context, r receipt.Receipt) (receipt.Receipt, error) {
	var err error
	for _, wait := range []time.Duration{50 * time.Millisecond, 200 * time.Millisecond, time.Second, 4 * time.Second} {
		g.sleep(wait)
		var stored receipt.Receipt
		if stored, err = g.store.Append(ctx, r); err == nil {
			return stored, nil
		}
	}
	return receipt.Receipt{}, err
}

// runGuarded runs the pipeline and turns a panic in any of its parts (a
// pack's registry, context provider or executor) into a refusal, so that
// one bad proposal cannot take the gateway down. A panic inside the
// executor leaves the outcome unknown: it is reported as a failed
// execution that may have taken effect, and never retried.
func (g *Gateway) runGuarded(ctx context.Context, st *decision) (r *intent.Refusal) {
	defer func() {
		if p := recover(); p != nil {
			g.log.Error("panic in the decision pipeline", "action", st.proposal.Action, "panic", fmt.Sprint(p))
			st.out.Executed, st.out.Output = false, ""
			if st.exec.running {
				st.exec.result = receipt.ResultFailed
				r = refusals.ExecutionFailed()
				return
			}
			r = refusals.Internal()
		}
	}()
	return g.run(ctx, st)
}

func (s *decision) owner() intent.Owner {
	if s.mandate == nil {
		return ""
	}
	return s.mandate.Owner
}

func (s *decision) mandateID() string {
	if s.mandate == nil {
		return ""
	}
	return s.mandate.ID
}

// verifyMandate verifies token, caching verified tokens; the time window
// and revocation are checked on every call.
func (g *Gateway) verifyMandate(ctx context.Context, token string) (*mandate.Mandate, error) {
	g.mu.Lock()
	m := g.mandates[token]
	g.mu.Unlock()
	if m == nil {
		v, err := g.verifier.Verify(ctx, token)
		if err != nil {
			return nil, err
		}
		g.mu.Lock()
		if len(g.mandates) < maxCachedMandates {
			g.mandates[token] = v
		}
		g.mu.Unlock()
		return v, nil
	}
	return m, g.verifier.Check(ctx, m)
}
