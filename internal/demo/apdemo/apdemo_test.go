package apdemo_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/intentplane/intentplane/ap"
	"github.com/intentplane/intentplane/internal/demo/apdemo"
)

// TestRun plays the scenario: Run fails if any decision differs from the
// one the scenario expects or the receipts do not verify.
func TestRun(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	if err := apdemo.Run(context.Background(), &out, apdemo.Config{}); err != nil {
		t.Fatalf("demo: %v\n%s", err, out.String())
	}
	for _, want := range []string{
		"DENY resolve.no_trusted_source",
		"Payments go only to the vendor's bank account on file",
		"call-back",
		"the bill is already paid",
		"very likely the same invoice as a bill of the vendor that is already paid",
		"STEP-UP (confirm)",
		"to DE89 3704 0044 0532 0130 00",
		"verified",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("demo output does not show %q", want)
		}
	}
	if strings.Contains(out.String(), "UNEXPECTED") || strings.Contains(out.String(), "LT12 1000 0111 0100 1000 (posted)") {
		t.Fatalf("demo output reports an unexpected outcome:\n%s", out.String())
	}
	var again bytes.Buffer
	if err := apdemo.Run(context.Background(), &again, apdemo.Config{}); err != nil {
		t.Fatal(err)
	}
	if again.String() != out.String() {
		t.Error("two runs print different receipts: the demo is not deterministic")
	}
}

// TestRunOverAnotherSource: the scenario plays over any erp.Source given
// (as it does over Odoo), checks its rights hook, and refuses to run again
// on bills it paid.
func TestRunOverAnotherSource(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	books := ap.DemoERP(nil) // on the real clock: the account on file is old enough
	calls := int64(0)
	rights := errors.New("the payer can add a bank account")
	var out bytes.Buffer
	err := apdemo.Run(ctx, &out, apdemo.Config{Books: books, Name: "intentplane test demo",
		Calls: func() int64 { calls++; return calls }, Rights: func(context.Context, string) error { return rights }})
	if err == nil || !strings.Contains(out.String(), "UNEXPECTED: the payer can add a bank account") {
		t.Fatalf("a failed rights check was not reported: %v\n%s", err, out.String())
	}
	for _, want := range []string{"intentplane test demo: the agent proposes", "calls to the ERP)", "payment state paid", "refused, every time"} {
		if want == "refused, every time" {
			if strings.Contains(out.String(), want) {
				t.Errorf("output claims %q after a failed check", want)
			}
			continue
		}
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q", want)
		}
	}
	if strings.Contains(out.String(), "A clerk enters") {
		t.Error("the duplicate-bill step ran without AddBill")
	}
	// Paid bills: the scenario cannot be played again on the same books.
	if err := apdemo.Run(ctx, &bytes.Buffer{}, apdemo.Config{Books: books}); err == nil || !strings.Contains(err.Error(), "not open") {
		t.Errorf("a second run on paid bills: %v", err)
	}
}
