package demo_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/intentplane/intentplane/core/gateway"
	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/internal/demo"
)

func TestUnexpected(t *testing.T) {
	t.Parallel()
	denied := gateway.Decision{Verdict: intent.Deny, Refusal: &intent.Refusal{Code: intent.CodeNotTrusted, Message: "no"}}
	for _, tc := range []struct {
		name string
		d    gateway.Decision
		want demo.Outcome
		says string // "" when as expected
	}{
		{"denied as expected", denied, demo.Outcome{Verdict: intent.Deny, Code: intent.CodeNotTrusted}, ""},
		{"another verdict", denied, demo.Outcome{Verdict: intent.Allow}, "verdict deny, expected allow"},
		{"another code", denied, demo.Outcome{Verdict: intent.Deny, Code: intent.CodePolicyDenied}, "expected code policy.denied"},
		{"allowed, not executed", gateway.Decision{Verdict: intent.Allow}, demo.Outcome{Verdict: intent.Allow}, "allowed but not executed"},
		{"check fails", gateway.Decision{Verdict: intent.Allow, Executed: true}, demo.Outcome{Verdict: intent.Allow, Check: func(gateway.Decision) error { return errors.New("wrong payee") }}, "wrong payee"},
		{"allowed and executed", gateway.Decision{Verdict: intent.Allow, Executed: true}, demo.Outcome{Verdict: intent.Allow}, ""},
	} {
		got := demo.Unexpected(tc.d, tc.want)
		if (tc.says == "") != (got == "") || !strings.Contains(got, tc.says) {
			t.Errorf("%s: Unexpected = %q, want %q", tc.name, got, tc.says)
		}
	}
	var b bytes.Buffer
	demo.ShowRefusal(&b, denied)
	demo.ShowPolicies(&b, gateway.Decision{Policies: []string{"a", "b"}})
	if want := "    DENY resolve.no_trusted_source\n    reason: no\n, policies a, b\n"; b.String() != want {
		t.Errorf("shown %q, want %q", b.String(), want)
	}
}
