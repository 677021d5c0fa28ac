package policytest_test

import (
	"os"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"

	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/policy"
	"github.com/intentplane/intentplane/core/policy/policytest"
)

func TestCorpus(t *testing.T) {
	t.Parallel()
	for _, dir := range []string{"../testdata/bank", "../testdata/equiv"} {
		t.Run(dir, func(t *testing.T) {
			t.Parallel()
			e := mustLoad(t, dir)
			cases, err := policytest.LoadCases(os.DirFS(dir))
			if err != nil {
				t.Fatal(err)
			}
			if len(cases) == 0 {
				t.Fatal("no test cases")
			}
			for _, f := range policytest.Run(e, cases) {
				t.Error(f)
			}
		})
	}
}

func TestLoadCasesDecoding(t *testing.T) {
	t.Parallel()
	fsys := fstest.MapFS{"tests/one.json": {Data: []byte(`{"name": "n", "principal": "alice", "action": "bank.send_money",
		"context": {"amount": 12, "args": {"n": -3, "ok": true, "s": "x"}, "facts": {"f": false},
		"approval": {"confirm": true, "four_eyes": false}, "mandate": {"mode": "strict"}}, "decision": "step_up", "level": "confirm"}`)}}
	cases, err := policytest.LoadCases(fsys)
	if err != nil {
		t.Fatal(err)
	}
	want := []policytest.Case{{
		Name: "n", Principal: "alice", Action: "bank.send_money",
		Context: policy.Standard{
			Args:  intent.Args{"n": intent.Int(-3), "ok": intent.Bool(true), "s": intent.Str("x")},
			Facts: map[string]intent.Value{"f": intent.Bool(false)}, Confirm: true, Mode: "strict", Amount: 12,
		},
		Decision: "step_up", Level: "confirm", File: "tests/one.json",
	}}
	if diff := cmp.Diff(want, cases); diff != "" {
		t.Errorf("LoadCases mismatch (-want, +got):\n%s", diff)
	}
}

func TestLoadCasesErrors(t *testing.T) {
	t.Parallel()
	const head = `"name": "n", "principal": "alice", "action": "a", `
	tests := []struct {
		name, json, want string
	}{
		{"unknown key", `{` + head + `"decision": "allow", "approved": true}`, `unknown field "approved"`},
		{"float", `{` + head + `"decision": "allow", "context": {"amount": 1.5}}`, "context.amount: 1.5 is not an int64"},
		{"too large", `{` + head + `"decision": "allow", "context": {"amount": 9223372036854775808}}`, "is not an int64"},
		{"float in args", `{` + head + `"decision": "allow", "context": {"args": {"a": 1e3}}}`, "context.args.a: 1e3 is not an int64"},
		{"null", `{` + head + `"decision": "allow", "context": {"facts": {"a": null}}}`, "context.facts.a: null is not allowed"},
		{"array", `{` + head + `"decision": "allow", "context": {"args": {"a": ["x"]}}}`, "context.args.a: only strings, booleans and integers"},
		{"nested object", `{` + head + `"decision": "allow", "context": {"args": {"a": {"b": 1}}}}`, "context.args.a: only strings, booleans and integers"},
		{"unknown context key", `{` + head + `"decision": "allow", "context": {"resource": "x"}}`, `unknown field "resource"`},
		{"unknown approval key", `{` + head + `"decision": "allow", "context": {"approval": {"confirm": true, "three_eyes": true}}}`, `unknown field "three_eyes"`},
		{"approval not a bool", `{` + head + `"decision": "allow", "context": {"approval": {"confirm": "yes"}}}`, "cannot unmarshal string"},
		{"bad decision", `{` + head + `"decision": "maybe"}`, `unknown verdict "maybe"`},
		{"bad level", `{` + head + `"decision": "step_up", "level": "three_eyes"}`, `unknown level "three_eyes"`},
		{"missing name", `{"principal": "alice", "action": "a", "decision": "allow"}`, "missing name"},
		{"duplicate name", `[{` + head + `"decision": "allow"}, {` + head + `"decision": "deny"}]`, `duplicate case name "n"`},
		{"trailing data", `{` + head + `"decision": "allow"} {}`, "trailing data"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := policytest.LoadCases(fstest.MapFS{"tests/x.json": {Data: []byte(tt.json)}})
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.HasPrefix(err.Error(), "tests/x.json: ") {
				t.Errorf("LoadCases: got %v, want an error about tests/x.json containing %q", err, tt.want)
			}
		})
	}
}

func TestRunTestsFailures(t *testing.T) {
	t.Parallel()
	e := mustLoad(t, "../testdata/bank")
	cases := []policytest.Case{
		{Name: "wrong decision", Principal: "alice", Action: "bank.send_money", Context: sendContext(5000, nil), Decision: "deny"},
		{Name: "wrong level", Principal: "alice", Action: "bank.send_money", Context: sendContext(150000, nil), Decision: "step_up", Level: "four_eyes"},
		{Name: "wrong policies", Principal: "alice", Action: "bank.send_money", Context: sendContext(5000, nil), Decision: "allow", Policies: []string{"read-balance"}},
		{Name: "unexpected errors", Principal: "alice", Action: "bank.send_money", Decision: "deny"},
		{Name: "expected errors", Principal: "alice", Action: "bank.send_money", Decision: "deny", Errors: true},
		{Name: "right", Principal: "alice", Action: "bank.send_money", Context: sendContext(5000, nil), Decision: "allow", Policies: []string{"pay-known"}},
	}
	var got []string
	for _, f := range policytest.Run(e, cases) {
		got = append(got, f.Case.Name+": "+f.Msg)
	}
	want := []string{
		"wrong decision: decision: want deny, got allow; (determined by [pay-known])",
		"wrong level: level: want four_eyes, got confirm; (determined by [confirm-large])",
		"wrong policies: policies: want [read-balance], got [pay-known]; (determined by [pay-known])",
		`unexpected errors: unexpected errors: request: context does not match the schema for Action::"bank.send_money"`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Run mismatch (-want, +got):\n%s", diff)
	}
}

func mustLoad(t testing.TB, dir string) *policy.Engine {
	t.Helper()
	e, err := policy.Load(os.DirFS(dir))
	if err != nil {
		t.Fatalf("Load(%s): %v", dir, err)
	}
	return e
}

// sendContext is a valid context for bank.send_money in testdata/bank.
func sendContext(amount int64, mut func(s *policy.Standard)) policy.Standard {
	s := policy.Standard{
		Args:  intent.Args{"recipient": intent.Str("DE89370400440532013000"), "amount": intent.Int(amount), "subject": intent.Str("rent")},
		Facts: map[string]intent.Value{"beneficiary_known": intent.Bool(true), "daily_total": intent.Int(0)},
		Mode:  "normal", Amount: intent.Amount(amount),
	}
	if mut != nil {
		mut(&s)
	}
	return s
}
