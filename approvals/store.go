package approvals

import (
	"context"
	"time"
)

// Store keeps what the approval page must not lose in a restart: requests
// (open, approved, rejected), page sessions and recorded call-backs. It is
// the consumer's view of a gateway store: mem, embedded and PostgreSQL
// (store/...) implement it with these method names and plain types, so they
// need not import this package. Entries live in spaces ("requests",
// "sessions", "callbacks"); a key is opaque bytes (at most
// state.MaxKeyLen), a value an encoding of this package's choosing.
// approvals/approvalstest is the conformance suite.
//
// The Server, the Tracker and the call-back registry do not use it yet
// (issue 11): until they do, a restart loses them.
type Store interface {
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
}

// The spaces the approval page keeps its entries in.
const (
	SpaceRequests  = "approvals/requests"
	SpaceSessions  = "approvals/sessions"
	SpaceCallbacks = "approvals/callbacks"
)
