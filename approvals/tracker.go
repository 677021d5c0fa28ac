package approvals

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/intentplane/intentplane/core/approval"
	"github.com/intentplane/intentplane/core/intent"
)

// TrackerConfig configures a Tracker. The zero value of each optional
// field means the default stated on it.
type TrackerConfig struct {
	// Currency is the ISO 4217 code of the mandate's budget, set on every
	// request whose Currency is empty, so that the page shows amounts with
	// it; empty shows amounts without a currency.
	Currency string
	// Until is the mandate's expiry: rejections are remembered until then,
	// and forgotten after (an operation names its mandate, so none of it
	// can execute later). Zero means rejections are never remembered.
	Until time.Time
	// Now returns the current time; nil means time.Now.
	Now func() time.Time
	// Logger receives a line when a webhook missed a request that is on
	// the page; nil means discard.
	Logger *slog.Logger
}

// Tracker is a front door's memory of its step-ups on a Channel: the open
// request of each operation hash, so that the agent's second call of the
// same operation finds the approvals given on the page instead of opening
// a second request, and the operations a person rejected. A rejection is
// final for the mandate's life: asking again is refused without a new
// request, so that approvers are not worn down. Its Request and Await
// methods are what mcpproxy.Approvals asks for. It is safe for concurrent
// use.
type Tracker struct {
	ch    Channel
	cfg   TrackerConfig
	now   func() time.Time
	log   *slog.Logger
	mu    sync.Mutex
	byOp  map[intent.OperationHash]Ticket
	nopes map[intent.OperationHash]string // rejected operations → by which request and whom
}

// NewTracker returns a Tracker over ch.
func NewTracker(ch Channel, cfg TrackerConfig) *Tracker {
	t := &Tracker{ch: ch, cfg: cfg, now: cfg.Now, log: cfg.Logger,
		byOp: map[intent.OperationHash]Ticket{}, nopes: map[intent.OperationHash]string{}}
	if t.now == nil {
		t.now = time.Now
	}
	if t.log == nil {
		t.log = slog.New(slog.DiscardHandler)
	}
	return t
}

// Request submits r to the channel (with the configured currency when r has
// none), or returns the link of the request already open for the same
// operation. It returns an error wrapping approval.ErrRejected, without a
// new request, for an operation a person rejected; one wrapping
// approval.ErrTooManyRequests (and ErrTooMany) when the channel holds as
// many pending requests as it accepts; and the channel's error otherwise,
// except ErrNotDelivered for a request that is on the page anyway.
func (t *Tracker) Request(ctx context.Context, r approval.Request) (link string, err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := t.rejectedLocked(r.Hash); err != nil {
		return "", err
	}
	now := t.now()
	for op, tk := range t.byOp {
		if !now.Before(tk.ExpiresAt) {
			delete(t.byOp, op)
		}
	}
	if tk, ok := t.byOp[r.Hash]; ok {
		return tk.URL, nil
	}
	if r.Currency == "" {
		r.Currency = t.cfg.Currency
	}
	tk, err := t.ch.Request(ctx, r)
	if err != nil {
		if errors.Is(err, ErrTooMany) {
			return "", fmt.Errorf("%w: %w", approval.ErrTooManyRequests, err)
		}
		if !errors.Is(err, ErrNotDelivered) || tk.ID == "" {
			return "", err
		}
		// The webhook missed it, but the request is on the page.
		t.log.Warn("approval request not delivered to the webhook; it is on the page", "id", tk.ID, "err", err)
	}
	t.byOp[r.Hash] = tk
	return tk.URL, nil
}

// Await returns the approvals given for op once its request is approved
// (waiting up to wait for it, as the package-level Await does), none while
// it is pending or when there is no live request, and an error wrapping
// approval.ErrRejected, naming the request and who rejected it, when a
// person rejected it. A rejected, expired or refused request is forgotten,
// so that a later call opens a new one (a rejected operation's is refused
// until Until).
func (t *Tracker) Await(ctx context.Context, op intent.OperationHash, wait time.Duration) ([]approval.Approval, error) {
	t.mu.Lock()
	if err := t.rejectedLocked(op); err != nil {
		t.mu.Unlock()
		return nil, err
	}
	tk, ok := t.byOp[op]
	t.mu.Unlock()
	if !ok {
		return nil, nil
	}
	out, err := Await(ctx, t.ch, tk.ID, wait)
	if errors.Is(err, ErrNotFound) {
		t.forget(op, tk.ID)
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	switch out.Status {
	case StatusPending:
		return nil, nil
	case StatusApproved:
		if t.now().Before(out.ExpiresAt) {
			return out.Approvals, nil
		}
	case StatusRejected:
		who := ""
		for _, v := range out.Votes {
			if !v.Approve {
				who = v.Approver
			}
		}
		why := fmt.Sprintf("request %s, by %s", tk.ID, who)
		t.mu.Lock()
		if t.now().Before(t.cfg.Until) {
			t.nopes[op] = why
		}
		t.mu.Unlock()
		t.forget(op, tk.ID)
		return nil, fmt.Errorf("%w (%s)", approval.ErrRejected, why)
	}
	t.forget(op, tk.ID)
	return nil, nil
}

// rejectedLocked returns an error wrapping approval.ErrRejected if a person
// rejected op. t.mu is held.
func (t *Tracker) rejectedLocked(op intent.OperationHash) error {
	if !t.now().Before(t.cfg.Until) {
		clear(t.nopes) // the mandate expired: no operation of it can run
		return nil
	}
	if why, ok := t.nopes[op]; ok {
		return fmt.Errorf("%w (%s)", approval.ErrRejected, why)
	}
	return nil
}

// forget drops op's request if it is still the one named id.
func (t *Tracker) forget(op intent.OperationHash, id string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.byOp[op].ID == id {
		delete(t.byOp, op)
	}
}
