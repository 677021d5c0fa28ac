package gateway

import (
	"fmt"

	"github.com/intentplane/intentplane/core/intent"
)

// message is one refusal the gateway gives an agent: its reason code and
// its text, a fmt format whose arguments the step gives.
type message struct {
	code intent.Code
	text string
}

// with returns the refusal, its text formatted with a.
func (m message) with(a ...any) *intent.Refusal {
	text := m.text
	if len(a) > 0 {
		text = fmt.Sprintf(m.text, a...)
	}
	return &intent.Refusal{Code: m.code, Message: text}
}

// MalformedAdvice ends the message of a proposal.malformed refusal: what
// an agent that writes proposals itself should send. A front door that
// writes the proposal for its client (intentplane-mcp wraps a tool call's
// arguments) replaces it with what its client can act on.
const MalformedAdvice = `Send a JSON object with only "action" and "args".`

// refusals is the catalogue: every message an agent can read from the
// gateway, grouped by reason code, so that what agents are told is
// reviewed in one place. docs/reason-codes.md documents each code; a test
// checks that the two agree. Every message says whether anything was done.
var refusals = struct {
	Malformed                                                   message
	MandateInvalid, OutOfScope                                  message
	UnknownAction                                               message
	BadArgument, BadValue, Unencodable                          message
	ScaleMismatch, CurrencyMismatch                             message
	NotTrusted                                                  message
	SourcesUnreadable, SourceUnreadable, SystemsUnreadable      message
	SystemsInsufficient                                         message
	InvalidText                                                 message
	PolicyDenied, TotalTooLarge, PolicyOverflow, PolicyError    message
	ApprovalRequired, RunLine, RunDuplicate                     message
	ApprovalsOff, ApprovalInvalid, ApproverOutOfScope, Approval message
	BudgetExceeded, NoBudget                                    message
	Replayed, Executing, NotExecuted                            message
	InFlight, InFlightUntil                                     message
	ExecutionRefused, ExecutionFailed                           message
	Unavailable, Internal                                       message
}{
	Malformed: message{intent.CodeMalformed, `The proposal was refused: %s. Nothing was done. ` + MalformedAdvice},

	// Code from the mandate's error: mandate.invalid, .expired, .audience
	// or .revoked.
	MandateInvalid: message{intent.CodeMandateInvalid, "The user's mandate does not allow any action: %v. Nothing was done; the user must issue a new mandate."},
	OutOfScope:     message{intent.CodeOutOfScope, "The action %q is not part of what the user authorised in this session (mandate %s). Nothing was done. Do not try to reach the same result with another action; tell the user what you wanted to do."},

	UnknownAction: message{intent.CodeUnknownAction, "The action %q does not exist on this gateway. Nothing was done."},

	BadArgument: message{intent.CodeBadArgument, "The proposal was refused: %v. Nothing was done."},
	BadValue:    message{intent.CodeBadArgument, "The value given for %q was refused: %s. Nothing was done."},
	Unencodable: message{intent.CodeBadArgument, "The proposal was refused: an argument cannot be encoded. Nothing was done."},
	// The budget parameter, the currency it was given in, the currency of
	// the operation (twice).
	CurrencyMismatch: message{intent.CodeBadArgument, "The %s was given in %s, but this operation pays in %s (the currency of the record paid). Nothing was done. Give the amount in %s, with that currency's decimals."},
	// The budget parameter, its scale, the currency and its exponent.
	ScaleMismatch: message{intent.CodeBadArgument, "The amount %q is read with %d decimals, but its currency %s has %d (ISO 4217), so it would be counted against the budget at the wrong scale. Nothing was done. The action's amount scale is a setting of the gateway, not something to work around: tell the user."},

	// The parameter, the value sent (quoted, or nothing if secret), why
	// it matched nothing, and the contract's hint.
	NotTrusted: message{intent.CodeNotTrusted, "The %s you gave%s %s, so nothing was done. %s"},

	SourcesUnreadable: message{intent.CodeContextFailed, "The trusted sources could not be read, so nothing was done. Try again later."},
	SourceUnreadable:  message{intent.CodeContextFailed, "The trusted source for %q could not be read, so nothing was done. Try again later."},
	SystemsUnreadable: message{intent.CodeContextFailed, "The systems of record needed to check this operation could not be read, so nothing was done. Try again later."},
	// A context provider's visible words (VisibleError): why, and what
	// to do instead.
	SystemsInsufficient: message{intent.CodeContextFailed, "The systems of record cannot give everything needed to check this operation, so nothing was done; trying again will not change that. %s"},
	InvalidText:         message{intent.CodeContextFailed, "A system of record returned data that cannot be recorded (text that is not valid UTF-8), so nothing was done. Tell the user; the record must be corrected."},

	PolicyDenied: message{intent.CodePolicyDenied, "The policy refuses this operation: %s. Nothing was done. Do not try to reach the same result another way; tell the user."},
	// The amount and its currency, whom the total adds up and its window.
	TotalTooLarge: message{intent.CodePolicyDenied, "The policy refuses this operation: its amount %s %s added to what was already paid %s would exceed the largest total the gateway can keep (an amount of 19 digits in minor units). Nothing was done. An amount this large is not a payment the gateway can check; tell the user."},
	// The @id of the policies that overflowed.
	PolicyOverflow: message{intent.CodePolicyDenied, "The policy refuses this operation: policy %s cannot add this amount to the totals it checks, the sum being beyond the largest number it can count. Nothing was done. An amount this large is not a payment the gateway can check; tell the user."},
	PolicyError:    message{intent.CodePolicyError, "The policy could not decide on this operation, so it was refused. Nothing was done."},

	// The level, the policies' reasons, the operation hash's first 16
	// hex digits.
	ApprovalRequired: message{intent.CodeApprovalRequired, "This operation needs %s before it can execute: %s. Nothing was done yet. A person must approve this exact operation (%s) on the approval channel; any change to it needs a new approval."},

	// The operation hash's first 16 hex digits.
	RunLine: message{intent.CodeApprovalRequired, "This operation needs no approval of its own; as a line of a run it executes with the run, once a person approves the run if any of its lines needs one (operation %s). Nothing was done yet."},

	// The operation hash's first 16 hex digits.
	RunDuplicate: message{intent.CodeMalformed, "This operation is already a line of the same run (operation %s); it was left out. Nothing was done."},

	ApprovalsOff:       message{intent.CodeApprovalInvalid, "Approvals are not configured on this gateway. Nothing was done."},
	ApprovalInvalid:    message{intent.CodeApprovalInvalid, "The approval presented is not valid for this exact operation (%v). Nothing was done. Any change to the operation needs a new approval."},
	ApproverOutOfScope: message{intent.CodeApprovalInvalid, "The approval presented was given by someone who may not approve for this user. Nothing was done."},
	Approval:           message{intent.CodeApprovalInvalid, "The approval presented was already used. Nothing was done. Each approval is valid for one execution only."},

	// The amount and currency, what remains, the budget and currency.
	// The amount and its currency, the currency, the mandate's budgets,
	// the currency.
	NoBudget: message{intent.CodeBudgetExceeded, "The amount %s %s is in a currency the user authorised no budget in: the mandate has no budget in %s (its budgets: %s). Nothing was done. The budgets are a setting of the mandate (its budget and budgets); only the user can authorise a budget in %s, with a new mandate."},

	BudgetExceeded: message{intent.CodeBudgetExceeded, "The amount %s %s exceeds what remains of the budget the user authorised (%s of %s %s). Nothing was done; only the user can raise the budget."},

	Replayed:  message{intent.CodeReplayed, "This exact operation has already executed (operation %s); it will not execute again. A further, separate operation (such as another instalment of a payment) must say so in its arguments, as the action's description explains; otherwise, if the user really wants it done twice, they must say so in a new mandate."},
	Executing: message{intent.CodeReplayed, "This exact operation is already executing or has executed (operation %s); it will not execute again."},

	// The operation hash's first 16 hex digits.
	NotExecuted: message{intent.CodeNotExecuted, "This exact operation did not execute: a gateway stopped while executing it, and reconciliation found no trace of it in the system of record (operation %s). Nothing was done now. It will not execute again as it is, because the stopped execution could still have reached the system of record after that check: tell the user to check the system of record (for a payment, its list of payments); if it is still not done there, it must be sent as a new operation, as the action's description explains for a further operation, with new approvals."},

	InFlight: message{intent.CodeInFlight, "Another operation on the same %s is under way, so this one was refused. Nothing was done. Check the result of the first one before trying again."},
	// The records held; when the hold was taken and when it ends, in UTC.
	InFlightUntil: message{intent.CodeInFlight, "The same %s is held by another decision, which took it at %s UTC and has not finished, so this one was refused. Nothing was done. That decision may be running now, or may have been cut short by a gateway that stopped or crashed: its hold then lasts until %s UTC. Check the result of the first operation before trying again, after that time at the latest."},

	// Why, in the executor's visible words.
	ExecutionRefused: message{intent.CodeExecutionRefused, "The operation was allowed but the system of record refused it (%s). Nothing was done: it did not execute, and its budget and records are free again. Tell the user why; the same operation can be sent again once the cause is fixed."},
	ExecutionFailed:  message{intent.CodeExecutionFailed, "The operation was allowed but its outcome is unknown: it may or may not have taken effect. It stays held: this exact operation will not execute again, and its amount stays counted against the budget. Do not retry; tell the user to check the system of record (for a payment, its list of payments) first."},

	Unavailable: message{intent.CodeUnavailable, "The gateway's state store is unavailable, so nothing was done. Try again later."},
	Internal:    message{intent.CodeUnavailable, "The gateway hit an internal error while checking this proposal, so nothing was done."},
}
