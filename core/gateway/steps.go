package gateway

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync/atomic"
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

// decision carries one decision through the pipeline: what each step
// found, for the steps after it and for the receipt.
type decision struct {
	req      Request
	now      time.Time
	out      Decision // what Decide returns
	proposal intent.Proposal
	decoded  bool // proposal holds the decoded proposal
	mandate  *mandate.Mandate
	route    *route
	args     intent.Args // the decoded arguments, then the resolved ones
	sent     intent.Args // the decoded arguments, before resolution
	res      resolve.Output
	amount   intent.Amount // minor units of currency reserved against the budget
	currency string        // the amount's currency: the contract's BudgetCurrency fact, or the main budget's
	grant    approval.Grant
	evidence []receipt.Evidence

	operation string   // the operation hash in hex, once built
	nonce     string   // state.NonceKey of the operation
	lock      string   // the record-lock key held, if any
	holder    string   // this decision's holder id for lock
	reserved  bool     // a budget reservation is open under resID
	resID     string   // the reservation's id: state.ReservationID of the operation
	totalIDs  []string // the open reservations on the contract's totals
	totals    string   // the totals for people, "" if none

	executing bool
	spent     bool   // the reservation is committed, not released, at cleanup
	result    string // receipt.ResultExecuted, ResultFailed or ResultNotExecuted
	summary   string // what the receipt keeps of the output
}

// run is the pipeline, steps 1 to 9 (the receipt, step 10, is Decide's):
// each step returns a refusal, which ends the decision, or nil. A step-up
// is a refusal with code approval.required. What a step holds (a record
// lock, a reservation) is given back by the step that took it or by
// cleanup.
func (g *Gateway) run(ctx context.Context, st *decision) *intent.Refusal {
	defer g.cleanup(ctx, st)
	if r := g.decode(ctx, st); r != nil {
		return r
	}
	if r := g.checkMandate(ctx, st); r != nil {
		return r
	}
	if r := g.contract(st); r != nil {
		return r
	}
	if r := g.resolve(ctx, st); r != nil {
		return r
	}
	if r := g.context(ctx, st); r != nil {
		return r
	}
	if r := g.totals(ctx, st); r != nil {
		return r
	}
	if r := g.policy(ctx, st); r != nil {
		return r
	}
	if r := g.budget(ctx, st); r != nil {
		return r
	}
	if r := g.approval(ctx, st); r != nil {
		return r
	}
	return g.execute(ctx, st)
}

// 1. Decode the proposal strictly.
func (g *Gateway) decode(ctx context.Context, st *decision) *intent.Refusal {
	p, err := contract.DecodeProposal(st.req.Proposal, g.cfg.Limits)
	if err != nil {
		// The receipt still belongs to the mandate's owner when the
		// mandate is genuine, so an owner's chain shows every attempt.
		if m, merr := g.verifyMandate(ctx, st.req.Mandate); merr == nil {
			st.mandate = m
		}
		reason := err.Error()
		if me := (*contract.MalformedError)(nil); errors.As(err, &me) {
			reason = me.Reason
		}
		return refusals.Malformed.with(reason)
	}
	st.proposal, st.decoded = p, true
	return nil
}

// 2. Mandate: verified, in force, and scoped to the action.
func (g *Gateway) checkMandate(ctx context.Context, st *decision) *intent.Refusal {
	m, err := g.verifyMandate(ctx, st.req.Mandate)
	if err != nil {
		r := refusals.MandateInvalid.with(err)
		var me *mandate.Error
		if errors.As(err, &me) {
			r.Code = me.Code()
		}
		return r
	}
	st.mandate = m
	if !m.Allows(st.proposal.Action) {
		return refusals.OutOfScope.with(truncate(string(st.proposal.Action)), m.ID)
	}
	return nil
}

// 3. Contract: the action's contract decodes the arguments.
func (g *Gateway) contract(st *decision) *intent.Refusal {
	rt, ok := g.contracts[st.proposal.Action]
	if !ok {
		return refusals.UnknownAction.with(truncate(string(st.proposal.Action)))
	}
	st.route = rt
	args, err := rt.contract.Decode(st.proposal.Args)
	if err != nil {
		return refusals.BadArgument.with(err)
	}
	st.args = args
	return nil
}

