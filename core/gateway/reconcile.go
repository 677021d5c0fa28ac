package gateway

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/receipt"
	"github.com/intentplane/intentplane/core/state"
)

// A crash (kill -9, a lost host) between a budget reservation and its
// commit or release leaves the reservation open: the amount stays held
// against the mandate's budget, and nothing says whether the operation ran.
// Reconcile settles such reservations from the executor's idempotency
// record, at start and on demand (intentplane reconcile).

// Settler is implemented by executors whose system of record keeps an
// idempotency record of each operation (the operation hash in an Odoo
// payment's memo, for example), so that an operation whose outcome was lost
// can be settled instead of guessed. Lookup reports whether the operation
// with this hash, of this owner and action, took effect; it reads only and
// never executes anything. An error means the record could not be read;
// the reservation then stays open for the next reconciliation. Called
// concurrently.
type Settler interface {
	Lookup(ctx context.Context, owner intent.Owner, action intent.Action, hash intent.OperationHash) (executed bool, err error)
}

// Reservation is an open budget reservation (state.Reservation, defined
// where stores import it).
type Reservation = state.Reservation

// ReconcileStore is the store side of reconciliation (state.Reconciler).
type ReconcileStore = state.Reconciler

// Settlement is what Reconcile did with one reservation.
type Settlement struct {
	Reservation Reservation
	// Owner, Action and Operation name the operation (empty for a record
	// lock).
	Owner     intent.Owner
	Action    intent.Action
	Operation string
	// Outcome is one of the Outcome constants.
	Outcome string
	// Reason explains the outcome for people.
	Reason string
}

// The outcomes of a Settlement.
const (
	// OutcomeCommitted: the executor's record shows that the operation
	// executed; the amount is now spent.
	OutcomeCommitted = "committed"
	// OutcomeReleased: the operation did not execute (its nonce was never
	// consumed, or the executor's record shows nothing); the amount is
	// available again.
	OutcomeReleased = "released"
	// OutcomeUnsettled: the outcome cannot be known (the executor keeps no
	// idempotency record, or it could not be read); the reservation stays
	// open, and the amount held, for an operator or the next run.
	OutcomeUnsettled = "unsettled"
)

// ReconcileReport lists what Reconcile did, sorted by reservation id.
type ReconcileReport struct {
	Settlements []Settlement
}

// Count returns how many settlements had the outcome.
func (r ReconcileReport) Count(outcome string) int {
	n := 0
	for _, s := range r.Settlements {
		if s.Outcome == outcome {
			n++
		}
	}
	return n
}

// ErrNotReconcilable is returned by Reconcile when the gateway's store does
// not implement ReconcileStore.
var ErrNotReconcilable = state.ErrNotReconcilable

// Reconcile settles every reservation left open before before by a crash.
// Call it at start, before serving decisions, with the start time (or, with
// replicas sharing a store, a time earlier than any decision in flight can
// have reserved: now minus the longest decision, e.g. a minute); and on
// demand with the same bound.
//
// For a reservation of an operation:
//   - its nonce was never consumed: the executor was never called, so the
//     reservation is released;
//   - the pack's executor implements Settler: the reservation is committed
//     if Lookup says the operation executed, released otherwise (its nonce
//     stays consumed: the operation does not execute again under this
//     mandate);
//   - otherwise, or if Lookup fails, it stays open (OutcomeUnsettled).
//
// An operation's reservations on running totals (contract.Total) are
// settled the same way, each on its own; the receipt is appended for its
// budget reservation only.
//
// Each operation settled appends a receipt to its owner's chain (result
// executed or not_executed, with the reason as message). (Record locks
// need no reconciliation: a crashed holder's hold expires.) Reservations
// Reconcile cannot attribute to an operation are left alone. Reconcile
// returns the report and the errors met (store failures, joined); it goes on
// after errors on single reservations.
func (g *Gateway) Reconcile(ctx context.Context, before time.Time) (ReconcileReport, error) {
	rs, ok := g.store.(ReconcileStore)
	if !ok {
		return ReconcileReport{}, ErrNotReconcilable
	}
	open, err := rs.OpenReservations(ctx, before)
	if err != nil {
		return ReconcileReport{}, fmt.Errorf("gateway: reconcile: %w", err)
	}
	sort.Slice(open, func(i, j int) bool { return open[i].ID < open[j].ID })
	// Settlements are independent: settle several at a time, so that a
	// store's round trips overlap (PostgreSQL batches the receipts of one
	// owner appended together).
	out := make([]Settlement, len(open))
	errs := make([]error, len(open))
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(reconcileWorkers, len(open)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				out[i], errs[i] = g.settle(ctx, rs, open[i])
			}
		}()
	}
	for i := range open {
		next <- i
	}
	close(next)
	wg.Wait()
	var rep ReconcileReport
	for _, s := range out {
		if s.Outcome != "" {
			rep.Settlements = append(rep.Settlements, s)
		}
	}
	return rep, errors.Join(errs...)
}

