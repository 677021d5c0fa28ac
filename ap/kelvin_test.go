package ap_test

import (
	"strings"
	"testing"

	"github.com/intentplane/intentplane/ap"
	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/erp"
)

// TestRegressionKelvinSignVendorName (issue 13): a vendor name with the
// Kelvin sign U+212A in place of a K resolved to the real vendor, because
// strings.ToLower and strings.EqualFold fold it into 'k': a compatibility
// fold where look-alikes must be refused. The name is now refused as a
// look-alike, and the ERP's name query does not fold it either.
func TestRegressionKelvinSignVendorName(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := t.Context()
	kwik, err := e.erp.AddVendor(ctx, ap.DemoCompany, erp.Vendor{Name: "Kwik Parts", Phone: "+49 30 7654321", Active: true})
	if err != nil {
		t.Fatal(err)
	}
	const iban = "GB29NWBK60161331926819"
	if _, err := e.erp.AddBankAccount(ctx, ap.DemoCompany, erp.BankAccount{Vendor: kwik.ID, Number: iban, Trusted: true, Active: true, SetAt: t0.AddDate(-1, 0, 0)}); err != nil {
		t.Fatal(err)
	}
	b, err := e.erp.AddBill(ctx, ap.DemoCompany, erp.Bill{Name: "BILL/2026/11/0042", Ref: "KP-7", Vendor: kwik.ID, Currency: "EUR", Total: 12000})
	if err != nil {
		t.Fatal(err)
	}
	e.paidBefore(ap.DemoCompany, "Kwik Parts")
	tok := e.mandate("m-kelvin", ap.DemoCompany, "EUR")

	for _, name := range []string{"\u212Awik Parts", "\u212AWIK PARTS", "kwi\u212A Parts"} {
		d := e.decide(tok, ap.ActionPayBill, pay(name, b.Name, iban, "120.00"))
		if d.Executed || code(d) != intent.CodeBadArgument || !strings.Contains(message(d), "U+212A") {
			t.Errorf("vendor %+q: executed %v, %s %q; want the name refused as a look-alike", name, d.Executed, code(d), message(d))
		}
	}
	vs, err := e.erp.Vendors(ctx, ap.DemoCompany, erp.VendorQuery{Name: "\u212Awik Parts"})
	if err != nil || len(vs) != 0 {
		t.Errorf("Vendors(name with the Kelvin sign) = %v, %v; want none", vs, err)
	}

	// The name as on file, in any ASCII case, still pays.
	d := e.decide(tok, ap.ActionPayBill, pay("KWIK  parts", b.Name, iban, "120.00"))
	if !d.Executed {
		t.Fatalf("vendor \"KWIK  parts\": %s %s %s; want executed", d.Verdict, code(d), message(d))
	}
}
