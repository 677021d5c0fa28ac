package gateway

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
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
	// Mandate is the id of the mandate whose budget held the amount
	// (state.AccountMandate of the reservation's account); empty for a
	// running total's share.
	Mandate string
	// Total is, for a running total's share of the operation, the parts
	// of the total's account (state.ParseTotalAccount: the owner, the
	// pack, the total's name, the currency, the period and the values it
	// is kept by); nil otherwise. Parts may hold any byte: quote them
	// before printing.
	Total []string
	// Outcome is one of the Outcome constants.
	Outcome string
	// Reason explains the outcome for people.
	Reason string
}

// TotalName returns the name of the running total a total's share was
// held on (quoted, as Go quotes strings, if it is not printable), or ""
// for a budget reservation or a total whose account is a digest.
func (s Settlement) TotalName() string {
	if len(s.Total) < 5 {
		return ""
	}
	return printable(s.Total[2])
}

// TotalKey returns the parts of the running total's account a total's
// share was held on, for logs and reports: owner, pack, currency, period
// and the values it is kept by ("by"), as name=value separated by spaces,
// a value quoted as Go quotes strings when it is empty, holds a space, an
// equals sign or a quote, or is not printable (so a NUL byte reads \x00,
// never as it is); the digest of a digest account; "" for a budget
// reservation.
func (s Settlement) TotalKey() string {
	p := s.Total
	if len(p) < 5 {
		return strings.Join(p, " ")
	}
	var b strings.Builder
	for i, name := range []string{"owner", "pack", "currency", "period"} {
		v := p[[]int{0, 1, 3, 4}[i]]
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(name + "=" + keyPart(v))
	}
	for _, v := range p[5:] {
		b.WriteString(" by=" + keyPart(v))
	}
	return b.String()
}

// keyPart returns v as TotalKey writes it.
func keyPart(v string) string {
	if v == "" || strings.ContainsAny(v, " =\"") {
		return strconv.Quote(v)
	}
	return printable(v)
}

// printable returns s, or s quoted if quoting changes it.
func printable(s string) string {
	if q := strconv.Quote(s); q[1:len(q)-1] != s {
		return q
	}
	return s
}

