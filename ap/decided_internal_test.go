package ap

import (
	"testing"
	"time"

	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/erp"
)

// TestVendorNameKept (issue 12): the facts of a payment name the vendor as
// the vendors registry read it in the same decision; once that is older
// than decidedTTL (a decision that waited for its hold on the vendor),
// as the ERP has it now.
func TestVendorNameKept(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)
	src := erp.NewMem(func() time.Time { return now })
	v, err := src.AddVendor(t.Context(), "co", erp.Vendor{Name: "Globex Parts", Active: true})
	if err != nil {
		t.Fatal(err)
	}
	kept := newDecided(func() time.Time { return now })
	p := payFacts{src: src, decided: kept}
	kept.keepVendor("co", erp.Vendor{ID: v.ID, Name: "Globex Parts (as resolved)"})
	bill := erp.Bill{ID: "1", Vendor: v.ID, Currency: "EUR", Total: intent.Amount(100)}
	for _, c := range []struct {
		after time.Duration
		want  string
	}{{0, "Globex Parts (as resolved)"}, {decidedTTL / 2, "Globex Parts (as resolved)"}, {decidedTTL + time.Second, "Globex Parts"}} {
		now = time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC).Add(c.after)
		if got, err := p.vendorName(t.Context(), "co", bill); err != nil || got != c.want {
			t.Errorf("after %s: %q, %v; want %q", c.after, got, err, c.want)
		}
	}
	named := bill
	named.VendorName = "Globex (on the bill)"
	if got, err := p.vendorName(t.Context(), "co", named); err != nil || got != named.VendorName {
		t.Errorf("a bill read with its vendor's name: %q, %v", got, err)
	}
	if got, err := p.vendorName(t.Context(), "co", erp.Bill{ID: "2", Vendor: "404"}); err != nil || got != "" {
		t.Errorf("a vendor not found: %q, %v; want none", got, err)
	}
}
