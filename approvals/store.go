package approvals

import (
	"context"
	"time"
)

// Store keeps what the approval page must not lose in a restart: requests
// (open, approved, rejected), page sessions, recorded call-backs and the
// Tracker's memory (the open request of each operation, the rejected
// operations). It is the consumer's view of a gateway store: mem, embedded
// and PostgreSQL (store/...) implement it with these method names and plain
// types, so they need not import this package. Entries live in spaces (the
// Space constants); a key is opaque bytes (at most state.MaxKeyLen), a
// value an encoding of this package's choosing. Its methods are called
// concurrently. approvals/approvalstest is the conformance suite.
//
// What is kept where, and what a restart keeps, is in docs/approvals.md
// ("What a restart keeps").
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
	// SwapEntry replaces the entry under (space, key) with value, until
	// expires (UTC), only if an unexpired entry is there and its value is
	// exactly old (byte for byte), as one atomic step across every
	// process sharing the store (compare-and-swap). swapped is false, with
	// a nil error, when the entry is missing, expired or holds anything
	// else; nothing is written then.
	SwapEntry(ctx context.Context, space, key string, old, value []byte, expires time.Time) (swapped bool, err error)
}

// The spaces the approval page and the Tracker keep their entries in.
const (
	// SpaceRequests holds each request by its id, until Config.Retain
	// after it expires.
	SpaceRequests = "approvals/requests"
	// SpaceSessions holds each sign-in under a SHA-256 of its session
	// token (never the token), until it expires.
	SpaceSessions = "approvals/sessions"
	// SpaceCallbacks holds each call-back recorded on the page, with its
	// receipt, for Config.CallbackRetain.
	SpaceCallbacks = "approvals/callbacks"
	// SpaceOperations holds the Tracker's open request of each operation
	// hash, until the request expires.
	SpaceOperations = "approvals/operations"
	// SpaceRejections holds the operations a person rejected, until
	// TrackerConfig.Until.
	SpaceRejections = "approvals/rejections"
)
