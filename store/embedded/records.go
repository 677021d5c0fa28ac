package embedded

import (
	"context"
	"encoding/binary"
	"slices"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/intentplane/intentplane/core/state"
)

var _ state.Records = (*Store)(nil)

// bucketRecords holds state.Records: each value is its expiry (Unix
// nanoseconds, big-endian) followed by the value. The bucket is made by
// the first Keep, so files written before it existed open unchanged.
var bucketRecords = []byte("records")

// Keep implements state.Records, durably: the value is on disk when Keep
// returns.
func (s *Store) Keep(ctx context.Context, k string, value []byte, expires time.Time) ([]byte, time.Time, error) {
	rk, err := key('r', k)
	if err != nil {
		return nil, time.Time{}, err
	}
	var kept []byte
	keptExp := expires.UTC()
	err = s.update(ctx, func(tx *bolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists(bucketRecords)
		if err != nil {
			return err
		}
		if v, exp, ok := decodeRecord(b.Get(rk)); ok && s.now().Before(exp) {
			kept, keptExp = slices.Clone(v), exp
			return nil
		}
		kept = slices.Clone(value)
		v := binary.BigEndian.AppendUint64(nil, recordNanos(keptExp))
		return b.Put(rk, append(v, value...))
	})
	if err != nil {
		return nil, time.Time{}, err
	}
	return kept, keptExp, nil
}

// Kept implements state.Records.
func (s *Store) Kept(ctx context.Context, k string) ([]byte, time.Time, bool, error) {
	rk, err := key('r', k)
	if err != nil {
		return nil, time.Time{}, false, err
	}
	var (
		val []byte
		exp time.Time
		ok  bool
	)
	err = s.view(ctx, func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketRecords)
		if b == nil {
			return nil
		}
		var v []byte
		if v, exp, ok = decodeRecord(b.Get(rk)); ok && s.now().Before(exp) {
			val = slices.Clone(v)
		} else {
			ok = false
		}
		return nil
	})
	if err != nil || !ok {
		return nil, time.Time{}, false, err
	}
	return val, exp, true, nil
}

// recordNanos is how the expiry of a record or an entry is kept:
// state.UnixNano, as decodeRecord reads it (signed).
func recordNanos(t time.Time) uint64 {
	return uint64(state.UnixNano(t))
}

func decodeRecord(v []byte) ([]byte, time.Time, bool) {
	if len(v) < 8 {
		return nil, time.Time{}, false
	}
	return v[8:], time.Unix(0, int64(binary.BigEndian.Uint64(v))).UTC(), true
}
