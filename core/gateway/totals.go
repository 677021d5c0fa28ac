package gateway

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/state"
)

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
	st.reserve.id = state.ReservationID(st.op.hash, c.Action, st.mandate.Owner)
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
		st.reserve.totals = fmt.Sprintf("this payment %s%s; %s", intent.Money{Currency: st.op.currency, Amount: st.op.amount}, converted, strings.Join(parts, ", "))
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
	amount, cur = max(st.op.amount, 0), st.op.currency
	if c.TotalsAmount == "" {
		return amount, cur, "", nil
	}
	a, cu := facts[c.TotalsAmount], facts[c.TotalsCurrency]
	if a.Kind != intent.KindInt || cu.Kind != intent.KindString || cu.Str == "" {
		g.log.Error("the totals' amount or currency fact is missing", "action", c.Action, "facts", c.TotalsAmount+", "+c.TotalsCurrency)
		return 0, "", "", refusals.SystemsUnreadable()
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
			ID: state.TotalReservationID(st.reserve.id, i), Amount: intent.Money{Currency: cur, Amount: amount}}
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
				return nil, false, refusals.Internal()
			}
			before = addSaturating(before, intent.Amount(max(v.Int, 0)))
		}
		if _, dup := facts[t.Name]; dup {
			g.log.Error("a total's name is also a fact", "action", c.Action, "total", t.Name)
			return nil, false, refusals.Internal()
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
		return refusals.Executing(st.op.hash)
	case errors.Is(err, state.ErrExceeded):
		return refusals.TotalTooLarge(amount.Decimal(), amount.Currency, what)
	}
	return refusals.Unavailable()
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
			st.reserve.totalIDs = append(st.reserve.totalIDs, reqs[i].ID)
		}
		if r == nil && err != nil {
			r = totalRefusal(err, st, reqs[i].Amount, what(i))
		}
	}
	return us, r
}

// withTotals returns the policy's reasons followed by the operation's
// totals in brackets, when it has any, so that the agent and the person
// asked to approve see what the payment adds up to ("this payment 400.01
// EUR; paid to ACME Supplies today 1999.99 EUR").
func (st *decision) withTotals(reasons string) string {
	if st.reserve.totals == "" {
		return reasons
	}
	return reasons + " (" + st.reserve.totals + ")"
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
