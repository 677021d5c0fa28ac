package gateway

import (
	"context"
	"strings"

	"github.com/intentplane/intentplane/core/approval"
	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/policy"
	"github.com/intentplane/intentplane/core/receipt"
	"github.com/intentplane/intentplane/core/state"
)

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
			Confirm:  st.approved.grant.Confirm || st.approved.grant.FourEyes,
			FourEyes: st.approved.grant.FourEyes,
			Mode:     string(m.Mode),
			Amount:   st.op.amount,
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
		if r := g.budgetFits(ctx, m, st.op.currency, st.op.amount); r != nil {
			return r
		}
		st.out.Level = pr.Level
		return refusals.ApprovalRequired(levelText(pr.Level), st.withTotals(reasonText(withFacts(pr.Reasons, st.out.Facts))), st.op.hash)
	}
	if len(pr.Errors) > 0 && len(pr.Overflowed) == len(pr.Errors) {
		// Only overflows: the amount (with a total) is beyond what the
		// policy can add up, which the agent can be told.
		return refusals.PolicyOverflow(strings.Join(pr.Overflowed, ", "))
	}
	if len(pr.Errors) > 0 {
		return refusals.PolicyError()
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
	return refusals.PolicyDenied(st.withTotals(reasonText(withFacts(reasons, st.out.Facts))))
}

// checkApprovals checks the approvals presented with the request against
// the operation, and that each approver may approve for the owner.
func (g *Gateway) checkApprovals(st *decision) *intent.Refusal {
	if len(st.req.Approvals) == 0 {
		return nil
	}
	if g.cfg.Approvers == nil {
		return refusals.ApprovalsOff()
	}
	m := st.mandate
	grant, err := approval.Evaluate(g.cfg.Approvers, st.out.OperationHash, m.ID, st.now, st.req.Approvals)
	if err != nil {
		return refusals.ApprovalInvalid(err)
	}
	for _, a := range grant.Approvals {
		if g.cfg.ApproverScope != nil && !g.cfg.ApproverScope(a.Approver, m.Owner) {
			return refusals.ApproverOutOfScope()
		}
	}
	for _, a := range grant.Approvals {
		st.approved.evidence = append(st.approved.evidence, receipt.Evidence{
			ID: a.ID, Approver: a.Approver, Level: string(grant.Level()), IssuedAt: a.IssuedAt, ExpiresAt: a.ExpiresAt,
			Channel: a.Channel, Run: a.RunHash(), Passkey: a.Passkey,
		})
	}
	st.approved.grant = grant
	return nil
}

// executedBefore returns the replay refusal when the operation, which
// writes, has already executed (its nonce is consumed), and nil otherwise
// or when the store cannot tell: the nonce is consumed again, atomically,
// before anything executes.
func (g *Gateway) executedBefore(ctx context.Context, st *decision) *intent.Refusal {
	if st.route.contract.ReadOnly {
		return nil
	}
	if done, err := g.store.Consumed(ctx, st.op.nonce); err == nil && done {
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
		return refusals.NotExecuted(st.op.hash)
	}
	return refusals.Replayed(st.op.hash)
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
