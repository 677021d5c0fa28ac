package intent

// Code is a stable reason code for a refusal or a step-up. Codes are part of
// the public contract with agents and front doors: they are only added,
// never renamed.
type Code string

// Reason codes, grouped by pipeline step.
const (
	CodeMalformed        Code = "proposal.malformed"        // not JSON, duplicate or unknown keys, too large
	CodeUnknownAction    Code = "proposal.unknown_action"   // no contract for the action
	CodeBadArgument      Code = "proposal.bad_argument"     // wrong type, missing, too long, not normalizable
	CodeMandateInvalid   Code = "mandate.invalid"           // malformed, bad signature, unknown issuer
	CodeMandateExpired   Code = "mandate.expired"           // past expiry or before not-before
	CodeMandateAudience  Code = "mandate.audience"          // issued for another gateway
	CodeMandateRevoked   Code = "mandate.revoked"           // revoked by its issuer
	CodeOutOfScope       Code = "mandate.out_of_scope"      // action not in the mandate's scope
	CodeNotTrusted       Code = "resolve.no_trusted_source" // critical value matches no trusted record of the owner
	CodeContextFailed    Code = "context.unavailable"       // a system of record could not be read
	CodePolicyDenied     Code = "policy.denied"             // a forbid policy, or no permit
	CodePolicyError      Code = "policy.error"              // evaluation error: fail closed
	CodeApprovalRequired Code = "approval.required"         // step-up: a human must approve this exact operation
	CodeApprovalInvalid  Code = "approval.invalid"          // forged, expired, replayed, or for another operation
	CodeBudgetExceeded   Code = "budget.exceeded"           // the mandate's budget does not cover the amount
	CodeReplayed         Code = "execution.replayed"        // this exact operation already executed
	CodeInFlight         Code = "execution.in_flight"       // another operation on the same record is under way
	CodeNotExecuted      Code = "execution.not_executed"    // a crash cut it short; it did not execute, and it cannot be sent again as it is
	CodeExecutionFailed  Code = "execution.failed"          // outcome unknown: it may have taken effect; it stays held
	CodeExecutionRefused Code = "execution.refused"         // the system of record refused it: nothing happened
	CodeUnavailable      Code = "gateway.unavailable"       // state store unreachable: fail closed
)

// Refusal is a decision's reason as an agent or a person reads it. Message
// says what was refused, why, and what the user can do; it never carries
// another owner's data or internal detail (no stack, no SQL, no record of
// someone else).
type Refusal struct {
	Code    Code
	Message string
}

// Error makes a Refusal usable where an error is expected; it returns the
// message prefixed by the code.
func (r *Refusal) Error() string { return string(r.Code) + ": " + r.Message }
