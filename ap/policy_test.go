package ap_test

import (
	"testing"

	"github.com/intentplane/intentplane/core/policy"
	"github.com/intentplane/intentplane/policies"
)

// TestPolicyCorpus runs the accounts-payable decision corpus on the policy.
func TestPolicyCorpus(t *testing.T) {
	t.Parallel()
	fsys, err := policies.Pack("ap")
	if err != nil {
		t.Fatal(err)
	}
	e, err := policy.Load(fsys)
	if err != nil {
		t.Fatal(err)
	}
	cases, err := policy.LoadTests(fsys)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range e.RunTests(cases) {
		t.Error(f)
	}
}

// TestPolicyMutants checks that the corpus pins the policy down: every
// mutant (a forbid or guard removed, a condition dropped) that can change a
// decision is killed by some test. A survivor the check cannot show to be
// equivalent fails the test with the request to add to the corpus.
func TestPolicyMutants(t *testing.T) {
	t.Parallel()
	fsys, err := policies.Pack("ap")
	if err != nil {
		t.Fatal(err)
	}
	r, err := policy.Mutate(fsys)
	if err != nil {
		t.Fatal(err)
	}
	killed := 0
	for _, m := range r.Mutants {
		switch {
		case m.Killed:
			killed++
		case m.Equivalent:
			t.Logf("equivalent mutant %s (%s): %s", m.ID, m.Description, m.Why)
		default:
			t.Errorf("mutant %s (%s) survives: %s", m.ID, m.Description, m.Why)
		}
	}
	if len(r.Mutants) == 0 {
		t.Fatal("no mutants: the policy was not read")
	}
	t.Logf("%d mutants, %d killed", len(r.Mutants), killed)
}
