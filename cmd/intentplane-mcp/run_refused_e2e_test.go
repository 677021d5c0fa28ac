package main_test

import (
	"fmt"
	"net"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/intentplane/intentplane/erp"
	"github.com/intentplane/intentplane/odoo/provision"
)

// accessFault is Odoo's answer to a user without the right to create
// payments (fault 4, an AccessError): nothing was written.
const accessFault = `<?xml version='1.0'?><methodResponse><fault><value><struct>` +
	`<member><name>faultCode</name><value><int>4</int></value></member>` +
	`<member><name>faultString</name><value><string>You are not allowed to create 'Register Payment' (account.payment.register) records.</string></value></member>` +
	`</struct></value></fault></methodResponse>`

// TestPaymentRunRetriedAfterERPRefusal (issue 25): a payment run is
// approved on the page, then Odoo refuses every payment of it (the payer
// lost the right to register payments): nothing is paid, and the run's
// approval was consumed by its lines. Once the cause is fixed, the same
// run asked again opens a new request at once (it used to be refused
// until the first request expired), and approved again each bill is paid
// once.
func TestPaymentRunRetriedAfterERPRefusal(t *testing.T) {
	t.Parallel()
	e := newOdooEnv(t)
	e.vars = e.passEnv
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	base := "http://" + addr
	writeFile(t, e.config, e.template+fmt.Sprintf("\n[approvals]\nlisten = %q\nwait = 0\nrequest_ttl = \"5m\"\n", addr)+approvers(t, e.dir))

	c := e.start(mcp.ProtocolVersion20251125, nil)
	line := func(bill, amount string) string {
		return fmt.Sprintf(`{"vendor":"ACME Supplies","bill":%q,"iban":%q,"amount":%q,"currency":"EUR"}`, bill, ibanOnFile, amount)
	}
	run := `{"payments":[` + line(provision.DemoBill, "850.00") + "," + line(provision.DemoBill2, "2400.00") + `]}`
	first := link(t, call(t, c, "ap_propose_payment_run", run))
	alice := signIn(t, base, "alice")
	alice.decide(first, true)

	e.srv.Answer("account.payment.register", "create", accessFault)
	r := call(t, c, "ap_propose_payment_run", run)
	wantError(t, r, "1. not executed", "2. not executed", "refused it", "can be sent again")
	for _, ref := range []string{provision.DemoBill, provision.DemoBill2} {
		if b := e.bill(t, ref); b.PaymentState != erp.NotPaid {
			t.Fatalf("%s is %s after Odoo refused its payment", ref, b.PaymentState)
		}
	}

	e.srv.Answer("account.payment.register", "create", "")
	second := link(t, call(t, c, "ap_propose_payment_run", run))
	if second == first {
		t.Fatal("the run whose approval its lines consumed was given the same request again")
	}
	alice.decide(second, true)
	wantOK(t, call(t, c, "ap_propose_payment_run", run), "2 of 2 payments executed")
	for _, ref := range []string{provision.DemoBill, provision.DemoBill2} {
		if b := e.bill(t, ref); !b.PaymentState.Settled() {
			t.Fatalf("%s is %s after the approved retry", ref, b.PaymentState)
		}
	}
	r = call(t, c, "ap_propose_payment_run", run)
	if strings.Contains(text(r), "executed:") {
		t.Fatalf("a payment of the run executed twice: %s", text(r))
	}
}
