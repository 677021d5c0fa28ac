package gateway

import (
	"context"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/intentplane/intentplane/core/approval"
	"github.com/intentplane/intentplane/core/contract"
	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/mandate"
	"github.com/intentplane/intentplane/core/receipt"
	"github.com/intentplane/intentplane/core/resolve"
)

// decision carries one decision through the pipeline: what each step
// found, for the steps after it and for the receipt. Steps 1 to 4 fill the
// first group; each later step writes only its own group.
type decision struct {
	req Request
	now time.Time
	out Decision // what Decide returns

	// 1-4: decode, checkMandate, contract, resolve.
	proposal intent.Proposal
	decoded  bool // proposal holds the decoded proposal
	mandate  *mandate.Mandate
	route    *route
	args     intent.Args // the decoded arguments, then the resolved ones
	sent     intent.Args // the decoded arguments, before resolution
	res      resolve.Output

	op       operationState   // 5, context
	held     holdState        // 5, hold
	reserve  reservationState // 6 and 7, totals and budget
	approved approvalState    // 8, approval
	exec     executionState   // 9, execute
}

// operationState is what the context step builds of the operation.
type operationState struct {
	hash     string        // the operation hash in hex
	nonce    string        // state.NonceKey of the operation
	amount   intent.Amount // minor units of currency reserved against the budget
	currency string        // the amount's currency: the contract's BudgetCurrency fact, or the main budget's
}

// holdState is the record hold the hold step took, if any.
type holdState struct {
	key    string // the record-lock key held
	holder string // this decision's holder id for key
}

// reservationState is what the totals and budget steps reserved in the
// store, for execute and cleanup to commit or release.
type reservationState struct {
	id       string   // the reservations' id: state.ReservationID of the operation
	budget   bool     // a budget reservation is open under id
	totalIDs []string // the open reservations on the contract's totals
	totals   string   // the totals for people, "" if none
	// run, for a line of a run (DecideRun), collects the reservations on
	// the totals and budget that the run holds until all its lines are
	// decided; the line then stops after the policy, executing nothing.
	// Nil otherwise.
	run *[]string
}

// approvalState is what the approval step accepted.
type approvalState struct {
	grant    approval.Grant
	evidence []receipt.Evidence
}

// executionState is what execute did.
type executionState struct {
	running bool
	spent   bool   // the reservation is committed, not released, at cleanup
	result  string // receipt.ResultExecuted, ResultFailed or ResultNotExecuted
	summary string // what the receipt keeps of the output
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
	r := g.policy(ctx, st)
	if st.reserve.run != nil && (r == nil || r.Code == intent.CodeApprovalRequired) {
		return g.runLine(ctx, st, r)
	}
	if r != nil {
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
		return refusals.Malformed(reason)
	}
	st.proposal, st.decoded = p, true
	return nil
}

// 2. Mandate: verified, in force, and scoped to the action.
func (g *Gateway) checkMandate(ctx context.Context, st *decision) *intent.Refusal {
	m, err := g.verifyMandate(ctx, st.req.Mandate)
	if err != nil {
		r := refusals.MandateInvalid(err)
		var me *mandate.Error
		if errors.As(err, &me) {
			r.Code = me.Code()
		}
		return r
	}
	st.mandate = m
	if !m.Allows(st.proposal.Action) {
		return refusals.OutOfScope(truncate(string(st.proposal.Action)), m.ID)
	}
	return nil
}

// 3. Contract: the action's contract decodes the arguments.
func (g *Gateway) contract(st *decision) *intent.Refusal {
	rt, ok := g.contracts[st.proposal.Action]
	if !ok {
		return refusals.UnknownAction(truncate(string(st.proposal.Action)))
	}
	st.route = rt
	args, err := rt.contract.Decode(st.proposal.Args)
	if err != nil {
		return refusals.BadArgument(err)
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

func resolutionRefusal(c *contract.Contract, err error) *intent.Refusal {
	var re *resolve.Error
	if !errors.As(err, &re) {
		return refusals.SourcesUnreadable()
	}
	prm, _ := c.Param(re.Param)
	sent := fmt.Sprintf(" (%q)", truncate(re.Sent))
	detail := re.Detail
	if prm.Sensitive {
		sent, detail = "", "is not accepted" // never echo a secret
	}
	switch {
	case errors.Is(re, resolve.ErrNotNormalizable):
		return refusals.BadValue(re.Param, detail)
	case errors.Is(re, resolve.ErrNoMatch):
		hint := "Only values the user authorised or records on file can be used; if the user wants another one, they must add it themselves through a trusted channel, not through you."
		if prm.OnNoMatch != "" {
			hint = prm.OnNoMatch
		}
		return refusals.NotTrusted(re.Param, sent, re.Detail, hint)
	}
	return refusals.SourceUnreadable(re.Param)
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
