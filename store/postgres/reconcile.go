package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/state"
)

var _ state.Reconciler = (*Store)(nil)

// OpenReservations implements state.Reconciler: the open reservations
// made before before, by the database server's clock.
func (s *Store) OpenReservations(ctx context.Context, before time.Time) ([]state.Reservation, error) {
	var out []state.Reservation
	err := s.do(ctx, "open reservations", func(ctx context.Context) error {
		rows, err := s.pool.Query(ctx, `SELECT r.id, r.account, r.amount, a.currency, r.created_at
			FROM budget_reservations r JOIN budget_accounts a ON a.account = r.account
			WHERE r.created_at < $1`, before.UTC())
		if err != nil {
			return err
		}
		out, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (state.Reservation, error) {
			var r state.Reservation
			var id, account []byte // opaque keys: bytea
			var amount int64
			err := row.Scan(&id, &account, &amount, &r.Amount.Currency, &r.Since)
			r.ID, r.Account, r.Amount.Amount, r.Since = string(id), string(account), intent.Amount(amount), r.Since.UTC()
			return r, err
		})
		return err
	})
	return out, err
}

// Consumed implements state.Reconciler.
func (s *Store) Consumed(ctx context.Context, key string) (bool, error) {
	var ok bool
	err := s.do(ctx, "consumed", func(ctx context.Context) error {
		return s.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM consumed_keys WHERE key = $1)`, []byte(key)).Scan(&ok)
	})
	return ok, err
}
