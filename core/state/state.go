package state

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/intentplane/intentplane/core/receipt"
)

// MaxKeyLen is the longest key, in bytes, that every Store accepts (an
// account, a reservation id, a single-use key or a record lock). A longer
// key is refused with ErrKeyTooLong.
const MaxKeyLen = 2048

// Errors returned by Nonces and Locks, and by any Store method given a key
// longer than MaxKeyLen.
var (
	// ErrReplayed: Consume of a key already consumed.
	ErrReplayed = errors.New("state: already consumed")
	// ErrHeld: Hold of a record another holder holds.
	ErrHeld = errors.New("state: record held by another operation")
	// ErrKeyTooLong: a key longer than MaxKeyLen.
	ErrKeyTooLong = errors.New("state: key longer than MaxKeyLen")
)

// HeldError is the error Hold returns when another holder holds the key:
// it wraps ErrHeld (errors.Is(err, ErrHeld) holds) and says when that
// hold expires, so that whoever is refused can be told when the record is
// free again even if its holder crashed.
type HeldError struct {
	// Until is when the other holder's hold expires, in UTC by the
	// store's clock (the database server's for PostgreSQL); zero if the
	// store could not tell (the hold was given back meanwhile).
	Until time.Time
}

func (e *HeldError) Error() string {
	if e.Until.IsZero() {
		return ErrHeld.Error()
	}
	return ErrHeld.Error() + " until " + e.Until.UTC().Format(time.RFC3339)
}

// Unwrap returns ErrHeld.
func (e *HeldError) Unwrap() error { return ErrHeld }

// Nonces are single-use keys: operation nonces ("op:" and the operation
// hash) and approval ids.
type Nonces interface {
	// Consume marks key as used, once: a second Consume of the same key
	// returns ErrReplayed, even concurrently and across processes sharing
	// the store. After expires the key can no longer be valid and the store
	// may forget it.
	Consume(ctx context.Context, key string, expires time.Time) error
	// Unconsume makes a consumed key usable again. The gateway calls it
	// only when it knows that what the key guarded did not happen (the
	// system of record refused the operation), and only for a key its own
	// Consume took, so that no one else can hold it meanwhile. Unconsume
	// of a key not consumed returns nil.
	Unconsume(ctx context.Context, key string) error
	// Consumed reports whether key was consumed and not yet forgotten (or
	// given back). It only reads: the gateway asks it before a step-up, so
	// that no one is asked to approve an operation that already executed,
	// and reconciliation asks it after a crash.
	Consumed(ctx context.Context, key string) (bool, error)
}

// Locks hold records (a bill, a vendor's bank account) for one operation at
// a time, across every gateway that shares the store.
type Locks interface {
	// Hold takes key for holder until ttl from now. It returns a
	// *HeldError (wrapping ErrHeld, with the hold's expiry) if another
	// holder holds key and its hold has not expired; a hold past
	// its ttl is taken over, so that a crashed holder cannot hold a record
	// for ever. Hold by the holder that holds key renews it.
	Hold(ctx context.Context, key, holder string, ttl time.Duration) error
	// Unhold gives key back if holder holds it; otherwise (expired and
	// taken over, or never held) it returns nil and changes nothing.
	Unhold(ctx context.Context, key, holder string) error
}

// Store is the gateway's state. Implementations must be safe for
// concurrent use (across processes, for shared stores); package
// store/storetest holds the conformance suite every Store passes.
type Store interface {
	Ledger
	Nonces
	Locks
	receipt.Log
}

// CheckKeys returns an error wrapping ErrKeyTooLong if a key is longer than
// MaxKeyLen bytes, for stores to call first.
func CheckKeys(keys ...string) error {
	for _, k := range keys {
		if len(k) > MaxKeyLen {
			return fmt.Errorf("%w: %d bytes", ErrKeyTooLong, len(k))
		}
	}
	return nil
}

// UnixNano is t.UnixNano() saturated to the range int64 nanoseconds hold
// (the years 1678 to 2262), for stores that keep an expiry as a number:
// t.UnixNano() itself overflows outside it, so that an expiry in the year
// 9999 (a plausible "never expires") came out in the past and a sweep
// forgot a used key, or a kept mandate read back as expired.
func UnixNano(t time.Time) int64 {
	switch {
	case t.After(maxNano):
		return math.MaxInt64
	case t.Before(minNano):
		return math.MinInt64
	}
	return t.UnixNano()
}

// The times int64 Unix nanoseconds can hold.
var maxNano, minNano = time.Unix(0, math.MaxInt64), time.Unix(0, math.MinInt64)