// 4. Resolve each critical value through the mandate or a trusted source.
func (g *Gateway) resolve(ctx context.Context, st *decision) *intent.Refusal {
	c, m := st.route.contract, st.mandate
	res, err := st.route.resolver.Resolve(ctx, c, resolve.Input{
		Owner: m.Owner, MandateID: m.ID, Claims: m.Claims,
		Strict: m.Mode == mandate.ModeStrict, Args: st.args,
	})
	if err != nil {
		return resolutionRefusal(c, err)
	}
	st.res, st.sent, st.args = res, st.args, res.Args
	st.out.Resolved = res.Resolved
	return nil
}

// 5. Context: hold the records one operation at a time may act on, read
// the facts, and build the operation. The records are held from before
// their facts are read until after execution, so that two concurrent
// payments of one bill cannot both see it unpaid.
func (g *Gateway) context(ctx context.Context, st *decision) *intent.Refusal {
	c, m := st.route.contract, st.mandate
	if len(c.Exclusive) > 0 {
		if r := g.hold(ctx, st); r != nil {
			return r
		}
	}
	facts, err := g.facts(ctx, st.route, m, st.res, st.now)
	if err != nil {
		var ve *VisibleError
		if errors.As(err, &ve) {
			return refusals.SystemsInsufficient.with(ve.Msg)
		}
		return refusals.SystemsUnreadable.with()
	}
	if !validText(facts, st.res) {
		st.args, st.out.Resolved = st.sent, nil // keep only what the receipt can record
		return refusals.InvalidText.with()
	}
	st.out.Facts = facts
	op := intent.Operation{Action: c.Action, Args: st.args, MandateID: m.ID, Owner: m.Owner}
	hash, err := op.Hash()
	if err != nil {
		return refusals.Unencodable.with()
	}
	st.out.Operation, st.out.OperationHash = &op, hash
	st.nonce = state.NonceKey(hash)
	st.operation = strings.TrimPrefix(st.nonce, "op:")
	if c.Budget != "" {
		st.amount = intent.Amount(st.args[c.Budget].Int)
		st.currency = m.Budget.Currency
		if c.BudgetCurrency != "" {
			v, ok := facts[c.BudgetCurrency]
			if !ok || v.Kind != intent.KindString || v.Str == "" {
				g.log.Error("the budget currency fact is missing", "action", c.Action, "fact", c.BudgetCurrency)
				return refusals.SystemsUnreadable.with()
			}
			st.currency = v.Str
		}
		// An amount read at another scale than its currency's minor unit
		// (2 decimals for a JPY budget) would be counted and shown off by
		// a power of ten: refused, whatever the amount.
		if r := checkScale(c, st); r != nil {
			return r
		}
	}
	return nil
}

// 5b. Totals: the operation's amount is reserved on each of the
// contract's running totals (contract.Total) before the total is read, so
// that of two operations decided at once, on any replicas sharing the
// store, the later to reserve sees the other's amount: together they
// never stay under a threshold that their sum crosses. Each total, less
// this operation's amount, plus what the system of record registered
// outside the gateway (the Outside fact), is given to the policy as the
// fact of its name. The reservations are committed or released with the
// budget's (cleanup), and reconciled like it after a crash.
func (g *Gateway) totals(ctx context.Context, st *decision) *intent.Refusal {
	c := st.route.contract
	if len(c.Totals) == 0 {
		return nil
	}
	facts := st.out.Facts
	amount, cur, converted, r := g.totalsAmount(st)
	if r != nil {
		return r
	}
	st.resID = state.ReservationID(st.operation, c.Action, st.mandate.Owner)
	reqs, values := totalRequests(st, amount, cur)
	us, r := g.reserveTotals(ctx, st, reqs, func(i int) string {
		return "to " + nameOf(facts, c.Totals[i].By[0], values[i][0]) + " " + c.Totals[i].Text()
	})
	if r != nil {
		return r
	}
	parts, nonzero, r := g.totalFacts(st, us, values, amount, cur)
	if r != nil {
		return r
	}
	// The amount converted is shown whenever it differs, so that the
	// person asked to approve sees both amounts.
	if nonzero || converted != "" {
		st.totals = fmt.Sprintf("this payment %s%s; %s", intent.Money{Currency: st.currency, Amount: st.amount}, converted, strings.Join(parts, ", "))
	}
	return nil
}