// The outcomes of a Settlement.
const (
	// OutcomeCommitted: the executor's record shows that the operation
	// executed; the amount is now spent.
	OutcomeCommitted = "committed"
	// OutcomeReleased: the operation did not execute (its nonce was never
	// consumed, or the executor's record shows nothing); the amount is
	// available again, and the operation can be decided again (or, where
	// that is not yet safe, is refused with execution.not_executed).
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
//     if Lookup says the operation executed (its nonce stays consumed: a
//     retry is refused as execution.replayed), released otherwise;
//   - otherwise, or if Lookup fails, it stays open (OutcomeUnsettled).
//
// When Lookup says the operation did not execute, its nonce is given back,
// so that the identical operation can be decided again (with new
// approvals: those it consumed stay consumed), if no execution of it can
// still reach the system of record after Lookup looked: the action's
// contract holds records (contract.Contract.Exclusive), whose hold the
// crashed decision took before it reserved and which keeps every decision
// on those records, a retry included, out until it expires (LockTTL, the
// bound every gateway relies on for an execution to finish); or the
// reservation was made more than LockTTL ago. Of several reconciliations
// settling one reservation at once, only one gives its nonce back
// (state.SettleKey). Otherwise the nonce stays consumed and
// state.NotExecutedKey is consumed, so that a retry is refused as
// execution.not_executed ("did not execute"), not as replayed.
//
// An operation's reservations on running totals (contract.Total) are
// settled the same way, each on its own; the receipt is appended for its
// budget reservation only.
//
// Each operation settled appends a receipt to its owner's chain (result
// executed or not_executed, with the reason as message). (Record locks
// are not reconciled: a crashed holder's hold expires, and until then it
// keeps out an execution it may have left in flight.) Reservations
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
	if total {
		s.Total, _ = state.ParseTotalAccount(r.Account)
	} else {
		s.Mandate = state.AccountMandate(r.Account)
	}
	consumed, err := g.store.Consumed(ctx, state.NonceKey(hash))
	if err != nil {
		return s, err
	}
	executed, known, err := g.lookupOutcome(ctx, &s, action, owner, hash, consumed)
	if !known {
		return s, err
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
	err = g.settled(ctx, &s, r, hash, consumed && !executed, result)
	return s, err
}

// lookupOutcome finds whether the operation of s (action, owner, hash)
// executed: not if its nonce was never consumed, else as its pack's
// executor's idempotency record says (Settler). known is false when it
// cannot tell (no pack, no record, the lookup failed): s is then left
// unsettled, with the reason, and the lookup's error returned.
func (g *Gateway) lookupOutcome(ctx context.Context, s *Settlement, action intent.Action, owner intent.Owner, hash intent.OperationHash, consumed bool) (executed, known bool, err error) {
	rt := g.contracts[action]
	switch {
	case !consumed:
		s.Reason = "the operation never reached its executor (its nonce was not consumed); its reservation is released"
		return false, true, nil
	case rt == nil:
		s.Outcome, s.Reason = OutcomeUnsettled, "no pack of this gateway has the action, so its executor cannot be asked"
		return false, false, nil
	}
	st, ok := rt.pack.Executor.(Settler)
	if !ok {
		s.Outcome, s.Reason = OutcomeUnsettled, "the outcome is unknown and the pack's executor keeps no idempotency record; settle it by hand"
		return false, false, nil
	}
	executed, err = st.Lookup(ctx, owner, action, hash)
	if err != nil {
		s.Outcome, s.Reason = OutcomeUnsettled, "the executor's idempotency record could not be read; the next reconciliation will retry"
		return false, false, fmt.Errorf("gateway: reconcile %s: lookup: %w", s.Operation[:16], err)
	}
	s.Reason = "the system of record shows that the operation did not execute; its reservation is released"
	if executed {
		s.Reason = "the system of record shows that the operation executed; its reservation is committed"
	}
	return executed, true, nil
}

// settled finishes the settlement s of the budget reservation r of the
// operation hash: gives back the nonce of an operation that was sent but
// did not execute (giveBack), then appends the reconciliation's receipt
// with result.
func (g *Gateway) settled(ctx context.Context, s *Settlement, r Reservation, hash intent.OperationHash, giveBack bool, result string) error {
	if giveBack {
		var err error
		if s.Reason, err = g.giveBack(ctx, g.contracts[s.Action], r, hash); err != nil {
			s.Reason += "; " + err.Error()
			g.log.Error("reconcile: the nonce of an operation that did not execute could not be given back or marked", "operation", s.Operation, "err", err)
		}
	}
	_, err := g.store.Append(context.WithoutCancel(ctx), receipt.Receipt{
		Owner:     s.Owner,
		Time:      g.now().UTC(),
		MandateID: state.AccountMandate(r.Account),
		Action:    s.Action,
		Verdict:   intent.Allow,
		Operation: s.Operation,
		Result:    result,
		Message:   "Reconciled after a crash: " + s.Reason + ".",
	})
	if err != nil {
		return fmt.Errorf("gateway: reconcile %s: receipt not stored: %w", s.Operation[:16], err)
	}
	return nil
}

// How long the keys reconciliation consumes are kept: a SettleKey while
// another reconciliation may still act on the reservation it listed, a
// NotExecutedKey at least as long as the nonce it explains (the mandate's
// lifetime, which mandates keep well under a year).
const (
	settleKeyTTL      = 30 * 24 * time.Hour
	notExecutedKeyTTL = 400 * 24 * time.Hour
)

// giveBack settles the nonce of an operation whose reservation r was just
// released because the system of record showed it had not executed (see
// Reconcile), and returns the settlement's reason. The nonce is given back
// when nothing can execute the operation before an execution the crash
// may have left in flight is over, else kept consumed with the
// NotExecutedKey.
func (g *Gateway) giveBack(ctx context.Context, rt *route, r Reservation, hash intent.OperationHash) (string, error) {
	const released = "the system of record shows that the operation did not execute; its reservation is released"
	now := g.now()
	held := rt != nil && len(rt.contract.Exclusive) > 0
	if !r.Since.IsZero() && (held || r.Since.Add(g.lockTTL).Before(now)) {
		err := g.store.Consume(ctx, state.SettleKey(r), now.Add(settleKeyTTL))
		if errors.Is(err, state.ErrReplayed) { // another reconciliation settles this reservation
			return released + "; another reconciliation gives its nonce back", nil
		}
		if err == nil {
			err = g.store.Unconsume(ctx, state.NonceKey(hash))
		}
		if err == nil {
			why := "its records stay held until the crashed decision's hold expires"
			if !held {
				why = "it was reserved more than " + g.lockTTL.String() + " ago"
			}
			return released + ", and its nonce given back (" + why + "): the identical operation can be decided again, with new approvals", nil
		}
		// Kept consumed: marked below, so that a retry learns the truth.
		g.log.Error("reconcile: nonce not given back", "operation", hex.EncodeToString(hash[:]), "err", err)
	}
	err := g.store.Consume(ctx, state.NotExecutedKey(hash), now.Add(notExecutedKeyTTL))
	if err != nil && !errors.Is(err, state.ErrReplayed) {
		return released + "; its nonce stays consumed", fmt.Errorf("gateway: reconcile: mark not executed: %w", err)
	}
	return released + "; its nonce stays consumed, as an execution cut short could still reach the system of record: a retry is refused as not executed", nil
}
