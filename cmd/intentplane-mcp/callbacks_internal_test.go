package main

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/intentplane/intentplane/ap"
	"github.com/intentplane/intentplane/approvals"
	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/store/mem"
)

func TestCallbackBook(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	if (&callbackBook{}).sink() != nil || (*callbackBook)(nil).sink() != nil {
		t.Fatal("a book without an ap pack offers a call-back form")
	}
	b := &callbackBook{kept: ap.StoredCallbacks{Store: mem.New(nil)}}
	cbs := b.forPack(ap.DemoERP(nil))
	if b.sink() == nil {
		t.Fatal("no sink once the ap pack is mounted")
	}
	// The call-back is an hour old, whatever the day the test runs: a fixed
	// date expires once the validity (ap.DefaultCallbackValidity) has passed.
	calledAt := time.Now().UTC().Add(-time.Hour).Truncate(time.Second)
	entry := func(company, vendor, iban, phone string) approvals.CallbackEntry {
		return approvals.CallbackEntry{ID: "0123456789abcdef0123456789abcdef", Owner: intent.Owner(company), Vendor: vendor, IBAN: iban, Phone: phone,
			CalledBy: "alice", At: calledAt}
	}
	tests := []struct {
		name  string
		e     approvals.CallbackEntry
		field string // of the refusal; "" when accepted
	}{
		{"by name", entry(ap.DemoCompany, "  acme   SUPPLIES ", "gb29 nwbk 6016 1331 9268 19", "0049 30 1234567"), ""},
		{"unknown vendor", entry(ap.DemoCompany, "Initech", "GB29NWBK60161331926819", ap.DemoVendorPhone), "vendor"},
		{"another company's vendor", entry(ap.DemoCompany, ap.DemoOtherVendor, "GB29NWBK60161331926819", "+33 1 4000 0000"), "vendor"},
		{"vendor of the other company from there", entry(ap.DemoOtherCompany, ap.DemoVendor, "GB29NWBK60161331926819", ap.DemoVendorPhone), "vendor"},
		{"number from the email", entry(ap.DemoCompany, ap.DemoVendor, "GB29NWBK60161331926819", "+44 20 7946 0000"), "phone"},
		{"invalid IBAN", entry(ap.DemoCompany, ap.DemoVendor, "GB29NWBK60161331926818", ap.DemoVendorPhone), "iban"},
	}
	for _, tt := range tests {
		got, err := b.CheckCallback(ctx, tt.e)
		var ce *approvals.CallbackError
		switch {
		case tt.field == "" && err != nil:
			t.Errorf("%s: %v", tt.name, err)
		case tt.field != "" && (!errors.As(err, &ce) || ce.Field != tt.field):
			t.Errorf("%s: err %v, want a refusal of %s", tt.name, err, tt.field)
		case tt.field == "" && (got.VendorName != ap.DemoVendor || got.IBAN != "GB29NWBK60161331926819" || got.Vendor == ""):
			t.Errorf("%s: checked %+v", tt.name, got)
		}
	}
	checked, err := b.CheckCallback(ctx, tests[0].e)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cbs.Callback(ctx, ap.DemoCompany, checked.IBAN); !errors.Is(err, ap.ErrNoCallback) {
		t.Fatalf("checking recorded it: %v", err)
	}
	if err := b.RecordCallback(ctx, checked); err != nil {
		t.Fatal(err)
	}
	cb, err := cbs.Callback(ctx, ap.DemoCompany, checked.IBAN)
	if err != nil || cb.Vendor != checked.Vendor || cb.CalledBy != "alice" || cb.ID != checked.ID {
		t.Fatalf("Callback: %+v, %v", cb, err)
	}
	if _, err := cbs.Callback(ctx, ap.DemoOtherCompany, checked.IBAN); !errors.Is(err, ap.ErrNoCallback) {
		t.Fatalf("another company sees it: %v", err)
	}
}
