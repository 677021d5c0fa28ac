package policytest_test

import (
	"io/fs"
	"os"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"

	"github.com/intentplane/intentplane/core/policy/policytest"
)

// copyFS copies dir into a MapFS, leaving out the files in drop.
func copyFS(t *testing.T, dir string, drop ...string) fstest.MapFS {
	t.Helper()
	out := fstest.MapFS{}
	err := fs.WalkDir(os.DirFS(dir), ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		for _, x := range drop {
			if x == name {
				return nil
			}
		}
		b, err := fs.ReadFile(os.DirFS(dir), name)
		out[name] = &fstest.MapFile{Data: b}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestMutateKillsAll(t *testing.T) {
	t.Parallel()
	r, err := policytest.Mutate(os.DirFS("../testdata/bank"))
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, m := range r.Mutants {
		ids = append(ids, m.ID)
		if !m.Killed {
			t.Errorf("mutant %s (%s) survived: %s", m.ID, m.Description, m.Why)
		}
	}
	want := []string{
		// (1) forbids, (2) guards, (3) permit conditions, (4) forbid conditions
		"read-only-mandate:remove", "daily-limit:remove",
		"confirm-large:remove", "four-eyes-huge:remove",
		"pay-known:cond1",
		"read-only-mandate:cond1", "confirm-large:cond1", "confirm-large:cond2",
		"four-eyes-huge:cond1", "four-eyes-huge:cond2", "daily-limit:cond1",
	}
	if diff := cmp.Diff(want, ids); diff != "" {
		t.Errorf("mutants mismatch (-want, +got):\n%s", diff)
	}
	if got := r.Survivors(); len(got) != 0 {
		t.Errorf("Survivors() = %v, want none", got)
	}
}

func TestMutateReportsSurvivor(t *testing.T) {
	t.Parallel()
	r, err := policytest.Mutate(copyFS(t, "../testdata/bank", "tests/daily_limit.json"))
	if err != nil {
		t.Fatal(err)
	}
	s := r.Survivors()
	if len(s) != 1 {
		t.Fatalf("Survivors() = %+v, want one", s)
	}
	got := s[0]
	if got.ID != "daily-limit:remove" || got.PolicyID != "daily-limit" || got.Equivalent {
		t.Errorf("survivor = %+v, want daily-limit:remove, not equivalent", got)
	}
	if want := `remove forbid "daily-limit"`; got.Description != want {
		t.Errorf("Description = %q, want %q", got.Description, want)
	}
	for _, w := range []string{"not equivalent: bank.send_money on the context of test ", "deny on the original", "add a test like it"} {
		if !strings.Contains(got.Why, w) {
			t.Errorf("Why = %q, want it to contain %q", got.Why, w)
		}
	}
}

func TestMutateEquivalent(t *testing.T) {
	t.Parallel()
	r, err := policytest.Mutate(os.DirFS("../testdata/equiv"))
	if err != nil {
		t.Fatal(err)
	}
	type survivor struct{ ID, Why string }
	var got []survivor
	for _, m := range r.Survivors() {
		if !m.Equivalent {
			t.Errorf("survivor %s is not equivalent: %s", m.ID, m.Why)
		}
		got = append(got, survivor{m.ID, m.Why})
	}
	want := []survivor{
		{"block-large-read-only:remove", `another forbid with a superset condition denies the same requests ("block-large")`},
		{"pay-known:cond1.1", "the removed condition is implied by the scope"},
		{"block-large-read-only:cond1.2", "no difference on N generated requests: likely equivalent"},
	}
	for i := range got {
		if strings.HasPrefix(got[i].Why, "no difference on ") {
			if r.Requests < 100 {
				t.Errorf("only %d generated requests", r.Requests)
			}
			got[i].Why = strings.Replace(got[i].Why, " "+itoa(r.Requests)+" ", " N ", 1)
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("survivors mismatch (-want, +got):\n%s", diff)
	}
}

func itoa(n int) string {
	var b []byte
	for {
		b = append([]byte{byte('0' + n%10)}, b...)
		n /= 10
		if n == 0 {
			return string(b)
		}
	}
}

func TestMutateErrors(t *testing.T) {
	t.Parallel()
	noTests := copyFS(t, "../testdata/bank")
	for name := range noTests {
		if strings.HasPrefix(name, "tests/") {
			delete(noTests, name)
		}
	}
	failing := copyFS(t, "../testdata/bank")
	failing["tests/wrong.json"] = &fstest.MapFile{Data: []byte(`{"name": "wrong", "principal": "alice", "action": "bank.get_balance",
		"context": {"args": {}, "facts": {}, "approval": {"confirm": false, "four_eyes": false}, "mandate": {"mode": "x"}, "amount": 0},
		"decision": "deny"}`)}
	tests := []struct {
		name string
		fsys fs.FS
		want string
	}{
		{"no tests", noTests, "has no tests"},
		{"failing test", failing, "tests/wrong.json: wrong: decision: want deny, got allow"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := policytest.Mutate(tt.fsys)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Mutate: got %v, want an error containing %q", err, tt.want)
			}
		})
	}
}
