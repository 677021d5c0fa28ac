package gateway_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/intentplane/intentplane/core/gateway"
	"github.com/intentplane/intentplane/core/gateway/gatewaytest"
	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/receipt"
	"github.com/intentplane/intentplane/core/state"
	"github.com/intentplane/intentplane/store/mem"
)

// deferring is a store that appends deferred receipts at once, noting
// which decisions' receipts came that way.
type deferring struct {
	*mem.Store
	mu       sync.Mutex
	deferred []receipt.Receipt
	synced   []receipt.Receipt
}

var _ state.DeferredLog = (*deferring)(nil)

func (d *deferring) Append(ctx context.Context, r receipt.Receipt) (receipt.Receipt, error) {
	d.mu.Lock()
	d.synced = append(d.synced, r)
	d.mu.Unlock()
	return d.Store.Append(ctx, r)
}

func (d *deferring) AppendDeferred(ctx context.Context, r receipt.Receipt) error {
	d.mu.Lock()
	d.deferred = append(d.deferred, r)
	d.mu.Unlock()
	_, err := d.Store.Append(ctx, r)
	return err
}

// TestDeferredReceipts: on a store that can defer, the receipt of an
// executed payment is appended durably and linked in the decision; those
// of decisions that executed nothing (a step-up, a denial) are deferred.
func TestDeferredReceipts(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	now := time.Now()
	st := &deferring{Store: mem.New(nil)}
	gw, err := gatewaytest.Gateway(st, &gatewaytest.Recorder{})
	if err != nil {
		t.Fatal(err)
	}
	tok, err := gatewaytest.Mandate("m-deferred", "emma", 5000_00, now)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		proposal []byte
		verdict  intent.Verdict
		deferred bool
	}{
		{"executed payment", gatewaytest.Send("GB29", "10.00", "a"), intent.Allow, false},
		{"step-up", gatewaytest.Send("GB29", "2000.00", "b"), intent.StepUp, true},
		{"unknown recipient", gatewaytest.Send("XX00", "10.00", "c"), intent.Deny, true},
		{"out of scope", []byte(`{"action":"pay.balance","args":{}}`), intent.Deny, true},
	} {
		st.deferred, st.synced = nil, nil
		d, err := gw.Decide(ctx, gateway.Request{Mandate: tok, Proposal: tc.proposal})
		if err != nil {
			t.Fatal(err)
		}
		if d.Verdict != tc.verdict {
			t.Fatalf("%s: verdict %v, want %v (%v)", tc.name, d.Verdict, tc.verdict, d.Refusal)
		}
		if got := len(st.deferred) == 1 && len(st.synced) == 0; got != tc.deferred {
			t.Errorf("%s: %d receipts deferred, %d appended; want deferred %v", tc.name, len(st.deferred), len(st.synced), tc.deferred)
		}
		if linked := d.Receipt.Seq != 0; linked == tc.deferred {
			t.Errorf("%s: decision's receipt has seq %d; want it linked only when appended durably", tc.name, d.Receipt.Seq)
		}
	}
}
