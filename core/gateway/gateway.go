package gateway

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

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
	// Logger receives one debug line per decision; nil means discard.
	Logger *slog.Logger
	// Limits bound proposals; the zero value means contract's defaults.
	Limits contract.Limits
	// LockTTL is how long a record lock (see contract.Contract.Exclusive)
	// holds if the gateway holding it dies before giving it back; zero
	// means 10 minutes. It must exceed the longest execution.
	LockTTL time.Duration
	// Rand is the source of random lock-holder ids; nil means crypto/rand.
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
	// Executed reports whether the operation was carried out.
	Executed bool
	// Output is the executor's output on Allow.
	Output string
	// Receipt is the receipt appended for this decision.
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
	rand      io.Reader
	lockTTL   time.Duration

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
	g.rand, g.lockTTL = cfg.Rand, cfg.LockTTL
	if g.rand == nil {
		g.rand = rand.Reader
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
		if p.Executor == nil || p.Policies == nil {
			return nil, fmt.Errorf("gateway: pack %s needs an executor and policies", p.Name)
		}
		eng, err := policy.Load(p.Policies)
		if err != nil {
			return nil, fmt.Errorf("gateway: pack %s: %w", p.Name, err)
		}
		guards := map[string]bool{}
		for _, pi := range eng.Policies() {
			guards[pi.ID] = pi.Guard()
		}
		for _, c := range p.Contracts {
			if c == nil || !strings.HasPrefix(string(c.Action), p.Name+".") {
				return nil, fmt.Errorf("gateway: pack %s: every action must start with %q", p.Name, p.Name+".")
			}
			if _, dup := g.contracts[c.Action]; dup {
				return nil, fmt.Errorf("gateway: action %s declared twice", c.Action)
			}
			for _, prm := range c.Critical() {
				for _, s := range prm.Sources {
					if s.Kind == contract.SourceRegistry && p.Registries[s.Name] == nil {
						return nil, fmt.Errorf("gateway: pack %s: %s argument %q uses %s, which the pack does not provide", p.Name, c.Action, prm.Name, s)
					}
				}
			}
			g.contracts[c.Action] = &route{contract: c, pack: p, engine: eng, guards: guards, resolver: resolve.Resolver{Registries: p.Registries}}
		}
	}
	return g, nil
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
func (g *Gateway) Decide(ctx context.Context, req Request) (Decision, error) {
	now := g.now().UTC()
	var d Decision
	st := &decision{req: req, now: now}
	g.runGuarded(ctx, st, &d)

	args, resolved := st.args, d.Resolved
	if st.contract != nil && st.contract.HasSensitive() {
		args, resolved = redactArgs(st.contract, args), redactResolved(st.contract, resolved)
	}
	r := receipt.Receipt{
		Owner:     st.owner(),
		Time:      now,
		MandateID: st.mandateID(),
		Action:    st.proposal.Action,
		Sent:      sentForReceipt(req.Proposal, st),
		Args:      args,
		Resolved:  resolved,
		Facts:     d.Facts,
		Verdict:   d.Verdict,
		Policies:  d.Policies,
		Approvals: st.evidence,
		Result:    "not_executed",
		Output:    st.summary,
	}
	if d.Refusal != nil {
		r.Code, r.Message = d.Refusal.Code, d.Refusal.Message
	}
	r.Operation = st.operation
	switch {
	case d.Executed:
		r.Result = "executed"
	case st.execFailed:
		r.Result = "failed"
	}
	stored, err := g.store.Append(ctx, r)
	if err != nil && (d.Executed || st.execFailed) {
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
		return d, fmt.Errorf("gateway: receipt not stored: %w", err)
	}
	d.Receipt = stored
	return d, nil
}

