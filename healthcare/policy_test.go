package healthcare_test

import (
	"testing"

	"github.com/intentplane/intentplane/core/policy"
	"github.com/intentplane/intentplane/policies"
)

// TestPolicyMutants checks that the decision corpus of policies/healthcare
// pins the policy down: every mutant policy.Mutate builds must be killed by
// a test, or be equivalent to the original.
func TestPolicyMutants(t *testing.T) {
	t.Parallel()
	fsys, err := policies.Pack("healthcare")
	if err != nil {
		t.Fatal(err)
	}
	r, err := policy.Mutate(fsys)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Mutants) == 0 {
		t.Fatal("no mutants: the policy has no forbid and no condition")
	}
	for _, m := range r.Mutants {
		switch {
		case m.Killed:
			t.Logf("killed %s by %s", m.ID, m.KilledBy)
		case m.Equivalent:
			t.Logf("equivalent %s: %s", m.ID, m.Why)
		default:
			t.Errorf("mutant %s (%s) survives: %s", m.ID, m.Description, m.Why)
		}
	}
}
