package ap_test

import (
	"context"
	"errors"
	"testing"

	"github.com/intentplane/intentplane/ap"
	"github.com/intentplane/intentplane/core/normalize"
	"github.com/intentplane/intentplane/erp"
)

// failingReader is an ERP that cannot be read.
type failingReader struct{ erp.Reader }

func (failingReader) Vendors(context.Context, string, erp.VendorQuery) ([]erp.Vendor, error) {
	return nil, errors.New("odoo: connection refused")
}

func TestCheckCallback(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	books := ap.DemoERP(nil)
	silent, err := books.AddVendor(ctx, ap.DemoCompany, erp.Vendor{Name: "Quiet Ltd", Active: true})
	if err != nil {
		t.Fatal(err)
	}
	acme, err := books.Vendors(ctx, ap.DemoCompany, erp.VendorQuery{Name: ap.DemoVendor})
	if err != nil || len(acme) != 1 {
		t.Fatalf("demo vendor: %v %v", acme, err)
	}
	const iban = "GB29NWBK60161331926819"
	for _, tc := range []struct {
		name                         string
		company, vendor, phone, iban string
		field                        string // of the refusal; "" when accepted
	}{
		{"by name, spaced and cased, number with 00", ap.DemoCompany, "  acme   SUPPLIES ", "0049 30 1234567", "gb29 nwbk 6016 1331 9268 19", ""},
		{"by ID", ap.DemoCompany, acme[0].ID, ap.DemoVendorPhone, iban, ""},
		{"unknown vendor", ap.DemoCompany, "Initech", ap.DemoVendorPhone, iban, "vendor"},
		{"invisible character in the name", ap.DemoCompany, "ACME\u200b Supplies", ap.DemoVendorPhone, iban, "vendor"},
		{"another company's vendor", ap.DemoCompany, ap.DemoOtherVendor, "+33 1 4000 0000", iban, "vendor"},
		{"vendor of the other company from there", ap.DemoOtherCompany, ap.DemoVendor, ap.DemoVendorPhone, iban, "vendor"},
		{"vendor without a phone on file", ap.DemoCompany, silent.ID, "+49 30 1234567", iban, "vendor"},
		{"number from the email", ap.DemoCompany, ap.DemoVendor, "+44 20 7946 0000", iban, "phone"},
		{"invalid IBAN", ap.DemoCompany, ap.DemoVendor, ap.DemoVendorPhone, "GB29NWBK60161331926818", "iban"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			v, n, err := ap.CheckCallback(ctx, books, tc.company, tc.vendor, tc.phone, tc.iban)
			var ce *ap.CallbackCheckError
			switch {
			case tc.field == "" && err != nil:
				t.Fatal(err)
			case tc.field == "" && (v.ID != acme[0].ID || v.Name != ap.DemoVendor || n != iban):
				t.Errorf("checked vendor %+v, IBAN %q", v, n)
			case tc.field != "" && (!errors.As(err, &ce) || ce.Field != tc.field || ce.Text == ""):
				t.Errorf("err %v, want a refusal of %s", err, tc.field)
			}
		})
	}
	_, _, err = ap.CheckCallback(ctx, books, ap.DemoCompany, ap.DemoVendor, ap.DemoVendorPhone, "GB29NWBK60161331926818")
	if !errors.Is(err, normalize.ErrInvalid) {
		t.Errorf("an invalid IBAN's refusal does not carry the IBAN's error: %v", err)
	}
	// An ERP that cannot be read is an error, not a refusal.
	var ce *ap.CallbackCheckError
	if _, _, err := ap.CheckCallback(ctx, failingReader{}, ap.DemoCompany, ap.DemoVendor, ap.DemoVendorPhone, iban); err == nil || errors.As(err, &ce) {
		t.Errorf("unreadable ERP: %v", err)
	}
}
