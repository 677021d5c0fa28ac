package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/intentplane/intentplane/core/state"
)

// PutEntry keeps value under (space, key) until expires, replacing any
// entry there (the approval page's requests, sessions and call-backs:
// approvals.Store), shared by every replica. Errors other than
// state.ErrKeyTooLong wrap ErrUnavailable.
func (s *Store) PutEntry(ctx context.Context, space, key string, value []byte, expires time.Time) error {
	if err := state.CheckKeys(space, key); err != nil {
		return err
	}
	return s.do(ctx, "put entry", func(ctx context.Context) error {
		_, err := s.pool.Exec(ctx, `
INSERT INTO entries (space, key, value, expires) VALUES ($1, $2, $3, $4)
ON CONFLICT (space, key) DO UPDATE SET value = excluded.value, expires = excluded.expires`,
			[]byte(space), []byte(key), value, expires.UTC())
		return err
	})
}

// Entry returns the unexpired entry under (space, key).
func (s *Store) Entry(ctx context.Context, space, key string) ([]byte, bool, error) {
	var v []byte
	found := false
	err := s.do(ctx, "read entry", func(ctx context.Context) error {
		err := s.pool.QueryRow(ctx, `SELECT value FROM entries WHERE space = $1 AND key = $2 AND expires > $3`,
			[]byte(space), []byte(key), s.cfg.Now().UTC()).Scan(&v)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		found = err == nil
		return err
	})
	if err != nil {
		return nil, false, err
	}
	return v, found, nil
}

// Entries calls fn with every unexpired entry of space in key order, after
// reading them all.
func (s *Store) Entries(ctx context.Context, space string, fn func(key string, value []byte) error) error {
	var keys, vals [][]byte
	err := s.do(ctx, "list entries", func(ctx context.Context) error {
		keys, vals = nil, nil
		rows, err := s.pool.Query(ctx, `SELECT key, value FROM entries WHERE space = $1 AND expires > $2 ORDER BY key`, []byte(space), s.cfg.Now().UTC())
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var k, v []byte
			if err := rows.Scan(&k, &v); err != nil {
				return err
			}
			keys, vals = append(keys, k), append(vals, v)
		}
		return rows.Err()
	})
	if err != nil {
		return err
	}
	for i := range keys {
		if err := fn(string(keys[i]), vals[i]); err != nil {
			return err
		}
	}
	return nil
}

// DeleteEntry removes (space, key).
func (s *Store) DeleteEntry(ctx context.Context, space, key string) error {
	return s.do(ctx, "delete entry", func(ctx context.Context) error {
		_, err := s.pool.Exec(ctx, `DELETE FROM entries WHERE space = $1 AND key = $2`, []byte(space), []byte(key))
		return err
	})
}

// SwapEntry replaces the unexpired entry under (space, key) with value,
// until expires, only if its value is old: one conditional UPDATE, atomic
// across every replica. A retry after a lost answer finds value there and
// reports the swap it made (an entry already holding value is reported
// swapped: the state asked for holds). Errors other than state.ErrKeyTooLong wrap
// ErrUnavailable.
func (s *Store) SwapEntry(ctx context.Context, space, key string, old, value []byte, expires time.Time) (bool, error) {
	if err := state.CheckKeys(space, key); err != nil {
		return false, err
	}
	swapped := false
	err := s.do(ctx, "swap entry", func(ctx context.Context) error {
		tag, err := s.pool.Exec(ctx, `
UPDATE entries SET value = $4, expires = $5
WHERE space = $1 AND key = $2 AND (value = $3 OR value = $4) AND expires > $6`,
			[]byte(space), []byte(key), old, value, expires.UTC(), s.cfg.Now().UTC())
		swapped = err == nil && tag.RowsAffected() == 1
		return err
	})
	return swapped, err
}
