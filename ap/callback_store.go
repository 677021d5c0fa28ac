package ap

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// CallbackEntries is the storage StoredCallbacks keeps call-backs in:
// spaces of opaque keys whose entries expire. The gateway's stores
// (store/mem, store/embedded, store/postgres) have these methods (they are
// approvals.Store's); the pack declares its own view so that it imports no
// store and no front door. Entries calls fn with every unexpired entry of
// space in key order and returns fn's first error. Called concurrently.
type CallbackEntries interface {
	PutEntry(ctx context.Context, space, key string, value []byte, expires time.Time) error
	Entries(ctx context.Context, space string, fn func(key string, value []byte) error) error
}

// FactCalledBy is the fact of a bank-detail change (ActionChangeVendorBank)
// that names who recorded the call-back it relies on (the iban parameter's
// called_by). An approval channel must not let that person be one of the
// change's approvers (approvals.Config.NotApprovers), so that four eyes
// are two people other than the one who called.
const FactCalledBy = "iban_called_by"

// SpaceCallbacks is the space of CallbackEntries that StoredCallbacks
// keeps its call-backs in.
const SpaceCallbacks = "ap/callbacks"

var _ Callbacks = StoredCallbacks{}

// StoredCallbacks is a Callbacks kept in the gateway's store: a call-back
// recorded before a restart, or on another replica sharing the store,
// still supports a bank-detail change. intentplane-mcp records into it the
// call-backs people record on the approval page. It is safe for
// concurrent use.
type StoredCallbacks struct {
	// Store keeps the call-backs. Required.
	Store CallbackEntries
	// Keep is how long after it was recorded a call-back is kept; zero
	// means DefaultCallbackValidity (a call-back older than the pack's
	// Config.CallbackValidity supports nothing anyway).
	Keep time.Duration
}

// storedCallback is a Callback as kept, JSON with a version.
type storedCallback struct {
	V        int `json:"v"`
	Callback `json:"callback"`
}

// Record keeps cb until Keep after cb.At. It refuses cb as CallbackMem.Record
// does; other errors are the store's.
func (s StoredCallbacks) Record(ctx context.Context, cb Callback) error {
	cb, err := cb.checked()
	if err != nil {
		return err
	}
	if s.Store == nil {
		return errors.New("ap: call-backs have no store")
	}
	keep := s.Keep
	if keep <= 0 {
		keep = DefaultCallbackValidity
	}
	b, err := json.Marshal(storedCallback{V: 1, Callback: cb})
	if err != nil {
		return err
	}
	key := cb.Company + "\x00" + cb.Number + "\x00" + cb.At.Format("20060102T150405.000000000Z") + "\x00" + cb.ID
	if err := s.Store.PutEntry(ctx, SpaceCallbacks, key, b, cb.At.Add(keep)); err != nil {
		return fmt.Errorf("ap: call-back not kept: %w", err)
	}
	return nil
}

// Callback implements Callbacks: the most recent call-back kept of company
// that confirmed number.
func (s StoredCallbacks) Callback(ctx context.Context, company, number string) (Callback, error) {
	if s.Store == nil {
		return Callback{}, ErrNoCallback
	}
	var best *Callback
	err := s.Store.Entries(ctx, SpaceCallbacks, func(_ string, b []byte) error {
		var rec storedCallback
		if json.Unmarshal(b, &rec) != nil || rec.V != 1 {
			return nil // not one of ours: it confirms nothing
		}
		cb := rec.Callback
		if cb.Company == company && cb.Number == number && (best == nil || !cb.At.Before(best.At)) {
			best = &cb
		}
		return nil
	})
	if err != nil {
		return Callback{}, fmt.Errorf("ap: reading the call-backs: %w", err)
	}
	if best == nil {
		return Callback{}, ErrNoCallback
	}
	return *best, nil
}
