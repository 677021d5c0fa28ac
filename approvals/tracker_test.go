package approvals_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/intentplane/intentplane/approvals"
	"github.com/intentplane/intentplane/core/approval"
	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/store/mem"
)

// fakeChannel is an approvals.Channel whose outcomes the test sets.
type fakeChannel struct {
	mu       sync.Mutex
	n        int
	outcomes map[string]approvals.Outcome
	pending  []approval.Request
	err      error
}

func (f *fakeChannel) Request(ctx context.Context, p approval.Request) (approvals.Ticket, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.n++
	id := fmt.Sprintf("%032x", f.n)
	f.pending = append(f.pending, p)
	f.outcomes[id] = approvals.Outcome{ID: id, Status: approvals.StatusPending, Hash: p.Hash, ExpiresAt: t0.Add(time.Hour)}
	return approvals.Ticket{ID: id, URL: "http://page/requests/" + id, ExpiresAt: t0.Add(time.Hour)}, f.err
}

func (f *fakeChannel) Outcome(ctx context.Context, id string) (approvals.Outcome, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	o, ok := f.outcomes[id]
	if !ok {
		return approvals.Outcome{}, approvals.ErrNotFound
	}
	return o, nil
}

func (f *fakeChannel) Wait(ctx context.Context, id string) (approvals.Outcome, error) {
	return f.Outcome(ctx, id)
}

func (f *fakeChannel) set(id string, s approvals.Status, as ...approval.Approval) {
	f.mu.Lock()
	defer f.mu.Unlock()
	o := f.outcomes[id]
	o.Status, o.Approvals = s, as
	if s == approvals.StatusRejected {
		o.Votes = []approvals.Vote{{Approver: "bob"}}
	}
	f.outcomes[id] = o
}

func stepUp(b byte) approval.Request {
	var h intent.OperationHash
	h[0] = b
	return approval.Request{Level: intent.LevelConfirm, Hash: h,
		Operation: intent.Operation{Action: "bank.send_money", MandateID: "m", Owner: "northwind"}}
}

