package policy_test

import (
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"

	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/policy"
)

const argsSchema = `entity Owner;
entity Resource;
type Approval = { confirm: Bool, four_eyes: Bool };
type Mandate = { mode: String };
action "pay.send" appliesTo { principal: Owner, resource: Resource, context: {
  args: { iban: String, amount: Long, memo?: String, urgent: Bool, tags: Set<String>, amoun_t?: Long },
  facts: {}, approval: Approval, mandate: Mandate, amount: Long } };
action "pay.read" appliesTo { principal: Owner, resource: Resource, context: {
  args: { memo: String, urgent?: Bool }, facts: {}, approval: Approval, mandate: Mandate, amount: Long } };
`

const argsPolicy = `@id("send") permit (principal, action == Action::"pay.send", resource);
@id("read") permit (principal, action == Action::"pay.read", resource) when { context.args.memo != "" };
@id("memo-guarded") forbid (principal, action == Action::"pay.send", resource)
when { context.args has memo && context.args.memo like "*urgent*" };
@id("urgent") @approval("confirm") forbid (principal, action in [Action::"pay.send", Action::"pay.read"], resource)
when { context.args has urgent && context.args.urgent } unless { context.approval.confirm };
@id("any-action") forbid (principal, action, resource) when { context.amount > 100 && context.facts has iban };
`

// TestArgsAndReading: the schema's context.args of an action, which
// attributes are required and their kinds, and the policies that read an
// argument of an action (issue 24: --check reports optional tool
// arguments a policy needs).
func TestArgsAndReading(t *testing.T) {
	t.Parallel()
	e, err := policy.Load(fstest.MapFS{"p.cedar": {Data: []byte(argsPolicy)}, "s.cedarschema": {Data: []byte(argsSchema)}})
	if err != nil {
		t.Fatal(err)
	}
	args, ok := e.Args("pay.send")
	if !ok {
		t.Fatal("no args for pay.send")
	}
	want := map[string]policy.Arg{
		"iban": {Kind: intent.KindString, Required: true}, "amount": {Kind: intent.KindInt, Required: true},
		"memo": {Kind: intent.KindString}, "urgent": {Kind: intent.KindBool, Required: true},
		"tags": {Required: true}, "amoun_t": {Kind: intent.KindInt},
	}
	if d := cmp.Diff(want, args); d != "" {
		t.Errorf("Args(pay.send) (-want, +got):\n%s", d)
	}
	if _, ok := e.Args("pay.nothing"); ok {
		t.Error("Args of an undeclared action")
	}
	ids := func(ps []policy.Info) []string {
		var out []string
		for _, p := range ps {
			out = append(out, p.ID)
		}
		return out
	}
	for _, c := range []struct {
		action intent.Action
		arg    string
		want   []string
	}{
		{"pay.send", "memo", []string{"memo-guarded"}},
		{"pay.read", "memo", []string{"read"}},
		{"pay.send", "urgent", []string{"urgent"}},
		{"pay.read", "urgent", []string{"urgent"}},
		{"pay.send", "iban", nil},   // context.facts has iban is not the argument
		{"pay.send", "amount", nil}, // context.amount is not context.args.amount
		{"pay.send", "memoo", nil},
		{"pay.send", "mem", nil},
	} {
		if got := ids(e.Reading(c.action, c.arg)); !cmp.Equal(got, c.want) {
			t.Errorf("Reading(%s, %s) = %q, want %q", c.action, c.arg, got, c.want)
		}
	}
}
