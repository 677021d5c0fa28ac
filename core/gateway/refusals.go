package gateway

import (
	"fmt"
	"time"

	"github.com/intentplane/intentplane/core/intent"
)

// refuse returns a refusal with code and its text, format formatted with
// a. It is the only place a refusal's text is formatted; go vet checks
// every format of the catalogue against its arguments.
func refuse(code intent.Code, format string, a ...any) *intent.Refusal {
	return &intent.Refusal{Code: code, Message: fmt.Sprintf(format, a...)}
}

// short is an operation hash as messages name it: its first 16 hex
// digits (the whole of a shorter string).
func short(operation string) string {
	if len(operation) > 16 {
		return operation[:16]
	}
	return operation
}

// MalformedAdvice ends the message of a proposal.malformed refusal: what
// an agent that writes proposals itself should send. A front door that
// writes the proposal for its client (intentplane-mcp wraps a tool call's
// arguments) replaces it with what its client can act on.
const MalformedAdvice = `Send a JSON object with only "action" and "args".`

// refusals is the catalogue: every message an agent can read from the
// gateway, one typed constructor each, grouped by reason code, so that
// what agents are told is reviewed in one place and the compiler checks
// what each step gives it. docs/reason-codes.md documents each code; a test
// checks that the two agree. Every message says whether anything was done.
var refusals = struct {
	Malformed                        func(reason string) *intent.Refusal
	MandateInvalid                   func(err error) *intent.Refusal
	OutOfScope                       func(action, mandateID string) *intent.Refusal
	UnknownAction                    func(action string) *intent.Refusal
	BadArgument                      func(err error) *intent.Refusal
	BadValue                         func(param, detail string) *intent.Refusal
	Unencodable                      func() *intent.Refusal
	CurrencyMismatch                 func(param, given, currency string) *intent.Refusal
	ScaleMismatch                    func(param string, scale int, currency string, exponent int) *intent.Refusal
	NotTrusted                       func(param, sent, detail, hint string) *intent.Refusal
	SourcesUnreadable                func() *intent.Refusal
	SourceUnreadable                 func(param string) *intent.Refusal
	SystemsUnreadable, InvalidText   func() *intent.Refusal
	SystemsInsufficient              func(visible string) *intent.Refusal
	PolicyDenied                     func(reasons string) *intent.Refusal
	TotalTooLarge                    func(amount, currency, what string) *intent.Refusal
	PolicyOverflow                   func(policies string) *intent.Refusal
	PolicyError                      func() *intent.Refusal
	ApprovalRequired                 func(level, reasons, operation string) *intent.Refusal
	RunLine, RunDuplicate            func(operation string) *intent.Refusal
	ApprovalsOff, ApproverOutOfScope func() *intent.Refusal
	ApprovalInvalid                  func(err error) *intent.Refusal
	Approval                         func() *intent.Refusal
	BudgetExceeded                   func(amount intent.Money, remaining string, budget intent.Money) *intent.Refusal
	NoBudget                         func(amount intent.Money, budgets string) *intent.Refusal
	Replayed, Executing, NotExecuted func(operation string) *intent.Refusal
	InFlight                         func(records string) *intent.Refusal
	InFlightUntil                    func(records string, taken, until time.Time) *intent.Refusal
	ExecutionRefused                 func(why string) *intent.Refusal
	ExecutionFailed                  func() *intent.Refusal
	Unavailable, Internal            func() *intent.Refusal
}{
	Malformed: func(reason string) *intent.Refusal {
		return refuse(intent.CodeMalformed, "The proposal was refused: %s. Nothing was done. %s", reason, MalformedAdvice)
	},

	// The code is the mandate's error's (mandate.invalid, .expired,
	// .audience or .revoked) where the step has one.
	MandateInvalid: func(err error) *intent.Refusal {
		return refuse(intent.CodeMandateInvalid, "The user's mandate does not allow any action: %v. Nothing was done; the user must issue a new mandate.", err)
	},
	OutOfScope: func(action, mandateID string) *intent.Refusal {
		return refuse(intent.CodeOutOfScope, "The action %q is not part of what the user authorised in this session (mandate %s). Nothing was done. Do not try to reach the same result with another action; tell the user what you wanted to do.", action, mandateID)
	},

	UnknownAction: func(action string) *intent.Refusal {
		return refuse(intent.CodeUnknownAction, "The action %q does not exist on this gateway. Nothing was done.", action)
	},

	BadArgument: func(err error) *intent.Refusal {
		return refuse(intent.CodeBadArgument, "The proposal was refused: %v. Nothing was done.", err)
	},
	BadValue: func(param, detail string) *intent.Refusal {
		return refuse(intent.CodeBadArgument, "The value given for %q was refused: %s. Nothing was done.", param, detail)
	},
	Unencodable: func() *intent.Refusal {
		return refuse(intent.CodeBadArgument, "The proposal was refused: an argument cannot be encoded. Nothing was done.")
	},
	// The budget parameter, the currency it was given in, the currency of
	// the operation.
	CurrencyMismatch: func(param, given, currency string) *intent.Refusal {
		return refuse(intent.CodeBadArgument, "The %s was given in %s, but this operation pays in %s (the currency of the record paid). Nothing was done. Give the amount in %s, with that currency's decimals.", param, given, currency, currency)
	},
	// The budget parameter, its scale, the currency and its exponent.
	ScaleMismatch: func(param string, scale int, currency string, exponent int) *intent.Refusal {
		return refuse(intent.CodeBadArgument, "The amount %q is read with %d decimals, but its currency %s has %d (ISO 4217), so it would be counted against the budget at the wrong scale. Nothing was done. The action's amount scale is a setting of the gateway, not something to work around: tell the user.", param, scale, currency, exponent)
	},

	// The parameter, the value sent (" (quoted)", or nothing if secret),
	// why it matched nothing, and the contract's hint.
	NotTrusted: func(param, sent, detail, hint string) *intent.Refusal {
		return refuse(intent.CodeNotTrusted, "The %s you gave%s %s, so nothing was done. %s", param, sent, detail, hint)
	},

	SourcesUnreadable: func() *intent.Refusal {
		return refuse(intent.CodeContextFailed, "The trusted sources could not be read, so nothing was done. Try again later.")
	},
	SourceUnreadable: func(param string) *intent.Refusal {
		return refuse(intent.CodeContextFailed, "The trusted source for %q could not be read, so nothing was done. Try again later.", param)
	},
	SystemsUnreadable: func() *intent.Refusal {
		return refuse(intent.CodeContextFailed, "The systems of record needed to check this operation could not be read, so nothing was done. Try again later.")
	},
	// A context provider's visible words (VisibleError): why, and what to
	// do instead.
	SystemsInsufficient: func(visible string) *intent.Refusal {
		return refuse(intent.CodeContextFailed, "The systems of record cannot give everything needed to check this operation, so nothing was done; trying again will not change that. %s", visible)
	},
	InvalidText: func() *intent.Refusal {
		return refuse(intent.CodeContextFailed, "A system of record returned data that cannot be recorded (text that is not valid UTF-8), so nothing was done. Tell the user; the record must be corrected.")
	},

	PolicyDenied: func(reasons string) *intent.Refusal {
		return refuse(intent.CodePolicyDenied, "The policy refuses this operation: %s. Nothing was done. Do not try to reach the same result another way; tell the user.", reasons)
	},
	// The amount and its currency, whom the total adds up and its window.
	TotalTooLarge: func(amount, currency, what string) *intent.Refusal {
		return refuse(intent.CodePolicyDenied, "The policy refuses this operation: its amount %s %s added to what was already paid %s would exceed the largest total the gateway can keep (an amount of 19 digits in minor units). Nothing was done. An amount this large is not a payment the gateway can check; tell the user.", amount, currency, what)
	},
	// The @id of the policies that overflowed.
	PolicyOverflow: func(policies string) *intent.Refusal {
		return refuse(intent.CodePolicyDenied, "The policy refuses this operation: policy %s cannot add this amount to the totals it checks, the sum being beyond the largest number it can count. Nothing was done. An amount this large is not a payment the gateway can check; tell the user.", policies)
	},
	PolicyError: func() *intent.Refusal {
		return refuse(intent.CodePolicyError, "The policy could not decide on this operation, so it was refused. Nothing was done.")
	},

	// The level in words, the policies' reasons, the operation hash.
	ApprovalRequired: func(level, reasons, operation string) *intent.Refusal {
		return refuse(intent.CodeApprovalRequired, "This operation needs %s before it can execute: %s. Nothing was done yet. A person must approve this exact operation (%s) on the approval channel; any change to it needs a new approval.", level, reasons, short(operation))
	},

	// A line of a run that needs no approval of its own.
	RunLine: func(operation string) *intent.Refusal {
		return refuse(intent.CodeApprovalRequired, "This operation needs no approval of its own; as a line of a run it executes with the run, once a person approves the run if any of its lines needs one (operation %s). Nothing was done yet.", short(operation))
	},
	RunDuplicate: func(operation string) *intent.Refusal {
		return refuse(intent.CodeMalformed, "This operation is already a line of the same run (operation %s); it was left out. Nothing was done.", short(operation))
	},

	ApprovalsOff: func() *intent.Refusal {
		return refuse(intent.CodeApprovalInvalid, "Approvals are not configured on this gateway. Nothing was done.")
	},
	ApprovalInvalid: func(err error) *intent.Refusal {
		return refuse(intent.CodeApprovalInvalid, "The approval presented is not valid for this exact operation (%v). Nothing was done. Any change to the operation needs a new approval.", err)
	},
	ApproverOutOfScope: func() *intent.Refusal {
		return refuse(intent.CodeApprovalInvalid, "The approval presented was given by someone who may not approve for this user. Nothing was done.")
	},
	Approval: func() *intent.Refusal {
		return refuse(intent.CodeApprovalInvalid, "The approval presented was already used. Nothing was done. Each approval is valid for one execution only.")
	},

	// The amount, what remains of the budget (a decimal in its
	// currency), the budget.
	BudgetExceeded: func(amount intent.Money, remaining string, budget intent.Money) *intent.Refusal {
		return refuse(intent.CodeBudgetExceeded, "The amount %s %s exceeds what remains of the budget the user authorised (%s of %s %s). Nothing was done; only the user can raise the budget.", amount.Decimal(), amount.Currency, remaining, budget.Decimal(), budget.Currency)
	},
	// The amount, and the mandate's budgets in words.
	NoBudget: func(amount intent.Money, budgets string) *intent.Refusal {
		c := amount.Currency
		return refuse(intent.CodeBudgetExceeded, "The amount %s %s is in a currency the user authorised no budget in: the mandate has no budget in %s (its budgets: %s). Nothing was done. The budgets are a setting of the mandate (its budget and budgets); only the user can authorise a budget in %s, with a new mandate.", amount.Decimal(), c, c, budgets, c)
	},

	Replayed: func(operation string) *intent.Refusal {
		return refuse(intent.CodeReplayed, "This exact operation has already executed (operation %s); it will not execute again. A further, separate operation (such as another instalment of a payment) must say so in its arguments, as the action's description explains; otherwise, if the user really wants it done twice, they must say so in a new mandate.", short(operation))
	},
	Executing: func(operation string) *intent.Refusal {
		return refuse(intent.CodeReplayed, "This exact operation is already executing or has executed (operation %s); it will not execute again.", short(operation))
	},
	NotExecuted: func(operation string) *intent.Refusal {
		return refuse(intent.CodeNotExecuted, "This exact operation did not execute: a gateway stopped while executing it, and reconciliation found no trace of it in the system of record (operation %s). Nothing was done now. It will not execute again as it is, because the stopped execution could still have reached the system of record after that check: tell the user to check the system of record (for a payment, its list of payments); if it is still not done there, it must be sent as a new operation, as the action's description explains for a further operation, with new approvals.", short(operation))
	},

	InFlight: func(records string) *intent.Refusal {
		return refuse(intent.CodeInFlight, "Another operation on the same %s is under way, so this one was refused. Nothing was done. Check the result of the first one before trying again.", records)
	},
	// The records held; when the hold was taken and when it ends (shown
	// in UTC, to the second).
	InFlightUntil: func(records string, taken, until time.Time) *intent.Refusal {
		return refuse(intent.CodeInFlight, "The same %s is held by another decision, which took it at %s UTC and has not finished, so this one was refused. Nothing was done. That decision may be running now, or may have been cut short by a gateway that stopped or crashed: its hold then lasts until %s UTC. Check the result of the first operation before trying again, after that time at the latest.", records, taken.UTC().Format(time.DateTime), until.UTC().Format(time.DateTime))
	},

	// Why, in the executor's visible words.
	ExecutionRefused: func(why string) *intent.Refusal {
		return refuse(intent.CodeExecutionRefused, "The operation was allowed but the system of record refused it (%s). Nothing was done: it did not execute, and its budget and records are free again. Tell the user why; the same operation can be sent again once the cause is fixed.", why)
	},
	ExecutionFailed: func() *intent.Refusal {
		return refuse(intent.CodeExecutionFailed, "The operation was allowed but its outcome is unknown: it may or may not have taken effect. It stays held: this exact operation will not execute again, and its amount stays counted against the budget. Do not retry; tell the user to check the system of record (for a payment, its list of payments) first.")
	},

	Unavailable: func() *intent.Refusal {
		return refuse(intent.CodeUnavailable, "The gateway's state store is unavailable, so nothing was done. Try again later.")
	},
	Internal: func() *intent.Refusal {
		return refuse(intent.CodeUnavailable, "The gateway hit an internal error while checking this proposal, so nothing was done.")
	},
}
