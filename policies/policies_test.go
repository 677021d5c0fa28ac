package policies_test

import (
	"errors"
	"io/fs"
	"testing"

	"github.com/intentplane/intentplane/core/policy"
	"github.com/intentplane/intentplane/core/policy/policytest"
	"github.com/intentplane/intentplane/policies"
)

// TestPacks loads every embedded pack, runs its decision corpus, and runs
// the mutation check: a mutant that survives the corpus and cannot be shown
// to be equivalent fails the test, with the request to add to the corpus.
// This is the one place every pack's policy is tested; CI also runs
// `intentplane policy mutate` for each pack.
func TestPacks(t *testing.T) {
	t.Parallel()
	names := policies.Packs()
	if len(names) == 0 {
		t.Fatal("no packs")
	}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			fsys, err := policies.Pack(name)
			if err != nil {
				t.Fatal(err)
			}
			e, err := policy.Load(fsys)
			if err != nil {
				t.Fatal(err)
			}
			cases, err := policytest.LoadCases(fsys)
			if err != nil {
				t.Fatal(err)
			}
			if len(cases) == 0 {
				t.Fatal("pack has no tests")
			}
			for _, f := range policytest.Run(e, cases) {
				t.Error(f)
			}
			if t.Failed() || testing.Short() {
				return
			}
			r, err := policytest.Mutate(fsys)
			if err != nil {
				t.Fatal(err)
			}
			if len(r.Mutants) == 0 {
				t.Fatal("no mutants: the policy was not read")
			}
			for _, m := range r.Survivors() {
				if m.Equivalent {
					t.Logf("equivalent mutant %s (%s): %s", m.ID, m.Description, m.Why)
					continue
				}
				t.Errorf("mutant %s (%s) survives: %s", m.ID, m.Description, m.Why)
			}
		})
	}
}

func TestPackErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		want error
	}{
		{"nope", fs.ErrNotExist},
		{"../demo", fs.ErrInvalid},
		{"", fs.ErrInvalid},
		{".", fs.ErrInvalid},
		{"demo/tests", fs.ErrInvalid},
	}
	for _, tt := range tests {
		if _, err := policies.Pack(tt.name); !errors.Is(err, tt.want) {
			t.Errorf("Pack(%q): got %v, want %v", tt.name, err, tt.want)
		}
	}
}

func TestPacksListsDemo(t *testing.T) {
	t.Parallel()
	found := false
	for _, n := range policies.Packs() {
		found = found || n == "demo"
	}
	if !found {
		t.Errorf("Packs() = %v, want it to include demo", policies.Packs())
	}
}
