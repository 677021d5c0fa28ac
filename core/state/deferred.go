package state

import (
	"context"

	"github.com/intentplane/intentplane/core/receipt"
)

// DeferredLog is implemented by a store that can append a receipt without
// the caller waiting until it is durable: the gateway uses it for the
// receipts of decisions that changed nothing (read-only actions, and every
// decision that executed nothing), so that they do not each wait for a
// sync of their own. Receipts of operations that executed, or may have,
// always go through Append. Implementations must be safe for concurrent
// use.
type DeferredLog interface {
	// AppendDeferred queues r to be linked after its owner's head and
	// stored, as Append does, in the order of every write made through
	// the store, and returns before r is durable (the store starts writing
	// it at once). Every write that returns after it has returned,
	// Append included, is durable only once r is. A crash before r is
	// written loses it; a write failure loses it too, and the store logs
	// it. It returns an error only for a receipt it refuses outright
	// (receipt.ErrInvalid, an owner too long) or a closed store.
	AppendDeferred(ctx context.Context, r receipt.Receipt) error
}
