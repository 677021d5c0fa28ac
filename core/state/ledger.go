package state

import (
	"context"
	"errors"

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
