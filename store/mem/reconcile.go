package mem

import (
	"context"
	"time"

	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/state"
)

var _ state.Reconciler = (*Store)(nil)

// OpenReservations implements state.Reconciler: the open reservations
// made before before, by the Store's clock.
func (s *Store) OpenReservations(ctx context.Context, before time.Time) ([]state.Reservation, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []state.Reservation
	for id, r := range s.reserved {
		if r.since.Before(before) {
			out = append(out, state.Reservation{ID: id, Account: r.account, Since: r.since,
				Amount: intent.Money{Currency: s.accounts[r.account].currency, Amount: r.amount}})
		}
	}
	return out, nil
}

// Consumed implements state.Reconciler.
func (s *Store) Consumed(ctx context.Context, key string) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.used[key]
	return ok, nil
}
