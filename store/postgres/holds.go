package postgres

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/intentplane/intentplane/core/state"
)

// holdReq is one Hold (unhold false) or Unhold waiting for its batch.
type holdReq struct {
	key, holder string
	ttl         time.Duration
}

// Hold implements state.Locks: the row is inserted, or taken over if its
// hold expired or is the holder's own, or left alone. Expiry is measured
// by the database's clock, the same for every replica. Concurrent Holds
// of this process are written in one statement, keys sorted (two replicas
// holding the same keys wait for each other instead of deadlocking); a
// key asked twice in a batch is asked again alone.
func (s *Store) Hold(ctx context.Context, key, holder string, ttl time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := state.CheckKeys(key, holder); err != nil {
		return err
	}
	_, err := s.holds.run(holdReq{key: key, holder: holder, ttl: ttl}, s.cfg.MaxBatch, func(batch []*job[holdReq, struct{}]) {
		s.writeHolds(context.WithoutCancel(ctx), batch)
	})
	return err
}

func (s *Store) writeHolds(ctx context.Context, batch []*job[holdReq, struct{}]) {
	first, again := firstPerKey(batch)
	keys := sortedKeys(first)
	ks, hs, ttls := make([][]byte, len(keys)), make([][]byte, len(keys)), make([]int64, len(keys))
	for i, k := range keys {
		ks[i], hs[i], ttls[i] = []byte(k), []byte(first[k].in.holder), first[k].in.ttl.Microseconds()
	}
	taken := map[string]bool{}
	until := map[string]time.Time{}
	err := s.do(ctx, "hold", func(ctx context.Context) error {
		rows, err := s.pool.Query(ctx, `INSERT INTO record_locks (key, holder, expires)
			SELECT u.k, u.h, clock_timestamp() + u.t * interval '1 microsecond'
			  FROM unnest($1::bytea[], $2::bytea[], $3::bigint[]) AS u(k, h, t)
			ON CONFLICT (key) DO UPDATE SET holder = excluded.holder, expires = excluded.expires
			WHERE record_locks.holder = excluded.holder OR record_locks.expires <= clock_timestamp()
			RETURNING key`, ks, hs, ttls)
		if err != nil {
			return err
		}
		got, err := pgx.CollectRows(rows, pgx.RowTo[[]byte])
		if err != nil {
			return err
		}
		clear(taken)
		for _, k := range got {
			taken[string(k)] = true
		}
		if len(taken) == len(keys) {
			return nil
		}
		// Refused: one more read for the other holders' expiries.
		var refused [][]byte
		for _, k := range keys {
			if !taken[k] {
				refused = append(refused, []byte(k))
			}
		}
		rows, err = s.pool.Query(ctx, `SELECT key, expires - clock_timestamp() FROM record_locks WHERE key = ANY($1)`, refused)
		if err != nil {
			return err
		}
		clear(until)
		now := s.cfg.Now()
		var k []byte
		var left time.Duration
		_, err = pgx.ForEachRow(rows, []any{&k, &left}, func() error {
			until[string(k)] = now.Add(left).UTC()
			return nil
		})
		return err
	})
	for k, b := range first {
		switch {
		case err != nil:
			b.err = err
		case taken[k]:
			b.err = nil
		default:
			b.err = &state.HeldError{Until: until[k]}
		}
	}
	for _, b := range again {
		b.err = s.do(ctx, "hold", func(ctx context.Context) error { return s.holdOne(ctx, b.in) })
	}
}

// holdOne is Hold of one key in its own statement, for a key asked twice
// in a batch.
func (s *Store) holdOne(ctx context.Context, r holdReq) error {
	tag, err := s.pool.Exec(ctx, `INSERT INTO record_locks (key, holder, expires)
		VALUES ($1, $2, clock_timestamp() + $3 * interval '1 microsecond')
		ON CONFLICT (key) DO UPDATE SET holder = excluded.holder, expires = excluded.expires
		WHERE record_locks.holder = excluded.holder OR record_locks.expires <= clock_timestamp()`,
		[]byte(r.key), []byte(r.holder), r.ttl.Microseconds())
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		return s.held(ctx, r.key)
	}
	return nil
}

// held returns the *state.HeldError of a Hold refused on key, with the
// other holder's expiry: one more read, made only when a record is held.
// Its Until is zero if the hold was given back meanwhile. A hold's expiry
// is kept on the database server's clock; Until is on the gateway's
// (Config.Now): now plus what is left of the hold.
func (s *Store) held(ctx context.Context, key string) error {
	var left time.Duration
	err := s.pool.QueryRow(ctx, `SELECT expires - clock_timestamp() FROM record_locks WHERE key = $1`, []byte(key)).Scan(&left)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return &state.HeldError{}
	case err != nil:
		return err
	}
	return &state.HeldError{Until: s.cfg.Now().Add(left).UTC()}
}

// Unhold implements state.Locks. Concurrent Unholds of this process are
// deleted in one statement.
func (s *Store) Unhold(ctx context.Context, key, holder string) error {
	if err := state.CheckKeys(key, holder); err != nil {
		return err
	}
	_, err := s.unholds.run(holdReq{key: key, holder: holder}, s.cfg.MaxBatch, func(batch []*job[holdReq, struct{}]) {
		s.writeUnholds(context.WithoutCancel(ctx), batch)
	})
	return err
}

func (s *Store) writeUnholds(ctx context.Context, batch []*job[holdReq, struct{}]) {
	ks, hs := make([][]byte, len(batch)), make([][]byte, len(batch))
	for i, b := range batch {
		ks[i], hs[i] = []byte(b.in.key), []byte(b.in.holder)
	}
	err := s.do(ctx, "unhold", func(ctx context.Context) error {
		_, err := s.pool.Exec(ctx, `DELETE FROM record_locks r USING unnest($1::bytea[], $2::bytea[]) AS u(k, h)
			WHERE r.key = u.k AND r.holder = u.h`, ks, hs)
		return err
	})
	for _, b := range batch {
		b.err = err
	}
}

// firstPerKey returns the first job of each key in batch, and the jobs
// that ask a key again.
func firstPerKey[Out any](batch []*job[holdReq, Out]) (map[string]*job[holdReq, Out], []*job[holdReq, Out]) {
	first := map[string]*job[holdReq, Out]{}
	var again []*job[holdReq, Out]
	for _, b := range batch {
		if first[b.in.key] != nil {
			again = append(again, b)
			continue
		}
		first[b.in.key] = b
	}
	return first, again
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
