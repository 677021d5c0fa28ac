package main_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
)

// TestAmountOverflow (issue 24): amounts at and beyond the int64 limit in
// minor units reach the proxied send_money as refusals that say why, with
// a reason code, never as a panic, an internal error or "the state store
// is unavailable": too many digits, one cent past the limit (as a string
// and as a JSON number), and an amount that fits alone but overflows the
// payee's running total once added to an earlier payment. The operator's
// budget and maximum are lifted so that nothing else refuses them first.
func TestAmountOverflow(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	cfg := readFile(t, e.config)
	lifted := strings.Replace(cfg, `budget = "EUR 12000.00"`, `budget = "EUR 92233720368547758.07"`, 1)
	polFile := filepath.Join(e.dir, "policy", "policy.cedar")
	pol := readFile(t, polFile)
	noMax := strings.Replace(pol, "when { context.amount > 1000000 };", "when { context.amount > 1000000 && false };", 1)
	if lifted == cfg || noMax == pol {
		t.Fatal("the example's budget or maximum moved; update this test")
	}
	writeFile(t, e.config, lifted)
	writeFile(t, polFile, noMax)
	c := e.start(mcp.ProtocolVersion20251125, &elicitor{answer: answer(mcp.ElicitationResponseActionAccept, true)})
	pay := func(amount string) *mcp.CallToolResult {
		return call(t, c, "send_money", `{"recipient_iban":"`+ibanOnFile+`","amount":`+amount+`,"reference":"X"}`)
	}
	for _, a := range []string{`"99999999999999999999.00"`, `"92233720368547758.08"`, `92233720368547758.08`, `"1` + strings.Repeat("0", 400) + `"`} {
		r := pay(a)
		wantError(t, r, "is too large: the largest amount the gateway can count is 92233720368547758.07", "Nothing was done")
		wantReason(t, r, "proposal.bad_argument", "deny")
	}
	wantOK(t, pay(`"600.00"`))
	for _, a := range []string{`"92233720368547758.07"`, `92233720368547758.07`, `"92233720368547158.08"`} {
		r := pay(a)
		wantError(t, r, "would exceed the largest total the gateway can keep", "Nothing was done")
		wantReason(t, r, "policy.denied", "deny")
	}
	if got := e.bankCalls("send_money"); len(got) != 1 {
		t.Fatalf("the bank executed %d payments, want 1: %q", len(got), got)
	}
	// The AP pack's bill payments: its own totals saturate, so the
	// largest amount is refused as above the limit and the bill.
	apPay := func(a string) *mcp.CallToolResult {
		return call(t, c, "ap_pay_bill", `{"vendor":"ACME Supplies","bill":"INV-2290","iban":"`+ibanOnFile+`","amount":"`+a+`","currency":"EUR"}`)
	}
	r := apPay("92233720368547758.07")
	wantError(t, r, "the amount is more than the bill still owes", "Nothing was done")
	wantReason(t, r, "policy.denied", "deny")
	r = apPay("92233720368547758.08")
	wantError(t, r, "is too large", "Nothing was done")
	wantReason(t, r, "proposal.bad_argument", "deny")
}
