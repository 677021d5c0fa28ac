package policy_test

import (
	"errors"
	"math"
	"os"
	"strings"
	"sync"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"

	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/policy"
)

const testSchema = `entity Owner;
entity Resource;
action "bank.send_money" appliesTo {
  principal: Owner,
  resource: Resource,
  context: { amount: Long, approval: { confirm: Bool, four_eyes: Bool } },
};
`

func mustLoad(t testing.TB, dir string) *policy.Engine {
	t.Helper()
	e, err := policy.Load(os.DirFS(dir))
	if err != nil {
		t.Fatalf("Load(%s): %v", dir, err)
	}
	return e
}

func TestLoadErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		files map[string]string
		want  policy.LoadError // Msg is a substring of the message
	}{
		{
			name: "missing id",
			files: map[string]string{"policy.cedar": "// allow\n\n" +
				`permit (principal, action, resource);`},
			want: policy.LoadError{File: "policy.cedar", Line: 3, Column: 1, Msg: "permit policy has no @id"},
		},
		{
			name: "duplicate id across files",
			files: map[string]string{
				"a.cedar": `@id("p") permit (principal, action, resource);`,
				"b.cedar": "\n" + `@id("p") forbid (principal, action, resource);`,
			},
			want: policy.LoadError{File: "b.cedar", Line: 2, Column: 1, PolicyID: "p", Msg: `duplicate @id "p" (first at a.cedar:1)`},
		},
		{
			name:  "bad approval value",
			files: map[string]string{"policy.cedar": `@id("g") @approval("yes") forbid (principal, action, resource) unless { context.approval.confirm };`},
			want:  policy.LoadError{File: "policy.cedar", Line: 1, Column: 1, PolicyID: "g", Msg: `@approval("yes") must be "confirm" or "four_eyes"`},
		},
		{
			name:  "approval on permit",
			files: map[string]string{"policy.cedar": `@id("p") @approval("confirm") permit (principal, action, resource);`},
			want:  policy.LoadError{File: "policy.cedar", Line: 1, Column: 1, PolicyID: "p", Msg: "@approval is allowed only on forbid"},
		},
		{
			name: "type error against the schema",
			files: map[string]string{"policy.cedar": "@id(\"ok\") permit (principal, action, resource);\n" +
				`@id("bad") forbid (principal, action, resource) when { context.amount > "lots" };`},
			want: policy.LoadError{File: "policy.cedar", Line: 2, Column: 1, PolicyID: "bad", Msg: "expected Long but saw String"},
		},
		{
			name:  "missing context attribute",
			files: map[string]string{"policy.cedar": `@id("bad") forbid (principal, action, resource) when { context.nope };`},
			want:  policy.LoadError{File: "policy.cedar", Line: 1, Column: 1, PolicyID: "bad", Msg: "attribute `nope` in context"},
		},
		{
			name:  "unknown action",
			files: map[string]string{"policy.cedar": `@id("x") permit (principal, action == Action::"bank.delete_all", resource);`},
			want:  policy.LoadError{File: "policy.cedar", Line: 1, Column: 1, PolicyID: "x", Msg: "unrecognized action"},
		},
		{
			name:  "parse error",
			files: map[string]string{"policy.cedar": "@id(\"x\")\npermit (principal, action, resource)\nwhen { context.amount > };"},
			want:  policy.LoadError{File: "policy.cedar", Line: 3, Column: 26, Msg: "parse error"},
		},
		{
			name: "schema parse error",
			files: map[string]string{
				"policy.cedar":       `@id("x") permit (principal, action, resource);`,
				"schema.cedarschema": "entity Owner;\nentity Resource;\naction \"a\" appliesTo { principal: Owner, resource: };",
			},
			want: policy.LoadError{File: "schema.cedarschema", Line: 3, Column: 52, Msg: "expected"},
		},
		{
			name: "schema with undefined type",
			files: map[string]string{
				"policy.cedar":       `@id("x") permit (principal, action, resource);`,
				"schema.cedarschema": "entity Owner;\naction \"a\" appliesTo { principal: Owner, resource: Resource };",
			},
			want: policy.LoadError{File: "schema.cedarschema", Msg: `undefined entity type "Resource"`},
		},
		{
			name: "action not on Owner",
			files: map[string]string{
				"policy.cedar":       `@id("x") permit (principal, action, resource);`,
				"schema.cedarschema": "entity User; entity Resource;\naction \"a\" appliesTo { principal: User, resource: Resource };",
			},
			want: policy.LoadError{File: "schema.cedarschema", Msg: `action "a" does not apply to principal type Owner`},
		},
		{
			name:  "no policy file",
			files: map[string]string{},
			want:  policy.LoadError{File: ".", Msg: "no *.cedar policy file"},
		},
		{
			name: "two schemas",
			files: map[string]string{
				"policy.cedar":  `@id("x") permit (principal, action, resource);`,
				"b.cedarschema": testSchema,
			},
			want: policy.LoadError{File: ".", Msg: "more than one schema file: b.cedarschema, schema.cedarschema"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			fsys := fstest.MapFS{}
			if _, ok := tt.files["schema.cedarschema"]; !ok {
				fsys["schema.cedarschema"] = &fstest.MapFile{Data: []byte(testSchema)}
			}
			for name, text := range tt.files {
				fsys[name] = &fstest.MapFile{Data: []byte(text)}
			}
			_, err := policy.Load(fsys)
			var le *policy.LoadError
			if !errors.As(err, &le) {
				t.Fatalf("Load: got %v (%T), want a *LoadError", err, err)
			}
			if !strings.Contains(le.Msg, tt.want.Msg) {
				t.Errorf("Msg = %q, want it to contain %q", le.Msg, tt.want.Msg)
			}
			got := *le
			got.Msg = tt.want.Msg
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("LoadError mismatch (-want, +got):\n%s\n(error: %v)", diff, err)
			}
		})
	}
}