// totalsAmount returns the amount the totals add up and its currency:
// the operation's (in its budget's currency), or the one the contract
// converts it into (TotalsAmount, TotalsCurrency facts), with the
// converted amount in words when it is another currency. A negative
// amount counts as zero (it is the policy's to refuse).
func (g *Gateway) totalsAmount(st *decision) (amount intent.Amount, cur, converted string, r *intent.Refusal) {
	c, facts := st.route.contract, st.out.Facts
	amount, cur = max(st.amount, 0), st.currency
	if c.TotalsAmount == "" {
		return amount, cur, "", nil
	}
	a, cu := facts[c.TotalsAmount], facts[c.TotalsCurrency]
	if a.Kind != intent.KindInt || cu.Kind != intent.KindString || cu.Str == "" {
		g.log.Error("the totals' amount or currency fact is missing", "action", c.Action, "facts", c.TotalsAmount+", "+c.TotalsCurrency)
		return 0, "", "", refusals.SystemsUnreadable.with()
	}
	if cu.Str != cur {
		converted = fmt.Sprintf(" (%s)", intent.Money{Currency: cu.Str, Amount: intent.Amount(a.Int)})
	}
	return intent.Amount(max(a.Int, 0)), cu.Str, converted, nil
}

// totalRequests returns the reservation of amount (minor units of cur) on
// each of the contract's running totals, and each total's By values (the
// trusted values identifying the payee).
func totalRequests(st *decision, amount intent.Amount, cur string) ([]state.ReserveRequest, [][]string) {
	c, m := st.route.contract, st.mandate
	reqs := make([]state.ReserveRequest, len(c.Totals))
	values := make([][]string, len(c.Totals))
	for i, t := range c.Totals {
		values[i] = make([]string, len(t.By))
		for j, name := range t.By {
			values[i][j] = st.args[name].Str
		}
		acct := state.TotalAccount(m.Owner, st.route.pack.Name, t.Name, cur, t.Period(st.now, m.ID), values[i]...)
		reqs[i] = state.ReserveRequest{Account: acct, Limit: intent.Money{Currency: cur, Amount: state.TotalLimit},
			ID: state.TotalReservationID(st.resID, i), Amount: intent.Money{Currency: cur, Amount: amount}}
	}
	return reqs, values
}

// totalFacts sets each total's fact: its usage us[i] less this operation's
// amount, plus what the system of record registered outside the gateway;
// and returns the totals in words for the approver ("paid to ACME today
// 850.00 EUR") and whether any is above zero.
func (g *Gateway) totalFacts(st *decision, us []state.Usage, values [][]string, amount intent.Amount, cur string) ([]string, bool, *intent.Refusal) {
	c, facts := st.route.contract, st.out.Facts
	var parts []string
	payee, nonzero := "", false
	for i, t := range c.Totals {
		before := us[i].Committed + us[i].Reserved - amount
		if t.Outside != "" {
			v, ok := facts[t.Outside]
			if !ok || v.Kind != intent.KindInt {
				g.log.Error("a total's outside fact is missing", "action", c.Action, "total", t.Name, "fact", t.Outside)
				return nil, false, refusals.Internal.with()
			}
			before = addSaturating(before, intent.Amount(max(v.Int, 0)))
		}
		if _, dup := facts[t.Name]; dup {
			g.log.Error("a total's name is also a fact", "action", c.Action, "total", t.Name)
			return nil, false, refusals.Internal.with()
		}
		facts[t.Name] = intent.Int(int64(before))
		nonzero = nonzero || before > 0
		who := nameOf(facts, t.By[0], values[i][0])
		part := fmt.Sprintf("%s %s", t.Text(), intent.Money{Currency: cur, Amount: before})
		if who != payee {
			payee = who
			part = "paid to " + who + " " + part
		}
		parts = append(parts, part+noteOf(facts, t.Note))
	}
	return parts, nonzero, nil
}

