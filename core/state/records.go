package state

import (
	"context"
	"time"
)

// Records keeps small values that must outlive a process, such as the
// mandate a gateway issued at start, under opaque keys (any bytes, at most
// MaxKeyLen). Stores that survive a restart (embedded, PostgreSQL) keep
// them durably and share them across every process using the same store.
// It is optional: a Store need not implement it.
type Records interface {
	// Keep stores value under key unless key holds a value that has not
	// expired (expires is compared with the store's clock, UTC), and
	// returns the value key holds afterwards with its expiry: value and
	// expires when it was stored, or the value kept earlier. Two callers
	// keeping under one key at once, even in two processes, get the same
	// answer. A key longer than MaxKeyLen is an error wrapping
	// ErrKeyTooLong.
	Keep(ctx context.Context, key string, value []byte, expires time.Time) (kept []byte, keptExpires time.Time, err error)
	// Kept returns the value under key and its expiry, or ok false when key
	// holds none or an expired one.
	Kept(ctx context.Context, key string) (value []byte, expires time.Time, ok bool, err error)
}
