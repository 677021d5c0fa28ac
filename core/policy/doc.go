// Package policy is step 6 of the gateway's pipeline: it loads a pack's Cedar
// policy and schema, evaluates a request against them and maps Cedar's
// decision to allow, deny or step-up, failing closed.
//
// It is the only intentplane package that imports
// github.com/cedar-policy/cedar-go; everything else sees Cedar through
// [Engine], [Request] and [Result]. It may import core/intent and
// core/contract, and must never import anything outside core/ other than
// cedar-go (no pack, connector, store, front door or the policies package).
//
// # Loading
//
// [Load] reads every *.cedar file at the root of a file system and exactly
// one *.cedarschema file (Cedar schema syntax). Each policy needs a unique
// @id annotation; @reason is the text shown when the policy determines a
// decision (the gateway replaces "{facts.NAME}" in it by the text of the
// fact NAME, so that a reason can name the record it is about); @approval("confirm") or @approval("four_eyes") marks a forbid
// as an approval guard. Every policy is validated against the schema with
// cedar-go's strict validator. Any problem is a [*LoadError] that names
// file, line and column, so a gateway with a broken policy does not start.
//
// # Request convention
//
// The principal is the entity Owner::"<owner>", the action is
// Action::"<action>", and the resource is Resource::"<id>" (Resource::"none"
// when the operation has none). Neither entity has attributes: everything a
// policy may look at travels in the context, which every pack's schema
// declares as
//
//	{
//	  args:     { ...the resolved arguments... },
//	  facts:    { ...facts read by context providers... },
//	  approval: { confirm: Bool, four_eyes: Bool },  // approvals held
//	  mandate:  { mode: String },
//	  amount:   Long,  // the budget parameter in minor units, 0 if no money moves
//	}
//
// The gateway builds this record; [Engine.Evaluate] checks it against the
// action's context type in the schema and denies on any mismatch. Amounts
// are Long values in minor units (cents): Cedar's decimal has no
// arithmetic and only four fractional digits.
//
// An approval guard is a forbid that an approval lifts:
//
//	@id("confirm-large")
//	@approval("confirm")
//	@reason("payments above 1,000.00 need a human to confirm")
//	forbid (principal, action == Action::"banking.send_money", resource)
//	when { context.amount > 100000 }
//	unless { context.approval.confirm };
//
// # Decisions
//
// A request is allowed when some permit matches and no forbid does. When
// the only matching forbids are approval guards, the decision is [StepUp]
// at the highest level they name. Any other matching forbid denies. Any
// evaluation error denies, even if Cedar itself would allow: Cedar skips a
// policy that errors, and a skipped forbid would otherwise let the request
// through.
//
// # Tests and mutation check
//
// A pack keeps a decision corpus in tests/*.json, which package
// core/policy/policytest loads and runs. Its mutation check builds on
// [Engine.Mutants] and [Engine.Apply]: it removes forbids, guards and
// conditions one at a time and reports each change no test notices.
//
// cedar-go's x/exp packages, which cedar-go exempts from semantic
// versioning, are imported from one file only, cedarexp.go.
package policy
