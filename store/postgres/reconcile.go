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
// made before before, a time of the gateway's clock (Config.Now). A
// reservation is stamped with the database server's clock when it is
// made, so the two are compared by age: a reservation is listed if it is
// older than Now() - before by the database's clock, and its Since is
// given back on the gateway's clock, so that a skew between the two
// clocks shifts neither.
func (s *Store) OpenReservations(ctx context.Context, before time.Time) ([]state.Reservation, error) {
	var out []state.Reservation
	now := s.cfg.Now()
	age := now.Sub(before)
	err := s.do(ctx, "open reservations", func(ctx context.Context) error {
		rows, err := s.pool.Query(ctx, `SELECT r.id, r.account, r.amount, a.currency, (now() - r.created_at) AS age
			FROM budget_reservations r JOIN budget_accounts a ON a.account = r.account
			WHERE r.created_at < now() - $1 * interval '1 microsecond'`, age.Microseconds())
		if err != nil {
			return err
		}
		out, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (state.Reservation, error) {
			var r state.Reservation
			var id, account []byte // opaque keys: bytea
			var amount int64
			var since time.Duration
			err := row.Scan(&id, &account, &amount, &r.Amount.Currency, &since)
			r.ID, r.Account, r.Amount.Amount, r.Since = string(id), string(account), intent.Amount(amount), now.Add(-since).UTC()
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
