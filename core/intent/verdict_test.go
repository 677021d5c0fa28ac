package intent_test

import (
	"testing"

	"github.com/intentplane/intentplane/core/intent"
)

func TestVerdictText(t *testing.T) {
	t.Parallel()
	for _, v := range []intent.Verdict{intent.Allow, intent.Deny, intent.StepUp} {
		b, err := v.MarshalText()
		if err != nil {
			t.Fatalf("MarshalText(%v): %v", v, err)
		}
		var got intent.Verdict
		if err := got.UnmarshalText(b); err != nil || got != v {
			t.Errorf("UnmarshalText(%q) = %v, %v; want %v", b, got, err, v)
		}
		if p, err := intent.ParseVerdict(v.String()); err != nil || p != v {
			t.Errorf("ParseVerdict(%q) = %v, %v", v.String(), p, err)
		}
	}
	var zero intent.Verdict
	if zero != intent.Deny {
		t.Errorf("the zero Verdict is %v, want deny", zero)
	}
	for _, s := range []string{"maybe", "", "Allow", "DENY", "step-up"} {
		if v, err := intent.ParseVerdict(s); err == nil || v != intent.Deny {
			t.Errorf("ParseVerdict(%q) = %v, %v; want deny and an error", s, v, err)
		}
	}
	if _, err := intent.Verdict(7).MarshalText(); err == nil {
		t.Error("MarshalText(Verdict(7)): no error")
	}
}