// totalRefusal is the refusal of an operation whose amount a total's
// ledger did not reserve (err): what is paid "to X today" (what) already
// holds it, or the sum would overflow (the total's limit is the largest
// Amount: the amount's fault, not the store's), or the store failed.
func totalRefusal(err error, st *decision, amount intent.Money, what string) *intent.Refusal {
	switch {
	case errors.Is(err, state.ErrDuplicate):
		return refusals.Executing.with(st.operation[:16])
	case errors.Is(err, state.ErrExceeded):
		return refusals.TotalTooLarge.with(amount.Decimal(), amount.Currency, what)
	}
	return refusals.Unavailable.with()
}

// checkScale refuses the budget amount of st when it is read in another
// currency than the one it is counted in (an amount in the currency an
// argument names, contract.AmountIn, where the record paid is in
// another), or at another scale than that currency's minor unit.
func checkScale(c *contract.Contract, st *decision) *intent.Refusal {
	v := st.args[c.Budget]
	if v.Kind != intent.KindAmount {
		return nil
	}
	for _, p := range c.Params {
		if cp := p.Type.Currency(); p.Name == c.Budget && cp != "" && st.args[cp].Str != st.currency {
			return refusals.CurrencyMismatch.with(c.Budget, st.args[cp].Str, st.currency, st.currency)
		}
	}
	if e := (intent.Money{Currency: st.currency}).Exponent(); int(v.Scale) != e {
		return refusals.ScaleMismatch.with(c.Budget, v.Scale, st.currency, e)
	}
	return nil
}

// noteOf returns " (" + the text of the fact note + ")" when note names a
// String fact that is not empty (contract.Total.Note), else "".
func noteOf(facts map[string]intent.Value, note string) string {
	if v, ok := facts[note]; ok && note != "" && v.Kind == intent.KindString && v.Str != "" {
		return " (" + v.Str + ")"
	}
	return ""
}

// nameOf returns how people know the record a parameter resolved to: the
// fact <param>_name when a source gives it, else value.
func nameOf(facts map[string]intent.Value, param, value string) string {
	if v, ok := facts[param+"_name"]; ok && v.Kind == intent.KindString && v.Str != "" {
		return v.Str
	}
	return value
}