// reconcileWorkers is how many reservations Reconcile settles at a time.
const reconcileWorkers = 128

// settle settles one open reservation; a zero Outcome means it was left
// alone.
func (g *Gateway) settle(ctx context.Context, rs ReconcileStore, r Reservation) (Settlement, error) {
	s := Settlement{Reservation: r}
	id := r.ID
	inner, total := state.ParseTotalReservationID(id)
	if total { // a running total's share of an operation: settled like it
		id = inner
	}
	hash, action, owner, ok := state.ParseReservationID(id)
	if !ok {
		return s, nil
	}
	s.Owner, s.Action, s.Operation = owner, action, hex.EncodeToString(hash[:])
	consumed, err := g.store.Consumed(ctx, state.NonceKey(hash))
	if err != nil {
		return s, err
	}
	executed := false
	switch rt := g.contracts[action]; {
	case !consumed:
		s.Reason = "the operation never reached its executor (its nonce was not consumed); its reservation is released"
	case rt == nil:
		s.Outcome, s.Reason = OutcomeUnsettled, "no pack of this gateway has the action, so its executor cannot be asked"
		return s, nil
	default:
		st, ok := rt.pack.Executor.(Settler)
		if !ok {
			s.Outcome, s.Reason = OutcomeUnsettled, "the outcome is unknown and the pack's executor keeps no idempotency record; settle it by hand"
			return s, nil
		}
		executed, err = st.Lookup(ctx, owner, action, hash)
		if err != nil {
			s.Outcome, s.Reason = OutcomeUnsettled, "the executor's idempotency record could not be read; the next reconciliation will retry"
			return s, fmt.Errorf("gateway: reconcile %s: lookup: %w", s.Operation[:16], err)
		}
		s.Reason = "the system of record shows that the operation did not execute; its reservation is released"
		if executed {
			s.Reason = "the system of record shows that the operation executed; its reservation is committed"
		}
	}
	s.Outcome = OutcomeReleased
	settle := g.store.Release
	result := receipt.ResultNotExecuted
	if executed {
		s.Outcome, settle, result = OutcomeCommitted, g.store.Commit, receipt.ResultExecuted
	}
	if err := settle(ctx, r.ID); err != nil {
		if errors.Is(err, state.ErrNotFound) { // settled meanwhile, by another replica
			return Settlement{}, nil
		}
		s.Outcome = OutcomeUnsettled
		return s, err
	}
	if total { // the receipt is the operation's budget reservation's
		return s, nil
	}
	_, err = g.store.Append(context.WithoutCancel(ctx), receipt.Receipt{
		Owner:     owner,
		Time:      g.now().UTC(),
		MandateID: state.AccountMandate(r.Account),
		Action:    action,
		Verdict:   intent.Allow,
		Operation: s.Operation,
		Result:    result,
		Message:   "Reconciled after a crash: " + s.Reason + ".",
	})
	if err != nil {
		return s, fmt.Errorf("gateway: reconcile %s: receipt not stored: %w", s.Operation[:16], err)
	}
	return s, nil
}
