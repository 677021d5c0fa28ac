package main_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/intentplane/intentplane/erp"
	"github.com/intentplane/intentplane/odoo/odootest"
	"github.com/intentplane/intentplane/odoo/provision"
)

// TestRealOdooMessages: on each real Odoo, the records a new-user trial
// made in Odoo's forms get refusals and ap_get_vendor outputs that say
// what to correct, naming the records; nothing is paid.
func TestRealOdooMessages(t *testing.T) {
	odootest.EachReal(t, realOdooMessages)
}

func realOdooMessages(t *testing.T, s odootest.RealServer) {
	type rec struct{ name, iban, ref string }
	var (
		birch  = rec{"Birch Ltd", "BE68 5390 0754 7034", "BI-1"}                 // Send Money off
		wessex = rec{"Wessex Mills", "GB82 W\u0415ST 1234 5698 7654 32", "WM-1"} // a Cyrillic Е
		echo1  = rec{"Echo Ltd", "NL91 ABNA 0417 1643 00", "EC-1"}               // one number, two vendors
		echo2  = rec{"Echo Trading", "NL91 ABNA 0417 1643 00", "EC-2"}
	)
	ids := map[string]string{}
	e := newRealOdooEnv(t, s, func(a *provision.Admin) {
		ctx := context.Background()
		for _, x := range []rec{birch, wessex, echo1, echo2} {
			v, err := a.AddPartner(ctx, provision.DemoCompany, provision.Partner{Name: x.name, Company: true, Shared: true})
			if err != nil {
				t.Fatal(err)
			}
			ids[x.name] = v
			if _, err := a.AddBankAccount(ctx, provision.DemoCompany, erp.BankAccount{Vendor: v, Number: x.iban, Trusted: x.name != birch.name, Active: true}); err != nil {
				t.Fatalf("%s: %v", x.name, err)
			}
			if _, err := a.AddBill(ctx, provision.DemoCompany, erp.Bill{Ref: x.ref, Vendor: v, Currency: "EUR", Total: 10000}); err != nil {
				t.Fatal(err)
			}
		}
	})
	c := e.start(mcp.ProtocolVersion20251125, &elicitor{answer: answer(mcp.ElicitationResponseActionAccept, true)})
	payTo := func(x rec, vendor, iban string) *mcp.CallToolResult {
		return call(t, c, "ap_pay_bill", fmt.Sprintf(`{"vendor":%q,"bill":%q,"iban":%q,"amount":"10.00","currency":"EUR"}`, vendor, x.ref, iban))
	}

	wantOK(t, call(t, c, "ap_get_vendor", fmt.Sprintf(`{"vendor":%q}`, birch.name)), `"current_account":null`, "untrusted_accounts", "Send Money")
	wantError(t, payTo(birch, birch.name, birch.iban), "Send Money")

	wantError(t, payTo(wessex, wessex.name, "GB82 WEST 1234 5698 7654 32"), "U+0415", "not plain ASCII")

	named := []string{fmt.Sprintf("%q (vendor ID %s", echo1.name, ids[echo1.name]), fmt.Sprintf("%q (vendor ID %s", echo2.name, ids[echo2.name])}
	wantError(t, payTo(echo1, echo1.name, echo1.iban), append(named, "more than one vendor")...)
	wantOK(t, call(t, c, "ap_get_vendor", fmt.Sprintf(`{"vendor":%q}`, echo2.name)), `"shared":`, "unusable")

	for _, x := range []rec{birch, wessex, echo1, echo2} {
		if n := len(e.payments(t, ids[x.name])); n != 0 {
			t.Errorf("%d payments to %s in Odoo", n, x.name)
		}
	}
}
