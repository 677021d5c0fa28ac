package gateway

import (
	"context"
	"errors"
	"slices"

	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/mandate"
	"github.com/intentplane/intentplane/core/receipt"
	"github.com/intentplane/intentplane/core/state"
)

// 9. Execute, once: the operation's nonce is consumed first.
func (g *Gateway) execute(ctx context.Context, st *decision) *intent.Refusal {
	c, m := st.route.contract, st.mandate
	if !c.ReadOnly {
		// The verifier accepts a mandate until DefaultSkew after its
		// expiry; the nonce must outlive that, or a store that forgets
		// expired keys lets the operation execute again in between.
		err := g.store.Consume(ctx, st.op.nonce, m.Expiry.Add(mandate.DefaultSkew))
		if errors.Is(err, state.ErrReplayed) {
			return g.replayed(ctx, st)
		}
		if err != nil {
			return refusals.Unavailable()
		}
	}
	st.exec.running = true
	out, err := st.route.pack.Executor.Execute(ctx, *st.out.Operation, st.out.OperationHash)
	st.exec.running = false
	if err != nil {
		return g.executionFailed(ctx, st, err)
	}
	st.exec.spent = true
	st.exec.result = receipt.ResultExecuted
	st.out.Executed, st.out.Output = true, out.Output
	st.exec.summary = out.Summary
	if st.exec.summary == "" && out.Output != "" {
		st.exec.summary = receipt.OutputDigest(out.Output)
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
		st.exec.result, st.exec.spent = receipt.ResultFailed, true
		return refusals.ExecutionFailed()
	}
	if !st.route.contract.ReadOnly {
		// This decision consumed the nonce and holds it: no other can
		// have consumed it meanwhile. If it cannot be given back, a retry
		// is refused as replayed, which is safe.
		if err := g.store.Unconsume(context.WithoutCancel(ctx), st.op.nonce); err != nil {
			g.log.Error("nonce not given back after a refused execution", "operation", st.op.hash, "err", err)
		}
	}
	why := "it gave no reason that can be shown"
	var ve *VisibleError
	if errors.As(err, &ve) {
		why = ve.Msg
	}
	return refusals.ExecutionRefused(why)
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
	if !st.reserve.budget && st.held.key == "" && len(st.reserve.totalIDs) == 0 {
		return
	}
	if ctx.Done() != nil { // a context that cannot be cancelled needs no shield
		ctx = context.WithoutCancel(ctx)
	}
	// Settled together: one round trip to a store that is a
	// state.Settler.
	ids := slices.Clone(st.reserve.totalIDs)
	if st.reserve.budget {
		ids = append(ids, st.reserve.id)
	}
	if st.reserve.run != nil {
		// A line of a run: its totals and budget stay reserved until the
		// run is decided (DecideRun), so that the lines after it count it.
		*st.reserve.run = append(*st.reserve.run, ids...)
		ids = nil
	}
	if len(ids) > 0 && !st.exec.running {
		for i, err := range state.Settle(ctx, g.store, ids, st.exec.spent) {
			switch {
			case err == nil:
			case st.exec.spent:
				g.log.Error("budget commit failed", "reservation", ids[i], "err", err)
			default:
				g.log.Error("budget release failed", "reservation", ids[i], "err", err)
			}
		}
	}
	if st.held.key != "" && !st.exec.running {
		if err := g.store.Unhold(ctx, st.held.key, st.held.holder); err != nil {
			g.log.Error("lock release failed", "lock", st.held.key, "err", err)
		}
	}
}
