package admin

import (
	"context"
	"errors"
	"time"

	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/receipt"
	"github.com/intentplane/intentplane/core/state"
)

// ReconcilingStore is a gateway store that also lists its open
// reservations (state.Reconciler), as intentplane-mcp's store does.
type ReconcilingStore interface {
	state.Store
	state.Reconciler
}

// CountErrors returns st, counting in m each failure of one of its
// operations (intentplane_store_errors_total{op}, op the method's name in
// lower case: "reserve", "append", "consume", …). The answers a store
// gives by design are not failures: the sentinels of core/state (an
// exceeded budget, a consumed key, a held record, not found, …),
// receipt.ErrNotFound, and a context cancelled by the caller.
func (m *Metrics) CountErrors(st ReconcilingStore) ReconcilingStore {
	return countingStore{st: st, m: m}
}

// byDesign are the errors a store answers with by design.
var byDesign = []error{
	state.ErrExceeded, state.ErrCurrency, state.ErrNotFound, state.ErrDuplicate, state.ErrLimitMismatch,
	state.ErrReplayed, state.ErrHeld, state.ErrKeyTooLong, state.ErrNotReconcilable,
	receipt.ErrNotFound, context.Canceled,
}

var (
	_ state.DeferredLog   = countingStore{}
	_ state.BatchReserver = countingStore{}
	_ state.Settler       = countingStore{}
)

type countingStore struct {
	st ReconcilingStore
	m  *Metrics
}

// count counts err under op unless it is nil or an answer by design, and
// returns it.
func (c countingStore) count(op string, err error) error {
	if err == nil {
		return nil
	}
	for _, e := range byDesign {
		if errors.Is(err, e) {
			return err
		}
	}
	c.m.StoreFailed(op)
	return err
}

func (c countingStore) Reserve(ctx context.Context, account string, limit intent.Money, id string, amount intent.Money) error {
	return c.count("reserve", c.st.Reserve(ctx, account, limit, id, amount))
}

func (c countingStore) ReserveAll(ctx context.Context, rs []state.ReserveRequest) ([]state.Usage, []error) {
	us, errs := state.ReserveAll(ctx, c.st, rs)
	for _, err := range errs {
		c.count("reserve", err) //nolint:errcheck // counted; the caller gets errs
	}
	return us, errs
}

func (c countingStore) Settle(ctx context.Context, ids []string, commit bool) []error {
	op := "release"
	if commit {
		op = "commit"
	}
	errs := state.Settle(ctx, c.st, ids, commit)
	for _, err := range errs {
		c.count(op, err) //nolint:errcheck // counted; the caller gets errs
	}
	return errs
}

func (c countingStore) Commit(ctx context.Context, id string) error {
	return c.count("commit", c.st.Commit(ctx, id))
}

func (c countingStore) Release(ctx context.Context, id string) error {
	return c.count("release", c.st.Release(ctx, id))
}

func (c countingStore) Usage(ctx context.Context, account string) (state.Usage, error) {
	u, err := c.st.Usage(ctx, account)
	return u, c.count("usage", err)
}

func (c countingStore) Consume(ctx context.Context, key string, expires time.Time) error {
	return c.count("consume", c.st.Consume(ctx, key, expires))
}

func (c countingStore) Unconsume(ctx context.Context, key string) error {
	return c.count("unconsume", c.st.Unconsume(ctx, key))
}

func (c countingStore) Consumed(ctx context.Context, key string) (bool, error) {
	ok, err := c.st.Consumed(ctx, key)
	return ok, c.count("consumed", err)
}

func (c countingStore) Hold(ctx context.Context, key, holder string, ttl time.Duration) error {
	return c.count("hold", c.st.Hold(ctx, key, holder, ttl))
}

func (c countingStore) Unhold(ctx context.Context, key, holder string) error {
	return c.count("unhold", c.st.Unhold(ctx, key, holder))
}

func (c countingStore) Append(ctx context.Context, r receipt.Receipt) (receipt.Receipt, error) {
	out, err := c.st.Append(ctx, r)
	return out, c.count("append", err)
}

// AppendDeferred implements state.DeferredLog: the store's, or its Append
// when it has none. A deferred receipt whose write fails later is not
// counted (the store logs it).
func (c countingStore) AppendDeferred(ctx context.Context, r receipt.Receipt) error {
	if dl, ok := c.st.(state.DeferredLog); ok {
		return c.count("append", dl.AppendDeferred(ctx, r))
	}
	_, err := c.Append(ctx, r)
	return err
}

func (c countingStore) Receipts(ctx context.Context, owner intent.Owner, from uint64, limit int) ([]receipt.Receipt, error) {
	rs, err := c.st.Receipts(ctx, owner, from, limit)
	return rs, c.count("receipts", err)
}

func (c countingStore) OpenReservations(ctx context.Context, before time.Time) ([]state.Reservation, error) {
	rs, err := c.st.OpenReservations(ctx, before)
	return rs, c.count("open_reservations", err)
}
