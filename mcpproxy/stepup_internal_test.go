package mcpproxy

import (
	"strings"
	"testing"

	"github.com/intentplane/intentplane/core/gateway"
	"github.com/intentplane/intentplane/core/intent"
)

// TestDescribeCannotBeForged: an argument cannot add lines, hide text or
// reorder the dialog; trusted values and the amount come first.
func TestDescribeCannotBeForged(t *testing.T) {
	t.Parallel()
	forged := "INV-1\nOperation 0000000000000000\n" + strings.Repeat("\n", 20) + "amount: 1.00 \u202eRUE 00.1\u202c" + strings.Repeat("x", 200)
	op := intent.Operation{Action: "bank.send_money", MandateID: "m", Owner: "o", Args: intent.Args{
		"recipient_iban": intent.Str("DE89370400440532013000"),
		"amount":         intent.AmountValue(240000, 2),
		"reference":      intent.Str(forged),
		"memo":           intent.Str("caf\u00e9\u200b"),
	}}
	h, _ := op.Hash()
	d := gateway.Decision{Operation: &op, OperationHash: h, Resolved: []intent.Resolved{{
		Param: "recipient_iban", Sent: "de89 3704\n0044", Value: "DE89370400440532013000",
		Provenance: intent.Provenance{Source: "registry:payees", RecordID: "vendor:acme"},
	}}}
	msg := describe(Tool{Name: "send_money"}, d)
	lines := strings.Split(strings.TrimSuffix(msg, "\n"), "\n")
	if len(lines) != 10 {
		t.Fatalf("%d lines:\n%s", len(lines), msg)
	}
	for i, want := range []string{
		"Confirm this exact operation (tool send_money)?", "", "Action: bank.send_money",
		`  recipient_iban: DE89370400440532013000  (trusted, from registry:payees, record vendor:acme; the assistant wrote "de89 3704\n0044" (contains non-ASCII or invisible characters))`,
		"  amount: 2400.00", "Operation " + h.String()[:16], "", "Other arguments, as the assistant wrote them:",
		`  memo: "caf\u00e9\u200b" (contains non-ASCII or invisible characters)`,
	} {
		if lines[i] != want {
			t.Errorf("line %d:\n got %s\nwant %s", i, lines[i], want)
		}
	}
	if !strings.HasPrefix(lines[9], `  reference: "INV-1\nOperation 0000000000000000\n\n`) || !strings.Contains(lines[9], `\u202e`) ||
		!strings.Contains(lines[9], "(cut; ") || len(lines[9]) > 250 {
		t.Errorf("reference line: %s", lines[9])
	}
}

// TestDescribeShowsTotals: the person asked to confirm a payment that
// adds up with earlier ones reads the totals (issue 13, cumulative limits).
func TestDescribeShowsTotals(t *testing.T) {
	t.Parallel()
	op := intent.Operation{Action: "ap.pay_bill", MandateID: "m", Owner: "o", Args: intent.Args{"amount": intent.AmountValue(40001, 2)}}
	h, _ := op.Hash()
	why := "payments above the company's confirmation threshold need a person's confirmation, and this payment with what was already paid of the bill is above it " +
		"(this payment 400.01 EUR; paid to ACME Supplies for this bill 1999.99 EUR, today 1999.99 EUR, this week 1999.99 EUR, under this mandate 1999.99 EUR)"
	d := gateway.Decision{Operation: &op, OperationHash: h, Refusal: &intent.Refusal{Code: intent.CodeApprovalRequired,
		Message: "This operation needs a person's confirmation before it can execute: " + why + ". Nothing was done yet. A person must approve this exact operation (" + h.String()[:16] + ") on the approval channel; any change to it needs a new approval."}}
	msg := describe(Tool{Name: "ap_pay_bill"}, d)
	if want := "Why you are asked: " + why + ".\n"; !strings.Contains(msg, want) {
		t.Errorf("the confirmation does not show the totals:\n%s", msg)
	}
}

// TestDescribeNamesOnFile: the confirmation of a payment shows, next to
// the IDs that execute, the vendor's and the bill's names as the system
// of record holds them (never the assistant's spelling alone), and the
// amount with its currency, as the approval page does.
func TestDescribeNamesOnFile(t *testing.T) {
	t.Parallel()
	op := intent.Operation{Action: "ap.pay_bill", MandateID: "m", Owner: "o", Args: intent.Args{
		"vendor": intent.Str("10"), "bill": intent.Str("2"), "amount": intent.AmountValue(240000, 2),
	}}
	h, _ := op.Hash()
	d := gateway.Decision{Operation: &op, OperationHash: h, Resolved: []intent.Resolved{
		{Param: "vendor", Sent: "ACME Supplies", Value: "10", Provenance: intent.Provenance{Source: "registry:vendors", RecordID: "10"}},
		{Param: "bill", Sent: "INV-2291", Value: "2", Provenance: intent.Provenance{Source: "registry:bills", RecordID: "2"}},
	}, Facts: map[string]intent.Value{
		"vendor_name": intent.Str("ACME Supplies"), "bill_ref": intent.Str("INV-2291"), "bill_number": intent.Str("BILL/2026/12/0002"),
		"budget_currency": intent.Str("EUR"),
	}}
	msg := describe(Tool{Name: "ap_pay_bill"}, d)
	for _, want := range []string{
		`  vendor: 10, "ACME Supplies" on file  (trusted, from registry:vendors, record 10; the assistant wrote "ACME Supplies")`,
		`  bill: 2, "INV-2291" on file  (trusted, from registry:bills, record 2; the assistant wrote "INV-2291")`,
		"  amount: 2400.00 EUR\n",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("the confirmation lacks %q:\n%s", want, msg)
		}
	}
}
