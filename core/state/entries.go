package state

import (
	"context"
	"time"
)

// Entries is a store's space of expiring entries: what the approval page
// must not lose in a restart (requests, page sessions, recorded
// call-backs, the approval Tracker's memory), and the call-backs the ap
// pack reads. Entries live in spaces (each user names its own, such as
// approvals.SpaceRequests); a key is opaque bytes (at most MaxKeyLen), a
// value an encoding of its user's choosing. mem, embedded and PostgreSQL
// (store/...) implement it; store/storetest.RunEntries is its conformance
// suite. Its methods are called concurrently.
type Entries interface {
	// PutEntry stores value under (space, key), replacing any entry there,
	// until expires (UTC); an expired entry is never returned.
	PutEntry(ctx context.Context, space, key string, value []byte, expires time.Time) error
	// Entry returns the entry under (space, key), or ok false when there
	// is none or it expired.
	Entry(ctx context.Context, space, key string) (value []byte, ok bool, err error)
	// Entries calls fn with every unexpired entry of space, in key order,
	// and stops at fn's first error, which it returns.
	Entries(ctx context.Context, space string, fn func(key string, value []byte) error) error
	// DeleteEntry removes (space, key); removing nothing is not an error.
	DeleteEntry(ctx context.Context, space, key string) error
	// SwapEntry replaces the entry under (space, key) with value, until
	// expires (UTC), only if an unexpired entry is there and its value is
	// exactly old (byte for byte), as one atomic step across every
	// process sharing the store (compare-and-swap). swapped is false, with
	// a nil error, when the entry is missing, expired or holds anything
	// else; nothing is written then.
	SwapEntry(ctx context.Context, space, key string, old, value []byte, expires time.Time) (swapped bool, err error)
}
