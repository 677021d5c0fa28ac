package approvals

import (
	"testing"

	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/receipt"
)

// TestArgsTitle: the decision page never titles as executed the arguments
// of an operation that did not execute, nor as not executed those of one
// whose outcome is unknown.
func TestArgsTitle(t *testing.T) {
	resolved := []intent.Resolved{{Param: "iban", Value: "DE89370400440532013000"}}
	for _, tt := range []struct {
		r    receipt.Receipt
		want string
	}{
		{receipt.Receipt{Result: receipt.ResultExecuted, Resolved: resolved}, "What executed"},
		{receipt.Receipt{Result: receipt.ResultFailed, Resolved: resolved}, "What was sent to execute (the outcome is unknown: it may have taken effect)"},
		{receipt.Receipt{Result: receipt.ResultNotExecuted, Resolved: resolved}, "Arguments after resolution (nothing executed)"},
		{receipt.Receipt{Result: receipt.ResultNotExecuted}, "Arguments as the agent sent them (not resolved, nothing executed)"},
		{receipt.Receipt{}, "Arguments as the agent sent them (not resolved, nothing executed)"},
	} {
		if got := argsTitle(tt.r); got != tt.want {
			t.Errorf("argsTitle(result %q, %d resolved) = %q, want %q", tt.r.Result, len(tt.r.Resolved), got, tt.want)
		}
	}
}