func TestTracker(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	now := t0
	ch := &fakeChannel{outcomes: map[string]approvals.Outcome{}}
	a := approvals.NewTracker(ch, mem.New(func() time.Time { return now }), approvals.TrackerConfig{Currency: "EUR", Until: t0.Add(8 * time.Hour), Now: func() time.Time { return now }})
	s := stepUp(1)
	s.Facts = map[string]intent.Value{"vendor_name": intent.Str("ACME Supplies")}

	// No request yet: nothing to await.
	if as, err := a.Await(ctx, s.Hash, 0); err != nil || as != nil {
		t.Fatalf("await before request: %v %v", as, err)
	}
	l1, err := a.Request(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	if l2, _ := a.Request(ctx, s); l2 != l1 || ch.n != 1 {
		t.Fatalf("the same operation made another request: %s, %s (%d requests)", l1, l2, ch.n)
	}
	if ch.pending[0].Currency != "EUR" || ch.pending[0].Hash != s.Hash || ch.pending[0].Facts["vendor_name"] != intent.Str("ACME Supplies") {
		t.Fatalf("pending %+v", ch.pending[0])
	}
	id := fmt.Sprintf("%032x", 1)
	if as, err := a.Await(ctx, s.Hash, 0); err != nil || as != nil {
		t.Fatalf("await while pending: %v %v", as, err)
	}

	// Approved: the approvals, until the request expires.
	ap := approval.Approval{ID: "a1", Approver: "alice"}
	ch.set(id, approvals.StatusApproved, ap)
	if as, err := a.Await(ctx, s.Hash, time.Second); err != nil || len(as) != 1 || as[0].ID != "a1" {
		t.Fatalf("await approved: %v %v", as, err)
	}
	// Used (a crash consumed them while the operation did not execute):
	// forgotten, so that asking again opens a new request.
	used := map[string]bool{"a1": true}
	u := approvals.NewTracker(ch, mem.New(func() time.Time { return now }), approvals.TrackerConfig{Now: func() time.Time { return now },
		Used: func(ctx context.Context, a approval.Approval) (bool, error) { return used[a.ID], nil }})
	lu, _ := u.Request(ctx, stepUp(9))
	ch.set(lu[len(lu)-32:], approvals.StatusApproved, ap)
	if as, err := u.Await(ctx, stepUp(9).Hash, 0); err != nil || as != nil {
		t.Fatalf("await used approvals: %v %v", as, err)
	}
	if l, _ := u.Request(ctx, stepUp(9)); l == lu {
		t.Fatal("a request whose approvals were used was given again")
	}
	now = t0.Add(2 * time.Hour)
	if as, err := a.Await(ctx, s.Hash, 0); err != nil || as != nil {
		t.Fatalf("await after expiry: %v %v", as, err)
	}
	if l3, _ := a.Request(ctx, s); l3 == l1 {
		t.Fatal("an expired request's link was given again")
	}
	now = t0

	// Rejected: final until the mandate expires. Asking again opens no
	// new request (an agent cannot wear approvers down).
	s2 := stepUp(2)
	l4, _ := a.Request(ctx, s2)
	ch.set(l4[len(l4)-32:], approvals.StatusRejected)
	if _, err := a.Await(ctx, s2.Hash, 0); !errors.Is(err, approval.ErrRejected) {
		t.Fatalf("await rejected: %v", err)
	}
	n := ch.n
	now = t0.Add(7 * time.Hour)
	if _, err := a.Await(ctx, s2.Hash, 0); !errors.Is(err, approval.ErrRejected) {
		t.Fatalf("await after a rejection: %v", err)
	}
	if l5, err := a.Request(ctx, s2); !errors.Is(err, approval.ErrRejected) || l5 != "" || ch.n != n {
		t.Fatalf("a rejected operation was asked again: %q %v (%d requests)", l5, err, ch.n)
	}
	now = t0.Add(9 * time.Hour) // the mandate expired: nothing of it can run anyway
	if _, err := a.Request(ctx, s2); err != nil || ch.n != n+1 {
		t.Fatalf("after the mandate: %v", err)
	}
	now = t0

	// A full page refuses the request with approval.ErrTooManyRequests.
	ch.err = approvals.ErrTooMany
	if _, err := a.Request(ctx, stepUp(5)); !errors.Is(err, approval.ErrTooManyRequests) {
		t.Fatalf("full page: %v", err)
	}
	ch.err = nil

	// A webhook that missed the request still gives the page's link; any
	// other error is the channel's.
	ch.err = fmt.Errorf("%w: 502", approvals.ErrNotDelivered)
	if l, err := a.Request(ctx, stepUp(3)); err != nil || l == "" {
		t.Fatalf("undelivered webhook: %q %v", l, err)
	}
	ch.err = errors.New("disk full")
	if _, err := a.Request(ctx, stepUp(4)); err == nil {
		t.Fatal("a failed request gave a link")
	}
}

// TestTrackerRejectionNamesWho: a request's own currency and requester reach
// the channel as given; a rejection names the request and who rejected.
func TestTrackerRejectionNamesWho(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ch := &fakeChannel{outcomes: map[string]approvals.Outcome{}}
	a := approvals.NewTracker(ch, mem.New(func() time.Time { return t0 }), approvals.TrackerConfig{Currency: "EUR", Until: t0.Add(time.Hour), Now: func() time.Time { return t0 }})
	s := stepUp(7)
	s.Currency, s.Requester = "GBP", "mcp-user"
	l, err := a.Request(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	if ch.pending[0].Currency != "GBP" || ch.pending[0].Requester != "mcp-user" {
		t.Fatalf("the channel got %+v", ch.pending[0])
	}
	id := l[len(l)-32:]
	ch.set(id, approvals.StatusRejected)
	_, err = a.Await(ctx, s.Hash, 0)
	if !errors.Is(err, approval.ErrRejected) || !strings.Contains(err.Error(), "request "+id+", by bob") {
		t.Fatalf("await rejected: %v", err)
	}
	// Refused and expired requests are forgotten: the next call opens a
	// new one.
	s8 := stepUp(8)
	l8, _ := a.Request(ctx, s8)
	ch.set(l8[len(l8)-32:], approvals.StatusRefused)
	if as, err := a.Await(ctx, s8.Hash, 0); err != nil || as != nil {
		t.Fatalf("await refused: %v %v", as, err)
	}
	if l9, err := a.Request(ctx, s8); err != nil || l9 == l8 {
		t.Fatalf("after a refused request: %q %v", l9, err)
	}
}
