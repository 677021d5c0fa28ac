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

// ReserveRequest is one reservation of a batch: Amount held on Account
// under ID, against Limit, as Ledger.Reserve takes them.
type ReserveRequest struct {
	Account string
	Limit   intent.Money
	ID      string
	Amount  intent.Money
}

// BatchReserver is implemented by a ledger that can make reservations on
// several accounts and read those accounts back in one call (one round
// trip to a remote store): the gateway reserves an operation's running
// totals (step 5) through it when the store has it.
type BatchReserver interface {
	// ReserveAll makes each reservation of rs as Reserve would and
	// returns, for each, the account's usage after it (it included, and
	// possibly others made since, as a Usage call after Reserve would
	// show) and Reserve's error.
	ReserveAll(ctx context.Context, rs []ReserveRequest) ([]Usage, []error)
}

// ErrUsageUnread is wrapped by an error of ReserveAll when the reservation
// was made but the usage could not be read: the reservation is held.
var ErrUsageUnread = errors.New("state: reserved, but the usage was not read")

// ReserveAll reserves rs through l: in one call when l is a BatchReserver,
// otherwise by Reserve then Usage of each, in order, an error of Usage
// wrapping ErrUsageUnread. Wrappers of a store implement BatchReserver
// with it.
func ReserveAll(ctx context.Context, l Ledger, rs []ReserveRequest) ([]Usage, []error) {
	if b, ok := l.(BatchReserver); ok {
		return b.ReserveAll(ctx, rs)
	}
	us, errs := make([]Usage, len(rs)), make([]error, len(rs))
	for i, r := range rs {
		if errs[i] = l.Reserve(ctx, r.Account, r.Limit, r.ID, r.Amount); errs[i] != nil {
			continue
		}
		u, err := l.Usage(ctx, r.Account)
		if err != nil {
			errs[i] = fmt.Errorf("%w: %w", ErrUsageUnread, err)
		}
		us[i] = u
	}
	return us, errs
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
