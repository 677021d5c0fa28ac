package main

import (
	"context"
	"log/slog"
	"time"

	"github.com/intentplane/intentplane/core/gateway"
	"github.com/intentplane/intentplane/core/state"
)

// reconcileGrace is how old a reservation must be, on a shared
// (PostgreSQL) store, for the start-up reconciliation to settle it: the
// other replicas may have decisions in flight, and an execution may take
// long (it must exceed the longest execution, like a record lock's TTL).
const reconcileGrace = 10 * time.Minute

// reconcileAtStart settles the reservations a crash of this gateway (or of
// a replica) left open, before any decision is served, and logs each
// settlement. On the embedded store, which no other process can hold,
// every open reservation is settled; on PostgreSQL those older than
// reconcileGrace; the in-memory store starts empty. A failure is logged,
// not fatal: what is not settled stays held, as before.
func reconcileAtStart(ctx context.Context, gw *gateway.Gateway, kind string, log *slog.Logger) {
	before := time.Now()
	switch kind {
	case "", "mem":
		return
	case "postgres":
		before = before.Add(-reconcileGrace)
	}
	rep, err := gw.Reconcile(ctx, before)
	for _, s := range rep.Settlements {
		log.Warn("reconciled a reservation left open by a crash", append([]any{"outcome", s.Outcome, "operation", s.Operation,
			"action", s.Action, "owner", s.Owner}, append(heldBy(s), "reason", s.Reason)...)...)
	}
	if err != nil {
		log.Error("start-up reconciliation incomplete", "err", err)
	}
}

// heldBy returns the log attributes naming what a settled reservation held
// the amount on: "mandate" and its id for a budget, or "total" (the
// running total's name) and "total_key" (its key, printable) for a
// total's share.
func heldBy(s gateway.Settlement) []any {
	if s.Total == nil {
		return []any{"mandate", s.Mandate}
	}
	return []any{"total", s.TotalName(), "total_key", s.TotalKey()}
}

// OpenReservations forwards to the configured store, so that the gateway
// over a *store can reconcile.
func (s *store) OpenReservations(ctx context.Context, before time.Time) ([]state.Reservation, error) {
	rs, ok := s.Store.(state.Reconciler)
	if !ok {
		return nil, state.ErrNotReconcilable
	}
	return rs.OpenReservations(ctx, before)
}
