package main_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/intentplane/intentplane/internal/browsertest"
)

// TestPaymentRunOnPage (issue 25): the agent proposes two of ACME
// Supplies' bills as one run (ap_propose_payment_run); neither alone needs
// a person, together they pass the confirmation threshold, so the run is
// one request on the page. Changed after approval, the run asks again;
// as approved, each payment executes once; again, neither executes.
func TestPaymentRunOnPage(t *testing.T) {
	t.Parallel()
	b := browsertest.Start(t)
	e := newPageEnv(t, 0, "")
	c := e.start(mcp.ProtocolVersion20251125, nil)
	line := func(bill, amount string) string {
		return fmt.Sprintf(`{"vendor":"ACME Supplies","bill":%q,"iban":%q,"amount":%q,"currency":"EUR"}`, bill, ibanOnFile, amount)
	}
	run := `{"payments":[` + line("INV-2290", "850.00") + "," + line("INV-2291", "500.00") + `]}`

	l := link(t, call(t, c, "ap_propose_payment_run", run))
	alice := newPerson(t, b, "alice")
	alice.open(l)
	if got := alice.text("#summary"); got != "Pay a run of 2 payments to 1 payee: 1,350.00 EUR in all" {
		t.Fatalf("the run's page leads with %q", got)
	}
	alice.decide(l, true)

	// The second payment changed after approval: another run, asked again.
	changed := `{"payments":[` + line("INV-2290", "850.00") + "," + line("INV-2291", "600.00") + `]}`
	if l2 := link(t, call(t, c, "ap_propose_payment_run", changed)); l2 == l {
		t.Fatal("the changed run was covered by the approval of the first")
	}

	wantOK(t, call(t, c, "ap_propose_payment_run", run), "2 of 2 payments executed", "1. executed", "2. executed")
	r := call(t, c, "ap_propose_payment_run", run)
	wantError(t, r, "1. refused", "2. refused", "already executed")
	wantReason(t, r, "execution.replayed", "deny") // every line's own code, not policy.denied
	if strings.Contains(text(r), "executed:") {
		t.Fatalf("a payment of the run executed twice: %s", text(r))
	}
	wantError(t, call(t, c, "ap_pay_bill", line("INV-2290", "850.00")), "already executed")
}
