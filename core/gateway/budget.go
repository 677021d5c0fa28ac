package gateway

import (
	"context"
	"errors"
	"strings"

	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/mandate"
	"github.com/intentplane/intentplane/core/state"
)

// 7. Budget: the amount is reserved against the mandate's budget, under
// the operation hash with its action and owner (state.ReservationID).
func (g *Gateway) budget(ctx context.Context, st *decision) *intent.Refusal {
	if st.route.contract.Budget == "" {
		return nil
	}
	m := st.mandate
	b, ok := m.BudgetIn(st.op.currency)
	if !ok {
		return noBudget(m, st.op.currency, st.op.amount)
	}
	st.reserve.id = state.ReservationID(st.op.hash, st.route.contract.Action, m.Owner)
	err := g.store.Reserve(ctx, budgetAccount(m, b), b, st.reserve.id, intent.Money{Currency: b.Currency, Amount: st.op.amount})
	if errors.Is(err, state.ErrDuplicate) {
		return refusals.Executing(st.op.hash)
	}
	if err != nil {
		// A retry of an operation that executed, once the budget is
		// used (by it, or since), is told that it executed: that is what
		// is true, and what stops a retry loop.
		if r := g.executedBefore(ctx, st); r != nil {
			return r
		}
		return g.budgetRefusal(ctx, m, b, st.op.amount, err)
	}
	st.reserve.budget = true
	return nil
}

// 8. Approval: each approval is used once; a run's approval once for
// each of its lines.
func (g *Gateway) approval(ctx context.Context, st *decision) *intent.Refusal {
	for _, a := range st.approved.grant.Approvals {
		key := state.ApprovalKey(a.ID)
		if len(a.Lines) > 0 {
			key = state.LineApprovalKey(a.ID, st.out.OperationHash)
		}
		err := g.store.Consume(ctx, key, a.ExpiresAt)
		if errors.Is(err, state.ErrReplayed) {
			return refusals.Approval()
		}
		if err != nil {
			return refusals.Unavailable()
		}
	}
	return nil
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
	return refusals.NoBudget(intent.Money{Currency: currency, Amount: amount}, strings.Join(have, ", "))
}

func (g *Gateway) budgetRefusal(ctx context.Context, m *mandate.Mandate, b intent.Money, amount intent.Amount, err error) *intent.Refusal {
	if !errors.Is(err, state.ErrExceeded) && !errors.Is(err, state.ErrCurrency) {
		return refusals.Unavailable()
	}
	remaining := "unknown"
	if u, uerr := g.store.Usage(ctx, budgetAccount(m, b)); uerr == nil {
		remaining = intent.Money{Currency: b.Currency, Amount: b.Amount - u.Committed - u.Reserved}.String()
	}
	return refusals.BudgetExceeded(intent.Money{Currency: b.Currency, Amount: amount}, remaining, b)
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
		return refusals.Unavailable()
	}
	if b.Amount-u.Committed-u.Reserved < amount {
		return g.budgetRefusal(ctx, m, b, amount, state.ErrExceeded)
	}
	return nil
}
