package ap_test

import (
	"errors"
	"testing"

	"github.com/intentplane/intentplane/ap"
	"github.com/intentplane/intentplane/core/normalize"
)

func TestNormalizers(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		fn   func(string) (string, error)
		in   string
		want string // "" means refused
	}{
		{"vendor spaces and case", ap.VendorName, "  ACME   Supplies\t", "acme supplies"},
		{"vendor non-ASCII letters kept", ap.VendorName, "Müller GmbH", "müller gmbh"},
		{"vendor zero-width space", ap.VendorName, "AC\u200bME", ""},
		{"vendor control character", ap.VendorName, "ACME\x00", ""},
		{"vendor empty", ap.VendorName, "   ", ""},
		{"vendor invalid UTF-8", ap.VendorName, "AC\xffME", ""},
		{"bill spaces and case", ap.BillReference, " inv  2290 ", "INV 2290"},
		{"bill number", ap.BillReference, "bill/2026/11/0001", "BILL/2026/11/0001"},
		{"bill look-alike", ap.BillReference, "\u0406NV-2290", ""},
		{"bill empty", ap.BillReference, " ", ""},
		{"currency", ap.Currency, " eur ", "EUR"},
		{"currency symbol", ap.Currency, "€", ""},
		{"currency too long", ap.Currency, "EURO", ""},
		{"currency with 2 decimals", ap.Currency, "chf", "CHF"},
		{"currency without decimals", ap.Currency, "jpy", "JPY"},
		{"currency with 3 decimals", ap.Currency, "KWD", "KWD"},
		{"testing code", ap.Currency, "XTS", ""},
		{"currency not in ISO 4217", ap.Currency, "XYZ", ""},
		{"precious metal", ap.Currency, "XAU", ""},
	}
	for _, tt := range tests {
		got, err := tt.fn(tt.in)
		if tt.want == "" {
			if err == nil || !errors.Is(err, normalize.ErrInvalid) {
				t.Errorf("%s: %q accepted as %q (err %v)", tt.name, tt.in, got, err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("%s: got %q, %v; want %q", tt.name, got, err, tt.want)
		}
	}
}