func TestLoadErrorString(t *testing.T) {
	t.Parallel()
	fsys := fstest.MapFS{
		"schema.cedarschema": {Data: []byte(testSchema)},
		"policy.cedar":       {Data: []byte("\n\n\n\n\n\n\n\n\n\n\n" + `permit (principal, action, resource);`)},
	}
	_, err := policy.Load(fsys)
	if got, want := err.Error(), "policy.cedar:12:1: permit policy has no @id"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	le := &policy.LoadError{File: "schema.cedarschema", Msg: "boom"}
	if got, want := le.Error(), "schema.cedarschema: boom"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}

// sendContext is a valid context for bank.send_money in testdata/bank.
func sendContext(amount int64, mut func(s *policy.Standard)) *policy.Standard {
	s := &policy.Standard{
		Args:  intent.Args{"recipient": intent.Str("DE89370400440532013000"), "amount": intent.Int(amount), "subject": intent.Str("rent")},
		Facts: map[string]intent.Value{"beneficiary_known": intent.Bool(true), "daily_total": intent.Int(0)},
		Mode:  "normal", Amount: intent.Amount(amount),
	}
	if mut != nil {
		mut(s)
	}
	return s
}

func TestEvaluate(t *testing.T) {
	t.Parallel()
	e := mustLoad(t, "testdata/bank")
	send := func(ctx *policy.Standard) policy.Request {
		return policy.Request{Principal: "alice", Action: "bank.send_money", Resource: "acct-1", Standard: ctx}
	}
	tests := []struct {
		name string
		req  policy.Request
		want policy.Result
	}{
		{
			name: "allow",
			req:  send(sendContext(5000, nil)),
			want: policy.Result{Verdict: intent.Allow, Level: intent.LevelAuto,
				Policies: []string{"pay-known"}, Reasons: []string{"payments to a known beneficiary"}},
		},
		{
			name: "allow with an amount value and no resource",
			req: policy.Request{Principal: "alice", Action: "bank.send_money", Standard: sendContext(5000, func(s *policy.Standard) {
				s.Args["amount"] = intent.AmountValue(5000, 2)
			})},
			want: policy.Result{Verdict: intent.Allow, Level: intent.LevelAuto,
				Policies: []string{"pay-known"}, Reasons: []string{"payments to a known beneficiary"}},
		},
		{
			name: "entity escape in a string argument stays a string",
			req: send(sendContext(5000, func(s *policy.Standard) {
				s.Args["recipient"] = intent.Str(`{"__entity":{"type":"Owner","id":"x"}}`)
				s.Args["subject"] = intent.Str(`{"__extn":{"fn":"decimal","arg":"1.0"}}`)
			})),
			want: policy.Result{Verdict: intent.Allow, Level: intent.LevelAuto,
				Policies: []string{"pay-known"}, Reasons: []string{"payments to a known beneficiary"}},
		},
		{
			name: "no permit matches",
			req: send(sendContext(5000, func(s *policy.Standard) {
				s.Facts["beneficiary_known"] = intent.Bool(false)
			})),
			want: policy.Result{Verdict: intent.Deny, Level: intent.LevelAuto,
				Reasons: []string{policy.NoPermitReason}},
		},
		{
			name: "step up to confirm",
			req:  send(sendContext(150000, nil)),
			want: policy.Result{Verdict: intent.StepUp, Level: intent.LevelConfirm,
				Policies: []string{"confirm-large"}, Reasons: []string{"payments above 1,000.00 need a human to confirm"}},
		},
		{
			name: "confirmed",
			req: send(sendContext(150000, func(s *policy.Standard) {
				s.Confirm = true
			})),
			want: policy.Result{Verdict: intent.Allow, Level: intent.LevelAuto,
				Policies: []string{"pay-known"}, Reasons: []string{"payments to a known beneficiary"}},
		},
		{
			name: "two guards: the highest level, policies sorted",
			req:  send(sendContext(2000000, nil)),
			want: policy.Result{Verdict: intent.StepUp, Level: intent.LevelFourEyes,
				Policies: []string{"confirm-large", "four-eyes-huge"},
				Reasons:  []string{"payments above 1,000.00 need a human to confirm", "payments above 10,000.00 need two approvers"}},
		},
		{
			name: "a plain forbid among guards denies",
			req: send(sendContext(2000000, func(s *policy.Standard) {
				s.Facts["daily_total"] = intent.Int(4000000)
			})),
			want: policy.Result{Verdict: intent.Deny, Level: intent.LevelAuto,
				Policies: []string{"confirm-large", "daily-limit", "four-eyes-huge"},
				Reasons: []string{"payments above 1,000.00 need a human to confirm",
					"the daily limit of 50,000.00 would be exceeded", "payments above 10,000.00 need two approvers"}},
		},
		{
			// Cedar skips the erroring forbid and would allow.
			name: "integer overflow in a forbid denies",
			req: send(sendContext(5000, func(s *policy.Standard) {
				s.Facts["daily_total"] = intent.Int(math.MaxInt64)
			})),
			want: policy.Result{Verdict: intent.Deny, Level: intent.LevelAuto,
				Errors:     []string{`policy "daily-limit": integer overflow while attempting to add ` + "`9223372036854775807` with `5000`"},
				Overflowed: []string{"daily-limit"}},
		},
		{
			name: "missing context attribute denies",
			req: send(sendContext(5000, func(s *policy.Standard) {
				delete(s.Facts, "daily_total")
			})),
			want: policy.Result{Verdict: intent.Deny, Level: intent.LevelAuto,
				Errors: []string{`request: context does not match the schema for Action::"bank.send_money"`}},
		},
		{
			name: "unconvertible value denies",
			req: send(sendContext(5000, func(s *policy.Standard) {
				s.Args["amount"] = intent.Value{Kind: 99}
			})),
			want: policy.Result{Verdict: intent.Deny, Level: intent.LevelAuto,
				Errors: []string{"context.args.amount: value of invalid kind 99"}},
		},
		{
			name: "unknown action denies",
			req:  policy.Request{Principal: "alice", Action: "bank.close_account", Standard: sendContext(0, nil)},
			want: policy.Result{Verdict: intent.Deny, Level: intent.LevelAuto,
				Errors: []string{"request: action `Action::\"bank.close_account\"` does not exist in the supplied schema"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := e.Evaluate(tt.req)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Evaluate mismatch (-want, +got):\n%s", diff)
			}
		})
	}
}