// addSaturating returns a+b for b >= 0, or the largest Amount when that
// would overflow.
func addSaturating(a, b intent.Amount) intent.Amount {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

// hold takes the contract's exclusive records in the store, which makes
// the hold work across gateway replicas that share it; cleanup gives them
// back.
func (g *Gateway) hold(ctx context.Context, st *decision) *intent.Refusal {
	c := st.route.contract
	var buf [4]string // Exclusive names one or two records
	values := buf[:0]
	for _, name := range c.Exclusive {
		values = append(values, st.res.Args[name].Str)
	}
	holder := g.holders.next()
	key := state.LockKey(st.mandate.Owner, c.Action, values...)
	if err := g.store.Hold(ctx, key, holder, g.lockTTL); err != nil {
		if errors.Is(err, state.ErrHeld) {
			return heldRefusal(c, err, g.lockTTL)
		}
		return refusals.Unavailable.with()
	}
	st.lock, st.holder = key, holder
	return nil
}

// heldRefusal is the refusal of a decision whose records another holds:
// when the store says until when (state.HeldError), it names when that
// hold was taken (its expiry less ttl: every gateway sharing a store has
// the same LockTTL) and when it expires, in UTC, since a hold left by a
// gateway that crashed lasts until then.
func heldRefusal(c *contract.Contract, err error, ttl time.Duration) *intent.Refusal {
	what := strings.Join(c.Exclusive, " and ")
	var he *state.HeldError
	if !errors.As(err, &he) || he.Until.IsZero() {
		return refusals.InFlight.with(what)
	}
	until := he.Until.UTC().Truncate(time.Second)
	return refusals.InFlightUntil.with(what, until.Add(-ttl).Format(time.DateTime), until.Format(time.DateTime))
}

// holders makes the lock-holder ids of one gateway: "holder:" and 32 hex
// digits, a random prefix read once (8 bytes) and a counter (8 bytes), so
// that ids are unique across gateways sharing a store and within one,
// without reading randomness on every decision. An id names who holds a
// lock; it is no secret (only the store sees it).
type holders struct {
	prefix [8]byte
	n      atomic.Uint64
}

func (h *holders) next() string {
	var id [16]byte
	copy(id[:], h.prefix[:])
	binary.BigEndian.PutUint64(id[8:], h.n.Add(1))
	var b [len("holder:") + 2*len(id)]byte
	hex.Encode(b[copy(b[:], "holder:"):], id[:])
	return string(b[:])
}

// 6. Policy: the approvals presented are checked first, so that the
// policy sees what they grant (they are consumed in step 8, only if it
// allows); then Cedar decides.
func (g *Gateway) policy(ctx context.Context, st *decision) *intent.Refusal {
	if r := g.checkApprovals(st); r != nil {
		return r
	}
	c, m, rt := st.route.contract, st.mandate, st.route
	resource := ""
	if c.Resource != "" {
		resource = st.args[c.Resource].String()
	}
	pr := rt.engine.Evaluate(policy.Request{
		Principal: m.Owner,
		Action:    c.Action,
		Resource:  resource,
		Standard: &policy.Standard{
			Args:     st.args,
			Facts:    st.out.Facts,
			Confirm:  st.grant.Confirm || st.grant.FourEyes,
			FourEyes: st.grant.FourEyes,
			Mode:     string(m.Mode),
			Amount:   st.amount,
		},
	})
	st.out.Policies = pr.Policies
	switch pr.Verdict {
	case intent.Allow:
		return nil
	case intent.StepUp:
		// No one is asked to approve what already executed: it would be
		// refused as replayed once approved (and is so told before the
		// budget it used up).
		if r := g.executedBefore(ctx, st); r != nil {
			return r
		}
		// Nor what the budget cannot pay.
		if r := g.budgetFits(ctx, m, st.currency, st.amount); r != nil {
			return r
		}
		st.out.Level = pr.Level
		return refusals.ApprovalRequired.with(levelText(pr.Level), st.withTotals(reasonText(withFacts(pr.Reasons, st.out.Facts))), st.operation[:16])
	}
	if len(pr.Errors) > 0 && len(pr.Overflowed) == len(pr.Errors) {
		// Only overflows: the amount (with a total) is beyond what the
		// policy can add up, which the agent can be told.
		return refusals.PolicyOverflow.with(strings.Join(pr.Overflowed, ", "))
	}
	if len(pr.Errors) > 0 {
		return refusals.PolicyError.with()
	}
	// An operation that already executed is answered as such, not with
	// what the policy now finds (the bill it paid is paid): a retry of a
	// call whose answer was lost learns that it executed.
	if r := g.executedBefore(ctx, st); r != nil {
		return r
	}
	// A denial is final: quote the forbids that decided it, not the
	// approval guards that also matched (no approval could help).
	var reasons []string
	for i, id := range pr.Policies {
		if !rt.guards[id] && i < len(pr.Reasons) {
			reasons = append(reasons, pr.Reasons[i])
		}
	}
	return refusals.PolicyDenied.with(st.withTotals(reasonText(withFacts(reasons, st.out.Facts))))
}

// withTotals returns the policy's reasons followed by the operation's
// totals in brackets, when it has any, so that the agent and the person
// asked to approve see what the payment adds up to ("this payment 400.01
// EUR; paid to ACME Supplies today 1999.99 EUR").
func (st *decision) withTotals(reasons string) string {
	if st.totals == "" {
		return reasons
	}
	return reasons + " (" + st.totals + ")"
}

// reserveTotals makes the reservations on the running totals and returns
// the totals' usage after them: one call, one round trip to a store that
// is a state.BatchReserver. Cleanup settles what they hold, whatever
// the outcome. A reservation the store refuses is totalRefusal's refusal,
// what(i) naming the i-th total ("to ACME Supplies today").
func (g *Gateway) reserveTotals(ctx context.Context, st *decision, reqs []state.ReserveRequest, what func(i int) string) ([]state.Usage, *intent.Refusal) {
	us, errs := state.ReserveAll(ctx, g.store, reqs)
	var r *intent.Refusal
	for i, err := range errs {
		if err == nil || errors.Is(err, state.ErrUsageUnread) {
			st.totalIDs = append(st.totalIDs, reqs[i].ID)
		}
		if r == nil && err != nil {
			r = totalRefusal(err, st, reqs[i].Amount, what(i))
		}
	}
	return us, r
}

// executedBefore returns the replay refusal when the operation, which
// writes, has already executed (its nonce is consumed), and nil otherwise
// or when the store cannot tell: the nonce is consumed again, atomically,
// before anything executes.
func (g *Gateway) executedBefore(ctx context.Context, st *decision) *intent.Refusal {
	if st.route.contract.ReadOnly {
		return nil
	}
	if done, err := g.store.Consumed(ctx, st.nonce); err == nil && done {
		return g.replayed(ctx, st)
	}
	return nil
}

// replayed is the refusal of an operation whose nonce is consumed: it
// executed (Replayed), unless reconciliation released it after a crash,
// finding that it had not executed, and kept its nonce spent (the
// NotExecutedKey is consumed; see Gateway.Reconcile). If the store cannot
// tell, Replayed, as before.
func (g *Gateway) replayed(ctx context.Context, st *decision) *intent.Refusal {
	if not, err := g.store.Consumed(ctx, state.NotExecutedKey(st.out.OperationHash)); err == nil && not {
		return refusals.NotExecuted.with(st.operation[:16])
	}
	return refusals.Replayed.with(st.operation[:16])
}

// checkApprovals checks the approvals presented with the request against
// the operation, and that each approver may approve for the owner.
func (g *Gateway) checkApprovals(st *decision) *intent.Refusal {
	if len(st.req.Approvals) == 0 {
		return nil
	}
	if g.cfg.Approvers == nil {
		return refusals.ApprovalsOff.with()
	}
	m := st.mandate
	grant, err := approval.Evaluate(g.cfg.Approvers, st.out.OperationHash, m.ID, st.now, st.req.Approvals)
	if err != nil {
		return refusals.ApprovalInvalid.with(err)
	}
	for _, a := range grant.Approvals {
		if g.cfg.ApproverScope != nil && !g.cfg.ApproverScope(a.Approver, m.Owner) {
			return refusals.ApproverOutOfScope.with()
		}
	}
	for _, a := range grant.Approvals {
		st.evidence = append(st.evidence, receipt.Evidence{ID: a.ID, Approver: a.Approver, Level: string(grant.Level()), IssuedAt: a.IssuedAt, ExpiresAt: a.ExpiresAt})
	}
	st.grant = grant
	return nil
}

// 7. Budget: the amount is reserved against the mandate's budget, under
// the operation hash with its action and owner (state.ReservationID).
func (g *Gateway) budget(ctx context.Context, st *decision) *intent.Refusal {
	if st.route.contract.Budget == "" {
		return nil
	}
	m := st.mandate
	b, ok := m.BudgetIn(st.currency)
	if !ok {
		return noBudget(m, st.currency, st.amount)
	}
	st.resID = state.ReservationID(st.operation, st.route.contract.Action, m.Owner)
	err := g.store.Reserve(ctx, budgetAccount(m, b), b, st.resID, intent.Money{Currency: b.Currency, Amount: st.amount})
	if errors.Is(err, state.ErrDuplicate) {
		return refusals.Executing.with(st.operation[:16])
	}
	if err != nil {
		// A retry of an operation that executed, once the budget is
		// used (by it, or since), is told that it executed: that is what
		// is true, and what stops a retry loop.
		if r := g.executedBefore(ctx, st); r != nil {
			return r
		}
		return g.budgetRefusal(ctx, m, b, st.amount, err)
	}
	st.reserved = true
	return nil
}

// 8. Approval: each approval is used once.
func (g *Gateway) approval(ctx context.Context, st *decision) *intent.Refusal {
	for _, a := range st.grant.Approvals {
		err := g.store.Consume(ctx, state.ApprovalKey(a.ID), a.ExpiresAt)
		if errors.Is(err, state.ErrReplayed) {
			return refusals.Approval.with()
		}
		if err != nil {
			return refusals.Unavailable.with()
		}
	}
	return nil
}

// 9. Execute, once: the operation's nonce is consumed first.
func (g *Gateway) execute(ctx context.Context, st *decision) *intent.Refusal {
	c, m := st.route.contract, st.mandate
	if !c.ReadOnly {
		// The verifier accepts a mandate until DefaultSkew after its
		// expiry; the nonce must outlive that, or a store that forgets
		// expired keys lets the operation execute again in between.
		err := g.store.Consume(ctx, st.nonce, m.Expiry.Add(mandate.DefaultSkew))
		if errors.Is(err, state.ErrReplayed) {
			return g.replayed(ctx, st)
		}
		if err != nil {
			return refusals.Unavailable.with()
		}
	}
	st.executing = true
	out, err := st.route.pack.Executor.Execute(ctx, *st.out.Operation, st.out.OperationHash)
	st.executing = false
	if err != nil {
		return g.executionFailed(ctx, st, err)
	}
	st.spent = true
	st.result = receipt.ResultExecuted
	st.out.Executed, st.out.Output = true, out.Output
	st.summary = out.Summary
	if st.summary == "" && out.Output != "" {
		st.summary = receipt.OutputDigest(out.Output)
	}
	return nil
}

// executionFailed reports an executor's error. When the executor is
// certain nothing happened (ErrNotExecuted: the system of record refused
// it) the operation's nonce is given back here, its reservation and record
// lock by cleanup, so the same operation can run once the cause is fixed.
// Otherwise the outcome is unknown (money may have moved): the operation
// stays held, its nonce consumed and its amount committed.
func (g *Gateway) executionFailed(ctx context.Context, st *decision, err error) *intent.Refusal {
	if !errors.Is(err, ErrNotExecuted) {
		st.result, st.spent = receipt.ResultFailed, true
		return refusals.ExecutionFailed.with()
	}
	if !st.route.contract.ReadOnly {
		// This decision consumed the nonce and holds it: no other can
		// have consumed it meanwhile. If it cannot be given back, a retry
		// is refused as replayed, which is safe.
		if err := g.store.Unconsume(context.WithoutCancel(ctx), st.nonce); err != nil {
			g.log.Error("nonce not given back after a refused execution", "operation", st.operation, "err", err)
		}
	}
	why := "it gave no reason that can be shown"
	var ve *VisibleError
	if errors.As(err, &ve) {
		why = ve.Msg
	}
	return refusals.ExecutionRefused.with(why)
}

// cleanup settles what the decision holds when it ends, even if the
// caller gave up: the budget reservation is committed when the operation
// executed or may have (spent), released when it did not; the record lock
// is given back. After a panic in the executor (still executing) the
// outcome is unknown: the reservation stays open and the record lock stays
// held until it expires, as a crashed gateway's does, so that nothing
// else executes on those records while the operation may still reach the
// system of record (reconciliation relies on it, see Gateway.Reconcile).
func (g *Gateway) cleanup(ctx context.Context, st *decision) {
	if !st.reserved && st.lock == "" && len(st.totalIDs) == 0 {
		return
	}
	if ctx.Done() != nil { // a context that cannot be cancelled needs no shield
		ctx = context.WithoutCancel(ctx)
	}
	// Settled together: one round trip to a store that is a
	// state.Settler.
	ids := slices.Clone(st.totalIDs)
	if st.reserved {
		ids = append(ids, st.resID)
	}
	if len(ids) > 0 && !st.executing {
		for i, err := range state.Settle(ctx, g.store, ids, st.spent) {
			switch {
			case err == nil:
			case st.spent:
				g.log.Error("budget commit failed", "reservation", ids[i], "err", err)
			default:
				g.log.Error("budget release failed", "reservation", ids[i], "err", err)
			}
		}
	}
	if st.lock != "" && !st.executing {
		if err := g.store.Unhold(ctx, st.lock, st.holder); err != nil {
			g.log.Error("lock release failed", "lock", st.lock, "err", err)
		}
	}
}

func resolutionRefusal(c *contract.Contract, err error) *intent.Refusal {
	var re *resolve.Error
	if !errors.As(err, &re) {
		return refusals.SourcesUnreadable.with()
	}
	prm, _ := c.Param(re.Param)
	sent := fmt.Sprintf(" (%q)", truncate(re.Sent))
	detail := re.Detail
	if prm.Sensitive {
		sent, detail = "", "is not accepted" // never echo a secret
	}
	switch {
	case errors.Is(re, resolve.ErrNotNormalizable):
		return refusals.BadValue.with(re.Param, detail)
	case errors.Is(re, resolve.ErrNoMatch):
		hint := "Only values the user authorised or records on file can be used; if the user wants another one, they must add it themselves through a trusted channel, not through you."
		if prm.OnNoMatch != "" {
			hint = prm.OnNoMatch
		}
		return refusals.NotTrusted.with(re.Param, sent, re.Detail, hint)
	}
	return refusals.SourceUnreadable.with(re.Param)
}

// budgetAccount is the ledger account of the mandate's budget b: the
// mandate id for its main budget, state.BudgetAccount for the others.
func budgetAccount(m *mandate.Mandate, b intent.Money) string {
	if b.Currency == m.Budget.Currency {
		return m.ID
	}
	return state.BudgetAccount(m.ID, b.Currency)
}

// noBudget refuses an amount in a currency the mandate has no budget in,
// naming the budgets it has.
func noBudget(m *mandate.Mandate, currency string, amount intent.Amount) *intent.Refusal {
	var have []string
	for _, b := range m.AllBudgets() {
		have = append(have, b.String())
	}
	return refusals.NoBudget.with(intent.Money{Currency: currency, Amount: amount}.Decimal(), currency, currency, strings.Join(have, ", "), currency)
}

func (g *Gateway) budgetRefusal(ctx context.Context, m *mandate.Mandate, b intent.Money, amount intent.Amount, err error) *intent.Refusal {
	if !errors.Is(err, state.ErrExceeded) && !errors.Is(err, state.ErrCurrency) {
		return refusals.Unavailable.with()
	}
	remaining := "unknown"
	if u, uerr := g.store.Usage(ctx, budgetAccount(m, b)); uerr == nil {
		remaining = intent.Money{Currency: b.Currency, Amount: b.Amount - u.Committed - u.Reserved}.String()
	}
	return refusals.BudgetExceeded.with(intent.Money{Currency: b.Currency, Amount: amount}.Decimal(), b.Currency, remaining, b.Decimal(), b.Currency)
}

// budgetFits checks, without holding anything, that amount still fits the
// mandate's budget in currency, so no one is asked to approve what cannot
// execute. It returns the refusal if it does not.
func (g *Gateway) budgetFits(ctx context.Context, m *mandate.Mandate, currency string, amount intent.Amount) *intent.Refusal {
	if currency == "" { // the action moves no money
		return nil
	}
	b, ok := m.BudgetIn(currency)
	if !ok {
		return noBudget(m, currency, amount)
	}
	if amount == 0 {
		return nil
	}
	// A read, not a probe reservation: concurrent step-ups must not see
	// each other's probes as spending.
	u, err := g.store.Usage(ctx, budgetAccount(m, b))
	if err != nil {
		return refusals.Unavailable.with()
	}
	if b.Amount-u.Committed-u.Reserved < amount {
		return g.budgetRefusal(ctx, m, b, amount, state.ErrExceeded)
	}
	return nil
}

func (g *Gateway) facts(ctx context.Context, rt *route, m *mandate.Mandate, res resolve.Output, now time.Time) (map[string]intent.Value, error) {
	facts := map[string]intent.Value{}
	for i, attrs := range res.Attrs {
		for k, v := range attrs {
			facts[res.Resolved[i].Param+"_"+k] = v
		}
	}
	q := FactQuery{Owner: m.Owner, Action: rt.contract.Action, Args: res.Args, Resolved: res.Resolved, Budget: m.Budget, Budgets: m.AllBudgets(), Claims: m.Claims, Now: now}
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
