package checkpoint

import (
	"context"
	"time"

	"github.com/intentplane/intentplane/core/state"
)

var _ state.Reconciler = (*Store)(nil)

// OpenReservations forwards to the wrapped store, so that a gateway over a
// Store can reconcile; it returns state.ErrNotReconcilable if the wrapped
// store is not a state.Reconciler.
func (s *Store) OpenReservations(ctx context.Context, before time.Time) ([]state.Reservation, error) {
	rs, ok := s.Store.(state.Reconciler)
	if !ok {
		return nil, state.ErrNotReconcilable
	}
	return rs.OpenReservations(ctx, before)
}
