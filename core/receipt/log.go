package receipt

import (
	"context"
	"errors"

	"github.com/intentplane/intentplane/core/intent"
)

// ErrNotFound is returned by Log.Receipts when the owner has no receipt at
// all. Stores translate their driver's "no rows" into it.
var ErrNotFound = errors.New("receipt: not found")

// Log stores receipt chains, one per owner. Stores implement it (store/mem,
// store/embedded, store/postgres); the gateway consumes it. Its methods may
// be called concurrently.
type Log interface {
	// Append links r after the owner's current head (with Link) and stores
	// it, atomically with respect to every other Append for the same owner,
	// across replicas. It returns the receipt as stored (with Seq, Prev and
	// Hash set). The Seq, Prev and Hash r carries are ignored.
	Append(ctx context.Context, r Receipt) (Receipt, error)
	// Receipts returns the owner's receipts with Seq >= from, in Seq order,
	// at most limit of them (0 means all). It returns ErrNotFound if the
	// owner has no receipt at all, and an empty slice and nil if from is
	// beyond the owner's head.
	Receipts(ctx context.Context, owner intent.Owner, from uint64, limit int) ([]Receipt, error)
}
