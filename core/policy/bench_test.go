package policy_test

import (
	"testing"
	"testing/fstest"

	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/policy"
)

const benchSchema = `entity Owner;
entity Resource;
type Approval = { confirm: Bool, four_eyes: Bool };
type Mandate = { mode: String };
action "banking.get_balance", "banking.get_transactions" appliesTo {
  principal: Owner, resource: Resource,
  context: { args: {}, facts: {}, approval: Approval, mandate: Mandate, amount: Long },
};
action "banking.send_money" appliesTo {
  principal: Owner, resource: Resource,
  context: {
    args: { recipient: String, amount: Long, subject: String, date: String },
    facts: { beneficiary_known: Bool, beneficiary_age_days: Long, daily_total: Long, iban_country: String, verified: Bool },
    approval: Approval, mandate: Mandate, amount: Long,
  },
};
`

const benchPolicy = `
@id("read") @reason("reads move no money")
permit (principal, action in [Action::"banking.get_balance", Action::"banking.get_transactions"], resource);

@id("pay-known") @reason("payments to known beneficiaries")
permit (principal, action == Action::"banking.send_money", resource) when { context.facts.beneficiary_known };

@id("read-only") @reason("the mandate is read-only")
forbid (principal, action == Action::"banking.send_money", resource) when { context.mandate.mode == "read_only" };

@id("capped") @reason("above the capped mandate's maximum")
forbid (principal, action == Action::"banking.send_money", resource) when { context.mandate.mode == "capped" && context.amount > 500000 };

@id("daily-limit") @reason("daily limit exceeded")
forbid (principal, action == Action::"banking.send_money", resource) when { context.facts.daily_total + context.amount > 5000000 };

@id("sanctioned") @reason("sanctioned country")
forbid (principal, action == Action::"banking.send_money", resource) when { ["KP", "IR", "SY"].contains(context.facts.iban_country) };

@id("subject-secret") @reason("subject looks like a secret")
forbid (principal, action == Action::"banking.send_money", resource) when { context.args.subject like "*password*" };

@id("confirm-large") @approval("confirm") @reason("large payments need a human")
forbid (principal, action == Action::"banking.send_money", resource) when { context.amount > 100000 } unless { context.approval.confirm };

@id("four-eyes-huge") @approval("four_eyes") @reason("huge payments need two approvers")
forbid (principal, action == Action::"banking.send_money", resource) when { context.amount > 1000000 } unless { context.approval.four_eyes };

@id("cooling-off") @approval("confirm") @reason("new beneficiary")
forbid (principal, action == Action::"banking.send_money", resource)
when { context.facts.beneficiary_age_days < 3 && !context.facts.verified } unless { context.approval.confirm };
`

// BenchmarkEvaluate is the Cedar-only floor of a decision: ten policies,
// a context with arguments, facts and approvals, converted and validated
// on every call.
func BenchmarkEvaluate(b *testing.B) {
	e, err := policy.Load(fstest.MapFS{
		"schema.cedarschema": {Data: []byte(benchSchema)},
		"policy.cedar":       {Data: []byte(benchPolicy)},
	})
	if err != nil {
		b.Fatal(err)
	}
	req := policy.Request{
		Principal: "alice",
		Action:    "banking.send_money",
		Resource:  "acct-1",
		Standard: &policy.Standard{
			Args: intent.Args{
				"recipient": intent.Str("DE89370400440532013000"),
				"amount":    intent.AmountValue(150000, 2),
				"subject":   intent.Str("invoice 2290"),
				"date":      intent.Str("2026-03-01"),
			},
			Facts: map[string]intent.Value{
				"beneficiary_known": intent.Bool(true), "beneficiary_age_days": intent.Int(400), "daily_total": intent.Int(20000),
				"iban_country": intent.Str("DE"), "verified": intent.Bool(true),
			},
			Mode:   "normal",
			Amount: 150000,
		},
	}
	if got := e.Evaluate(req); got.Verdict != intent.StepUp || got.Level != intent.LevelConfirm {
		b.Fatalf("Evaluate = %+v, want step_up confirm", got)
	}
	b.ReportAllocs()
	for b.Loop() {
		e.Evaluate(req)
	}
}
