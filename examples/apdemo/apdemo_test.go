package apdemo_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/intentplane/intentplane/examples/apdemo"
)

// TestRun plays the scenario: Run fails if any decision differs from the
// one the scenario expects or the receipts do not verify.
func TestRun(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	if err := apdemo.Run(context.Background(), &out); err != nil {
		t.Fatalf("demo: %v\n%s", err, out.String())
	}
	for _, want := range []string{
		"DENY resolve.no_trusted_source",
		"Payments go only to the vendor's bank account on file",
		"call-back",
		"the bill is already paid",
		"same invoice entered twice",
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
	if err := apdemo.Run(context.Background(), &again); err != nil {
		t.Fatal(err)
	}
	if again.String() != out.String() {
		t.Error("two runs print different receipts: the demo is not deterministic")
	}
}
