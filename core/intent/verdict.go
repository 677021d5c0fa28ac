package intent

import "fmt"

// Verdict is the outcome of a decision: the policy's result, the gateway's
// decision and the receipt that records it all use this one type. The zero
// Verdict is Deny, so a decision that was never filled in denies.
type Verdict int

// The verdicts. Deny is final; StepUp means a human must approve this exact
// operation (at the level the determining approval guards name) before it
// can execute.
const (
	Deny   Verdict = iota // some forbid matched, no permit matched, or anything failed
	Allow                 // a permit matched and no forbid did
	StepUp                // only approval guards matched: a human must approve
)

// String returns "deny", "allow" or "step_up", the spelling receipts, logs
// and front doors use; any other value gives "Verdict(<n>)".
func (v Verdict) String() string {
	switch v {
	case Deny:
		return "deny"
	case Allow:
		return "allow"
	case StepUp:
		return "step_up"
	}
	return fmt.Sprintf("Verdict(%d)", int(v))
}

// ParseVerdict is the inverse of [Verdict.String]. It returns Deny and an
// error for any other text.
func ParseVerdict(s string) (Verdict, error) {
	switch s {
	case "deny":
		return Deny, nil
	case "allow":
		return Allow, nil
	case "step_up":
		return StepUp, nil
	}
	return Deny, fmt.Errorf("intent: unknown verdict %q (want allow, deny or step_up)", s)
}

// MarshalText encodes v as [Verdict.String]; an out-of-range value is an
// error.
func (v Verdict) MarshalText() ([]byte, error) {
	if v < Deny || v > StepUp {
		return nil, fmt.Errorf("intent: cannot encode %s", v)
	}
	return []byte(v.String()), nil
}

// UnmarshalText decodes what [Verdict.MarshalText] encodes.
func (v *Verdict) UnmarshalText(b []byte) error {
	p, err := ParseVerdict(string(b))
	if err != nil {
		return err
	}
	*v = p
	return nil
}
