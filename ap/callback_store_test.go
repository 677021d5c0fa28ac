package ap_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/intentplane/intentplane/ap"
	"github.com/intentplane/intentplane/store/mem"
)

// callbackRecorder is what both CallbackMem and StoredCallbacks offer.
type callbackRecorder interface {
	ap.Callbacks
	Record(ctx context.Context, cb ap.Callback) error
}

// TestCallbacksRecord: CallbackMem and StoredCallbacks record and find
// call-backs alike: by company and normalized number, the most recent
// first, never another company's; malformed ones are refused.
func TestCallbacksRecord(t *testing.T) {
	t.Parallel()
	for name, m := range map[string]callbackRecorder{
		"mem":    &ap.CallbackMem{},
		"stored": ap.StoredCallbacks{Store: mem.New(func() time.Time { return t0 })},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			good := ap.Callback{ID: "cb-1", Company: "c", Vendor: "1", Number: "ch93 0076 2011 6238 5295 7", Phone: "+41 44 000 0000", CalledBy: "dana", At: t0.Add(-time.Hour)}
			if err := m.Record(ctx, good); err != nil {
				t.Fatal(err)
			}
			later := good
			later.ID, later.CalledBy, later.At = "cb-2", "erin", t0
			if err := m.Record(ctx, later); err != nil {
				t.Fatal(err)
			}
			if cb, err := m.Callback(ctx, "c", "CH9300762011623852957"); err != nil || cb.ID != "cb-2" || cb.CalledBy != "erin" || !cb.At.Equal(t0) {
				t.Errorf("Callback = %+v, %v; want the later one", cb, err)
			}
			if _, err := m.Callback(ctx, "other", "CH9300762011623852957"); !errors.Is(err, ap.ErrNoCallback) {
				t.Errorf("another company's call-back: %v", err)
			}
			if _, err := m.Callback(ctx, "c", "GB29NWBK60161331926819"); !errors.Is(err, ap.ErrNoCallback) {
				t.Errorf("another number's call-back: %v", err)
			}
			bad := good
			bad.Number = "CH93 0076 2011 6238 5295 8"
			if err := m.Record(ctx, bad); err == nil {
				t.Error("a call-back with an invalid IBAN was recorded")
			}
			bad = good
			bad.Phone = " "
			if err := m.Record(ctx, bad); err == nil {
				t.Error("a call-back without the phone dialled was recorded")
			}
		})
	}
}

// TestStoredCallbacksKept: a call-back kept in the store is found by a new
// StoredCallbacks over it (a restart, another replica) until Keep after it
// was recorded.
func TestStoredCallbacksKept(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	now := t0
	st := mem.New(func() time.Time { return now })
	cb := ap.Callback{ID: "cb-1", Company: "c", Vendor: "1", Number: "CH9300762011623852957", Phone: "+41 44 000 0000", CalledBy: "dana", At: t0}
	if err := (ap.StoredCallbacks{Store: st}).Record(ctx, cb); err != nil {
		t.Fatal(err)
	}
	if got, err := (ap.StoredCallbacks{Store: st}).Callback(ctx, "c", cb.Number); err != nil || got != cb {
		t.Fatalf("after a restart: %+v, %v; want %+v", got, err, cb)
	}
	now = t0.Add(ap.DefaultCallbackValidity)
	if _, err := (ap.StoredCallbacks{Store: st}).Callback(ctx, "c", cb.Number); !errors.Is(err, ap.ErrNoCallback) {
		t.Fatalf("a call-back past Keep: %v", err)
	}
	if _, err := (ap.StoredCallbacks{}).Callback(ctx, "c", cb.Number); !errors.Is(err, ap.ErrNoCallback) {
		t.Fatalf("without a store: %v", err)
	}
	if err := (ap.StoredCallbacks{}).Record(ctx, cb); err == nil {
		t.Fatal("recorded without a store")
	}
}
