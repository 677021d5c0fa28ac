package main

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/intentplane/intentplane/approvals"
	"github.com/intentplane/intentplane/cmd/intentplane-mcp/internal/admin"
	"github.com/intentplane/intentplane/core/approval"
)

// gatewayStore is the store as the gateway and the approval page use it:
// with [admin], its failures are counted (intentplane_store_errors_total).
func (a *app) gatewayStore() admin.ReconcilingStore {
	if a.metrics == nil {
		return a.store
	}
	return a.metrics.CountErrors(a.store)
}

// deferredLost returns, with [admin], what counts a deferred receipt the
// store's write lost (intentplane_store_errors_total{op="append_deferred"});
// nil without.
func (a *app) deferredLost() func() {
	if a.metrics == nil {
		return nil
	}
	return func() { a.metrics.StoreFailed("append_deferred") }
}

// watchPage counts, with [admin] and a page, the requests this proxy put on
// the approval page that are still pending
// (intentplane_pending_approvals{channel="page"}).
func (a *app) watchPage() {
	if a.metrics == nil || a.page == nil {
		return
	}
	pr := &pendingRequests{Channel: a.page.ch, ids: map[string]time.Time{}, now: time.Now}
	a.page.ch = pr
	a.metrics.WatchPending("page", pr.count)
}

// pendingRequests is an approvals.Channel that remembers the requests made
// through it until they are decided or expire.
type pendingRequests struct {
	approvals.Channel
	now func() time.Time

	mu  sync.Mutex
	ids map[string]time.Time // request id → expiry
}

// Request submits r and remembers its ticket.
func (p *pendingRequests) Request(ctx context.Context, r approval.Request) (approvals.Ticket, error) {
	t, err := p.Channel.Request(ctx, r)
	if err == nil {
		p.mu.Lock()
		p.ids[t.ID] = t.ExpiresAt
		p.mu.Unlock()
	}
	return t, err
}

// count returns how many remembered requests are still pending, and
// forgets the others (decided, expired, or unknown to the channel); one
// whose state cannot be read now is counted.
func (p *pendingRequests) count() int {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.now()
	for id, exp := range p.ids {
		if !now.Before(exp) {
			delete(p.ids, id)
			continue
		}
		o, err := p.Channel.Outcome(ctx, id)
		switch {
		case errors.Is(err, approvals.ErrNotFound):
			delete(p.ids, id)
		case err != nil:
			// Unknown for now: still counted.
		case o.Status != approvals.StatusPending:
			delete(p.ids, id)
		}
	}
	return len(p.ids)
}
