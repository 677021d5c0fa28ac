package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/intentplane/intentplane/core/state"
)

var _ state.Records = (*Store)(nil)

// Keep implements state.Records in one statement: the row is inserted, or
// replaced when it expired by the gateway's clock (Config.Now), and the row that holds
// the key afterwards is returned, so that replicas keeping one key at once
// all get the first one's value. Errors other than ErrKeyTooLong wrap
// ErrUnavailable.
func (s *Store) Keep(ctx context.Context, key string, value []byte, expires time.Time) ([]byte, time.Time, error) {
	if err := state.CheckKeys(key); err != nil {
		return nil, time.Time{}, err
	}
	var kept []byte
	var exp time.Time
	err := s.do(ctx, "keep record", func(ctx context.Context) error {
		// The update of an unexpired row changes nothing but returns it.
		return s.pool.QueryRow(ctx, `
INSERT INTO records (key, value, expires) VALUES ($1, $2, $3)
ON CONFLICT (key) DO UPDATE SET
  value   = CASE WHEN records.expires <= $4 THEN excluded.value   ELSE records.value   END,
  expires = CASE WHEN records.expires <= $4 THEN excluded.expires ELSE records.expires END
RETURNING value, expires`, []byte(key), value, expires.UTC(), s.cfg.Now().UTC()).Scan(&kept, &exp)
	})
	if err != nil {
		return nil, time.Time{}, err
	}
	return kept, exp.UTC(), nil
}

// Kept implements state.Records.
func (s *Store) Kept(ctx context.Context, key string) ([]byte, time.Time, bool, error) {
	var val []byte
	var exp time.Time
	found := false
	err := s.do(ctx, "read record", func(ctx context.Context) error {
		err := s.pool.QueryRow(ctx, `SELECT value, expires FROM records WHERE key = $1 AND expires > $2`,
			[]byte(key), s.cfg.Now().UTC()).Scan(&val, &exp)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		found = err == nil
		return err
	})
	if err != nil || !found {
		return nil, time.Time{}, false, err
	}
	return val, exp.UTC(), true, nil
}