func TestEvaluateConcurrent(t *testing.T) {
	t.Parallel()
	e := mustLoad(t, "testdata/bank")
	req := policy.Request{Principal: "alice", Action: "bank.send_money", Resource: "acct-1", Standard: sendContext(150000, nil)}
	want := e.Evaluate(req)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 100 {
				if got := e.Evaluate(req); got.Verdict != want.Verdict {
					t.Errorf("Evaluate = %v, want %v", got.Verdict, want.Verdict)
				}
			}
		})
	}
	wg.Wait()
}

func TestPoliciesAndActions(t *testing.T) {
	t.Parallel()
	e := mustLoad(t, "testdata/bank")
	var ids []string
	var guards []string
	for _, p := range e.Policies() {
		ids = append(ids, p.ID)
		if p.Guard() {
			guards = append(guards, p.ID+"="+string(p.Approval))
		}
	}
	if diff := cmp.Diff([]string{"read-balance", "pay-known", "read-only-mandate", "confirm-large", "four-eyes-huge", "daily-limit"}, ids); diff != "" {
		t.Errorf("Policies mismatch (-want, +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"confirm-large=confirm", "four-eyes-huge=four_eyes"}, guards); diff != "" {
		t.Errorf("guards mismatch (-want, +got):\n%s", diff)
	}
	first := e.Policies()[0]
	if want := (policy.Info{ID: "read-balance", Effect: "permit", Approval: intent.LevelAuto,
		Reason: "reading the balance moves no money", File: "policy.cedar", Line: 2}); first != want {
		t.Errorf("Policies()[0] = %+v, want %+v", first, want)
	}
	if diff := cmp.Diff([]intent.Action{"bank.get_balance", "bank.send_money"}, e.Actions()); diff != "" {
		t.Errorf("Actions mismatch (-want, +got):\n%s", diff)
	}
}
