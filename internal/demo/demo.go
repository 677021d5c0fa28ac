// Package demo holds what intentplane's demo scenarios share: checking a
// decision against the outcome a step expects, and printing a refusal and
// the policies behind a decision. The scenarios are its subpackages: emma
// (`intentplane demo`) and apdemo (`intentplane demo ap` and, over a real
// Odoo, `intentplane odoo demo`).
//
// Only cmd/ and the scenarios import it.
package demo

import (
	"fmt"
	"io"
	"strings"

	"github.com/intentplane/intentplane/core/gateway"
	"github.com/intentplane/intentplane/core/intent"
)

// Outcome is what a step of a scenario must come to.
type Outcome struct {
	// Verdict is the decision expected.
	Verdict intent.Verdict
	// Code is the refusal code expected; empty means any (none for allow).
	Code intent.Code
	// Check, when set, checks the decision further (what executed).
	Check func(d gateway.Decision) error
}

// Unexpected says how d differs from want, or returns "" when it does not.
// An allowed decision must also have executed.
func Unexpected(d gateway.Decision, want Outcome) string {
	if d.Verdict != want.Verdict {
		return fmt.Sprintf("verdict %s, expected %s", d.Verdict, want.Verdict)
	}
	if want.Code != "" && (d.Refusal == nil || d.Refusal.Code != want.Code) {
		return fmt.Sprintf("refusal %+v, expected code %s", d.Refusal, want.Code)
	}
	if want.Verdict == intent.Allow && !d.Executed {
		return "allowed but not executed"
	}
	if want.Check != nil {
		if err := want.Check(d); err != nil {
			return err.Error()
		}
	}
	return ""
}

// ShowRefusal writes a step-up's level, or a denial, with its code and the
// reason the agent reads.
func ShowRefusal(w io.Writer, d gateway.Decision) {
	code, msg := intent.Code(""), ""
	if d.Refusal != nil {
		code, msg = d.Refusal.Code, d.Refusal.Message
	}
	if d.Verdict == intent.StepUp {
		fmt.Fprintf(w, "    STEP-UP (%s) %s\n    reason: %s\n", d.Level, code, msg)
		return
	}
	fmt.Fprintf(w, "    DENY %s\n    reason: %s\n", code, msg)
}

// ShowPolicies ends a decision's receipt line with the policies that
// determined it, if any.
func ShowPolicies(w io.Writer, d gateway.Decision) {
	if len(d.Policies) > 0 {
		fmt.Fprintf(w, ", policies %s", strings.Join(d.Policies, ", "))
	}
	fmt.Fprintln(w)
}