// appendRetrying retries Append with growing waits, about five seconds in
// all, for the receipt of an operation that executed. A store that lost the
// answer of a commit that did happen may then hold the receipt twice, which
// is better than not at all.
func (g *Gateway) appendRetrying(ctx context.Context, r receipt.Receipt) (receipt.Receipt, error) {
	var err error
	for _, wait := range []time.Duration{50 * time.Millisecond, 200 * time.Millisecond, time.Second, 4 * time.Second} {
		time.Sleep(wait)
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
func (g *Gateway) runGuarded(ctx context.Context, st *decision, d *Decision) {
	defer func() {
		if p := recover(); p != nil {
			g.log.Error("panic in the decision pipeline", "action", st.proposal.Action, "panic", fmt.Sprint(p))
			d.Executed, d.Output = false, ""
			if st.executing {
				st.execFailed = true
				refuse(d, intent.CodeExecutionFailed, "The operation was allowed but its execution failed; it may or may not have taken effect and will not be retried automatically. Tell the user to check.")
				return
			}
			refuse(d, intent.CodeUnavailable, "The gateway hit an internal error while checking this proposal, so nothing was done.")
		}
	}()
	g.run(ctx, st, d)
}

// validText reports whether every string read from the systems of record
// (facts, resolved values and their provenance) is valid UTF-8: the
// receipt, which is written after execution, must be able to record them.
func validText(facts map[string]intent.Value, res resolve.Output) bool {
	for k, v := range facts {
		if !utf8.ValidString(k) || v.Kind == intent.KindString && !utf8.ValidString(v.Str) {
			return false
		}
	}
	for _, r := range res.Resolved {
		p := r.Provenance
		if !utf8.ValidString(r.Value) || !utf8.ValidString(p.Source) || !utf8.ValidString(p.RecordID) || !utf8.ValidString(p.Version) {
			return false
		}
	}
	return true
}

// maxSentInReceipt bounds what a receipt keeps of a proposal: an agent must
// not be able to make a receipt too large to verify.
const maxSentInReceipt = 4096

// sentForReceipt is what the receipt keeps of what the agent sent: the
// proposal verbatim (receipt.SentText), except that a sensitive argument's
// value is replaced by its digest (the proposal is then re-encoded with
// sorted keys), and a proposal above 4 KiB is cut, followed by its size and
// digest.
func sentForReceipt(body []byte, st *decision) string {
	if st.contract != nil && st.contract.HasSensitive() {
		return redactedProposal(st.contract, st.proposal)
	}
	if len(body) <= maxSentInReceipt {
		return receipt.SentText(body)
	}
	cut := maxSentInReceipt
	for cut > 0 && !utf8.RuneStart(body[cut]) {
		cut--
	}
	sum := sha256.Sum256(body)
	return receipt.SentText(body[:cut]) + fmt.Sprintf(" …[cut: %d bytes in all, sha256:%x]", len(body), sum)
}

func digest(s string) string {
	sum := sha256.Sum256([]byte(s))
	return fmt.Sprintf("sha256:%x", sum)
}

// redactedProposal re-encodes p with each sensitive argument's raw JSON
// replaced by the digest of those bytes.
func redactedProposal(c *contract.Contract, p intent.Proposal) string {
	names := make([]string, 0, len(p.Args))
	for k := range p.Args {
		names = append(names, k)
	}
	sort.Strings(names)
	var b strings.Builder
	action, _ := json.Marshal(string(p.Action))
	b.WriteString(`{"action":`)
	b.Write(action)
	b.WriteString(`,"args":{`)
	for i, k := range names {
		if i > 0 {
			b.WriteByte(',')
		}
		key, _ := json.Marshal(k)
		b.Write(key)
		b.WriteByte(':')
		if prm, ok := c.Param(k); ok && prm.Sensitive {
			b.WriteString(`"` + digest(string(p.Args[k])) + `"`)
			continue
		}
		raw := p.Args[k]
		if len(raw) > maxSentInReceipt {
			b.WriteString(`"` + digest(string(raw)) + `"`)
			continue
		}
		b.Write(raw)
	}
	b.WriteString("}}")
	return b.String()
}

func redactArgs(c *contract.Contract, args intent.Args) intent.Args {
	out := args.Clone()
	for k, v := range args {
		if prm, ok := c.Param(k); ok && prm.Sensitive {
			out[k] = intent.Str(digest(v.String()))
		}
	}
	return out
}

func redactResolved(c *contract.Contract, rs []intent.Resolved) []intent.Resolved {
	out := make([]intent.Resolved, len(rs))
	for i, r := range rs {
		if prm, ok := c.Param(r.Param); ok && prm.Sensitive {
			r.Sent, r.Value = digest(r.Sent), digest(r.Value)
		}
		out[i] = r
	}
	return out
}

// decision carries one decision through the pipeline.
type decision struct {
	req        Request
	contract   *contract.Contract
	executing  bool
	now        time.Time
	proposal   intent.Proposal
	mandate    *mandate.Mandate
	args       intent.Args
	evidence   []receipt.Evidence
	execFailed bool
	summary    string // what the receipt keeps of the output
	operation  string // the operation hash in hex, once built
	opKey      string // state.NonceKey of the operation
	bg         context.Context
}

// detached returns ctx without its cancellation, for the store calls that
// must happen even if the caller gave up; built once per decision. ctx must
// be the decision's context.
func (s *decision) detached(ctx context.Context) context.Context {
	if s.bg == nil {
		s.bg = context.WithoutCancel(ctx)
	}
	return s.bg
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

func refuse(d *Decision, code intent.Code, format string, a ...any) {
	d.Verdict = intent.Deny
	d.Refusal = &intent.Refusal{Code: code, Message: fmt.Sprintf(format, a...)}
}

func (g *Gateway) run(ctx context.Context, st *decision, d *Decision) {
	// 1. Decode.
	p, err := contract.DecodeProposal(st.req.Proposal, g.cfg.Limits)
	if err != nil {
		// The receipt still belongs to the mandate's owner when the
		// mandate is genuine, so an owner's chain shows every attempt.
		if m, merr := g.mandate(ctx, st.req.Mandate, st.now); merr == nil {
			st.mandate = m
		}
		reason := err.Error()
		if me := (*contract.MalformedError)(nil); errors.As(err, &me) {
			reason = me.Reason
		}
		refuse(d, intent.CodeMalformed, "The proposal was refused: %s. Send a JSON object with only \"action\" and \"args\".", reason)
		return
	}
	st.proposal = p

	// 2. Mandate and scope.
	m, err := g.mandate(ctx, st.req.Mandate, st.now)
	if err != nil {
		code := intent.CodeMandateInvalid
		var me *mandate.Error
		if errors.As(err, &me) {
			code = me.Code()
		}
		refuse(d, code, "The user's mandate does not allow any action: %v. Nothing was done; the user must issue a new mandate.", err)
		return
	}
	st.mandate = m
	if !m.Allows(p.Action) {
		refuse(d, intent.CodeOutOfScope, "The action %q is not part of what the user authorised in this session (mandate %s). Nothing was done. Do not try to reach the same result with another action; tell the user what you wanted to do.", truncate(string(p.Action)), m.ID)
		return
	}

	// 3. Contract.
	rt, ok := g.contracts[p.Action]
	if !ok {
		refuse(d, intent.CodeUnknownAction, "The action %q does not exist on this gateway. Nothing was done.", truncate(string(p.Action)))
		return
	}
	c := rt.contract
	st.contract = c
	args, err := c.Decode(p.Args)
	if err != nil {
		refuse(d, intent.CodeBadArgument, "The proposal was refused: %v. Nothing was done.", err)
		return
	}
	st.args = args

	// 4. Resolve.
	res, err := rt.resolver.Resolve(ctx, c, resolve.Input{
		Owner: m.Owner, MandateID: m.ID, Claims: m.Claims,
		Strict: m.Mode == mandate.ModeStrict, Args: args,
	})
	if err != nil {
		g.refuseResolution(d, c, err)
		return
	}
	st.args = res.Args
	d.Resolved = res.Resolved

	// Records that one operation at a time may act on are held from before
	// their facts are read until after execution, so that two concurrent
	// payments of one bill cannot both see it unpaid.
	if len(c.Exclusive) > 0 {
		unlock, err := g.lock(ctx, st, m.Owner, c, res.Args)
		if err != nil {
			if errors.Is(err, state.ErrHeld) {
				refuse(d, intent.CodeInFlight, "Another operation on the same %s is under way, so this one was refused. Nothing was done. Check the result of the first one before trying again.", strings.Join(c.Exclusive, " and "))
			} else {
				refuse(d, intent.CodeUnavailable, "The gateway's state store is unavailable, so nothing was done. Try again later.")
			}
			return
		}
		defer unlock()
	}

	// 5. Context.
	facts, err := g.facts(ctx, rt, m, c.Action, res)
	if err != nil {
		refuse(d, intent.CodeContextFailed, "The systems of record needed to check this operation could not be read, so nothing was done. Try again later.")
		return
	}
	if !validText(facts, res) {
		st.args, d.Resolved = args, nil // keep only what the receipt can record
		refuse(d, intent.CodeContextFailed, "A system of record returned data that cannot be recorded (text that is not valid UTF-8), so nothing was done. Tell the user; the record must be corrected.")
		return
	}
	d.Facts = facts

	op := intent.Operation{Action: c.Action, Args: res.Args, MandateID: m.ID, Owner: m.Owner}
	hash, err := op.Hash()
	if err != nil {
		refuse(d, intent.CodeBadArgument, "The proposal was refused: an argument cannot be encoded. Nothing was done.")
		return
	}
	d.Operation, d.OperationHash = &op, hash
	st.opKey = state.NonceKey(hash)
	st.operation = strings.TrimPrefix(st.opKey, "op:")

	// Approvals presented with the request: checked before policy so that
	// the policy sees what they grant; consumed only if it allows.
	var grant approval.Grant
	if len(st.req.Approvals) > 0 {
		if g.cfg.Approvers == nil {
			refuse(d, intent.CodeApprovalInvalid, "Approvals are not configured on this gateway. Nothing was done.")
			return
		}
		grant, err = approval.Evaluate(g.cfg.Approvers, hash, m.ID, st.now, st.req.Approvals)
		if err != nil {
			refuse(d, intent.CodeApprovalInvalid, "The approval presented is not valid for this exact operation (%v). Nothing was done. Any change to the operation needs a new approval.", err)
			return
		}
		for _, a := range grant.Approvals {
			if g.cfg.ApproverScope != nil && !g.cfg.ApproverScope(a.Approver, m.Owner) {
				refuse(d, intent.CodeApprovalInvalid, "The approval presented was given by someone who may not approve for this user. Nothing was done.")
				st.evidence = nil
				return
			}
		}
		for _, a := range grant.Approvals {
			st.evidence = append(st.evidence, receipt.Evidence{ID: a.ID, Approver: a.Approver, Level: string(grant.Level()), IssuedAt: a.IssuedAt, ExpiresAt: a.ExpiresAt})
		}
	}

	// 6. Policy.
	var amount intent.Amount
	if c.Budget != "" {
		amount = intent.Amount(res.Args[c.Budget].Int)
	}
	resource := ""
	if c.Resource != "" {
		resource = res.Args[c.Resource].String()
	}
	pr := rt.engine.Evaluate(policy.Request{
		Principal: m.Owner,
		Action:    c.Action,
		Resource:  resource,
		Standard: &policy.Standard{
			Args:     res.Args,
			Facts:    facts,
			Confirm:  grant.Confirm || grant.FourEyes,
			FourEyes: grant.FourEyes,
			Mode:     string(m.Mode),
			Amount:   amount,
		},
	})
	d.Policies = pr.Policies
	switch pr.Verdict {
	case intent.Allow:
	case intent.StepUp:
		if err := g.budgetFits(ctx, m, amount); err != nil {
			g.refuseBudget(ctx, d, m, amount, err)
			return
		}
		d.Verdict = intent.StepUp
		d.Level = pr.Level
		d.Refusal = &intent.Refusal{Code: intent.CodeApprovalRequired, Message: fmt.Sprintf(
			"This operation needs %s before it can execute: %s. Nothing was done yet. A person must approve this exact operation (%s) on the approval channel; any change to it needs a new approval.",
			levelText(pr.Level), reasonText(pr.Reasons), st.operation[:16])}
		return
	default:
		if len(pr.Errors) > 0 {
			refuse(d, intent.CodePolicyError, "The policy could not decide on this operation, so it was refused. Nothing was done.")
			return
		}
		// A denial is final: quote the forbids that decided it, not the
		// approval guards that also matched (no approval could help).
		var reasons []string
		for i, id := range pr.Policies {
			if !rt.guards[id] && i < len(pr.Reasons) {
				reasons = append(reasons, pr.Reasons[i])
			}
		}
		refuse(d, intent.CodePolicyDenied, "The policy refuses this operation: %s. Nothing was done. Do not try to reach the same result another way; tell the user.", reasonText(reasons))
		return
	}

	// 7. Budget.
	resID := st.operation
	if c.Budget != "" {
		err := g.store.Reserve(ctx, m.ID, m.Budget, resID, intent.Money{Currency: m.Budget.Currency, Amount: amount})
		if err != nil {
			if errors.Is(err, state.ErrDuplicate) {
				refuse(d, intent.CodeReplay, "This exact operation is already executing or has executed (operation %s); it will not execute again.", st.operation[:16])
				return
			}
			g.refuseBudget(ctx, d, m, amount, err)
			return
		}
	}
	release := func() {
		if c.Budget != "" {
			if err := g.store.Release(st.detached(ctx), resID); err != nil {
				g.log.Error("budget release failed", "reservation", resID, "err", err)
			}
		}
	}

	// 8. Approval: each approval is used once.
	for _, a := range grant.Approvals {
		if err := g.store.Consume(ctx, state.ApprovalKey(a.ID), a.ExpiresAt); err != nil {
			release()
			if errors.Is(err, state.ErrReplayed) {
				refuse(d, intent.CodeApprovalInvalid, "The approval presented was already used. Nothing was done. Each approval is valid for one execution only.")
			} else {
				refuse(d, intent.CodeUnavailable, "The gateway's state store is unavailable, so nothing was done. Try again later.")
			}
			return
		}
	}

	// 9. Execute, once.
	if !c.ReadOnly {
		// The verifier accepts a mandate until DefaultSkew after its
		// expiry; the nonce must outlive that, or a store that forgets
		// expired keys lets the operation execute again in between.
		if err := g.store.Consume(ctx, st.opKey, m.Expiry.Add(mandate.DefaultSkew)); err != nil {
			release()
			if errors.Is(err, state.ErrReplayed) {
				refuse(d, intent.CodeReplay, "This exact operation has already executed (operation %s); it will not execute again. If the user really wants it done twice, they must say so in a new mandate.", st.operation[:16])
			} else {
				refuse(d, intent.CodeUnavailable, "The gateway's state store is unavailable, so nothing was done. Try again later.")
			}
			return
		}
	}
	st.executing = true
	out, err := rt.pack.Executor.Execute(ctx, op, hash)
	st.executing = false
	if err != nil {
		st.execFailed = true
		if errors.Is(err, ErrNotExecuted) {
			release()
			why := "it gave no reason that can be shown"
			var ve *VisibleError
			if errors.As(err, &ve) {
				why = ve.Msg
			}
			refuse(d, intent.CodeExecutionFailed, "The operation was allowed but the system of record refused it (%s). Nothing was done.", why)
		} else {
			if c.Budget != "" {
				_ = g.store.Commit(st.detached(ctx), resID)
			}
			refuse(d, intent.CodeExecutionFailed, "The operation was allowed but its execution failed; it may or may not have taken effect and will not be retried automatically. Tell the user to check.")
		}
		return
	}
	if c.Budget != "" {
		if err := g.store.Commit(st.detached(ctx), resID); err != nil {
			g.log.Error("budget commit failed", "reservation", resID, "err", err)
		}
	}
	d.Verdict, d.Executed, d.Output = intent.Allow, true, out.Output
	st.summary = out.Summary
	if st.summary == "" && out.Output != "" {
		st.summary = outputDigest(out.Output)
	}
}

// outputDigest is "sha256:<hex> (<n> bytes)", what a receipt keeps of an
// output given without summary.
func outputDigest(out string) string {
	sum := sha256.Sum256([]byte(out))
	b := make([]byte, 0, len("sha256:")+2*len(sum)+len(" ( bytes)")+20)
	b = append(b, "sha256:"...)
	b = hex.AppendEncode(b, sum[:])
	b = append(b, " ("...)
	b = strconv.AppendInt(b, int64(len(out)), 10)
	b = append(b, " bytes)"...)
	return string(b)
}

func (g *Gateway) refuseResolution(d *Decision, c *contract.Contract, err error) {
	var re *resolve.Error
	if !errors.As(err, &re) {
		refuse(d, intent.CodeContextFailed, "The trusted sources could not be read, so nothing was done. Try again later.")
		return
	}
	prm, _ := c.Param(re.Param)
	sent := fmt.Sprintf(" (%q)", truncate(re.Sent))
	detail := re.Detail
	if prm.Sensitive {
		sent, detail = "", "is not accepted" // never echo a secret
	}
	switch {
	case errors.Is(re, resolve.ErrNotNormalizable):
		refuse(d, intent.CodeBadArgument, "The value given for %q was refused: %s. Nothing was done.", re.Param, detail)
	case errors.Is(re, resolve.ErrNoMatch):
		hint := "Only values the user authorised or records on file can be used; if the user wants another one, they must add it themselves through a trusted channel, not through you."
		if prm.OnNoMatch != "" {
			hint = prm.OnNoMatch
		}
		refuse(d, intent.CodeNotTrusted, "The %s you gave%s %s, so nothing was done. %s", re.Param, sent, re.Detail, hint)
	default:
		refuse(d, intent.CodeContextFailed, "The trusted source for %q could not be read, so nothing was done. Try again later.", re.Param)
	}
}

func (g *Gateway) refuseBudget(ctx context.Context, d *Decision, m *mandate.Mandate, amount intent.Amount, err error) {
	if !errors.Is(err, state.ErrExceeded) && !errors.Is(err, state.ErrCurrency) {
		refuse(d, intent.CodeUnavailable, "The gateway's state store is unavailable, so nothing was done. Try again later.")
		return
	}
	remaining := "unknown"
	if u, uerr := g.store.Usage(ctx, m.ID); uerr == nil {
		remaining = intent.FormatAmount(m.Budget.Amount-u.Committed-u.Reserved, 2) + " " + m.Budget.Currency
	}
	refuse(d, intent.CodeBudgetExceeded, "The amount %s %s exceeds what remains of the budget the user authorised (%s of %s %s). Nothing was done; only the user can raise the budget.",
		intent.FormatAmount(amount, 2), m.Budget.Currency, remaining, intent.FormatAmount(m.Budget.Amount, 2), m.Budget.Currency)
}

// lock holds the contract's exclusive records in the store, which makes it
// hold across gateway replicas that share a store. The returned function
// gives them back.
func (g *Gateway) lock(ctx context.Context, st *decision, owner intent.Owner, c *contract.Contract, args intent.Args) (func(), error) {
	values := make([]string, len(c.Exclusive))
	for i, name := range c.Exclusive {
		values[i] = args[name].Str
	}
	key := state.LockKey(owner, c.Action, values...)
	var id [16]byte
	if _, err := io.ReadFull(g.rand, id[:]); err != nil {
		return nil, err
	}
	holder := "holder:" + hex.EncodeToString(id[:])
	if err := g.store.Hold(ctx, key, holder, g.lockTTL); err != nil {
		return nil, err
	}
	return func() {
		if err := g.store.Unhold(st.detached(ctx), key, holder); err != nil {
			g.log.Error("lock release failed", "lock", key, "err", err)
		}
	}, nil
}

// budgetFits checks, without holding anything, that amount still fits the
// mandate's budget, so no one is asked to approve what cannot execute.
func (g *Gateway) budgetFits(ctx context.Context, m *mandate.Mandate, amount intent.Amount) error {
	if amount == 0 {
		return nil
	}
	// A read, not a probe reservation: concurrent step-ups must not see
	// each other's probes as spending.
	u, err := g.store.Usage(ctx, m.ID)
	if err != nil {
		return err
	}
	if m.Budget.Amount-u.Committed-u.Reserved < amount {
		return state.ErrExceeded
	}
	return nil
}

func (g *Gateway) facts(ctx context.Context, rt *route, m *mandate.Mandate, action intent.Action, res resolve.Output) (map[string]intent.Value, error) {
	facts := map[string]intent.Value{}
	for param, attrs := range res.Attrs {
		for k, v := range attrs {
			facts[param+"_"+k] = v
		}
	}
	q := FactQuery{Owner: m.Owner, Action: action, Args: res.Args, Resolved: res.Resolved, Budget: m.Budget, Claims: m.Claims}
	for _, p := range rt.pack.Context {
		fs, err := p.Facts(ctx, q)
		if err != nil {
			return nil, err
		}
		for k, v := range fs {
			if _, dup := facts[k]; dup {
				return nil, fmt.Errorf("gateway: fact %q given twice", k)
			}
			facts[k] = v
		}
	}
	return facts, nil
}

// mandate verifies token, caching verified tokens; the time window and
// revocation are checked on every call.
func (g *Gateway) mandate(ctx context.Context, token string, now time.Time) (*mandate.Mandate, error) {
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

func levelText(l intent.Level) string {
	if l == intent.LevelFourEyes {
		return "the approval of two different people (four eyes)"
	}
	return "a person's confirmation"
}

func reasonText(rs []string) string {
	var parts []string
	seen := map[string]bool{}
	for _, r := range rs {
		if r != "" && !seen[r] {
			seen[r] = true
			parts = append(parts, r)
		}
	}
	if len(parts) == 0 {
		return "no rule allows it"
	}
	return strings.Join(parts, "; ")
}

func truncate(s string) string {
	if len(s) <= 80 {
		return s
	}
	for i := 80; i > 0; i-- {
		if utf8.RuneStart(s[i]) {
			return s[:i] + "…"
		}
	}
	return ""
}
