package state

import (
	"context"
	"errors"
	"fmt"

	"github.com/intentplane/intentplane/core/intent"
)

// Errors returned by a Ledger.
var (
	// ErrExceeded: the reservation would take the account over its limit.
	ErrExceeded = errors.New("state: limit exceeded")
	// ErrCurrency: the amount is not in the limit's currency.
	ErrCurrency = errors.New("state: currency does not match the budget")
	// ErrNotFound: no open reservation has this id.
	ErrNotFound = errors.New("state: reservation not found")
	// ErrDuplicate: a reservation with this id already exists.
	ErrDuplicate = errors.New("state: reservation already exists")
	// ErrLimitMismatch: the limit differs from the one the account was
	// opened with.
	ErrLimitMismatch = errors.New("state: limit differs from the account's limit")
)

// Usage is what an account has spent and holds, in minor units of the
// account's currency.
type Usage struct {
	Committed intent.Amount
	Reserved  intent.Amount
}

// Ledger holds reservations per account (one account per mandate id).
// Implementations must be safe for concurrent use, across processes where
// they are shared: Reserve is atomic with respect to every other Reserve of
// the same account, so the sum of committed and reserved amounts never
// exceeds the limit.
//
// An account's currency and limit are those of its first reservation, for
// the ledger's lifetime: a later Reserve with another currency fails with
// ErrCurrency, with another limit amount with ErrLimitMismatch, so no
// caller can widen an account opened by another.
//
// A reservation id is unique among open reservations only: once committed
// or released, the id may be reserved again. The gateway reserves under the
// operation hash and relies on this: an operation whose reservation was
// released (a store failure, a spent approval) may be retried, and one that
// executed is refused by its single-use approval and op:<hash> keys.
type Ledger interface {
	// Reserve holds amount on account under id if committed + reserved +
	// amount <= limit.Amount. It returns ErrExceeded, ErrCurrency (amount
	// and limit differ in currency, or the account was opened in another
	// currency), ErrLimitMismatch (the account was opened with another
	// limit amount) or ErrDuplicate (a reservation id is open).
	Reserve(ctx context.Context, account string, limit intent.Money, id string, amount intent.Money) error
	// Commit turns the reservation id into spending. ErrNotFound if there
	// is no open reservation id.
	Commit(ctx context.Context, id string) error
	// Release drops the reservation id. ErrNotFound if there is no open
	// reservation id.
	Release(ctx context.Context, id string) error
	// Usage reports the account's committed and reserved amounts; an
	// unknown account has zero usage.
	Usage(ctx context.Context, account string) (Usage, error)
}

// UsageReserver is implemented by a ledger that can report an account's
// usage with a reservation, in one round trip to a remote store: the
// gateway reserves on each running total and reads it back (step 5's
// totals) through it when the store has it.
type UsageReserver interface {
	// ReserveUsage is Reserve followed by Usage of the same account: on
	// success it returns the account's usage after the reservation, which
	// it includes (and possibly others made since, as a Usage call after
	// Reserve would). It returns Reserve's errors.
	ReserveUsage(ctx context.Context, account string, limit intent.Money, id string, amount intent.Money) (Usage, error)
}

// ErrUsageUnread is wrapped by ReserveUsage's error when the reservation
// was made but the usage could not be read: the reservation is held.
var ErrUsageUnread = errors.New("state: reserved, but the usage was not read")

// ReserveUsage reserves amount on account under id through l and returns
// the account's usage after it: in one call when l is a UsageReserver,
// otherwise Reserve then Usage, an error of Usage then wrapping
// ErrUsageUnread. Wrappers of a store implement UsageReserver with it.
func ReserveUsage(ctx context.Context, l Ledger, account string, limit intent.Money, id string, amount intent.Money) (Usage, error) {
	if ur, ok := l.(UsageReserver); ok {
		return ur.ReserveUsage(ctx, account, limit, id, amount)
	}
	if err := l.Reserve(ctx, account, limit, id, amount); err != nil {
		return Usage{}, err
	}
	u, err := l.Usage(ctx, account)
	if err != nil {
		return Usage{}, fmt.Errorf("%w: %w", ErrUsageUnread, err)
	}
	return u, nil
}

// Settler is implemented by a ledger that can commit or release several
// reservations, on several accounts, in one call (one round trip to a
// remote store): the gateway settles an operation's budget reservation and
// those on its running totals through it when the store has it.
type Settler interface {
	// Settle commits (commit true) or releases each reservation of ids, as
	// Commit or Release would, and returns one error per id: nil,
	// ErrNotFound, or a failure.
	Settle(ctx context.Context, ids []string, commit bool) []error
}

// Settle settles ids through l: in one call when l is a Settler,
// otherwise by Commit or Release of each, in order. Wrappers of a store
// implement Settler with it.
func Settle(ctx context.Context, l Ledger, ids []string, commit bool) []error {
	if s, ok := l.(Settler); ok {
		return s.Settle(ctx, ids, commit)
	}
	errs := make([]error, len(ids))
	for i, id := range ids {
		if commit {
			errs[i] = l.Commit(ctx, id)
		} else {
			errs[i] = l.Release(ctx, id)
		}
	}
	return errs
}
