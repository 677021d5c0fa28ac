package policy

import (
	"fmt"

	"github.com/intentplane/intentplane/core/intent"
)

// Request is what the gateway asks the policy about.
type Request struct {
	// Principal becomes the entity Owner::"<Principal>".
	Principal intent.Owner
	// Action becomes the entity Action::"<Action>".
	Action intent.Action
	// Resource becomes the entity Resource::"<Resource>"; empty means
	// Resource::"none".
	Resource string
	// Standard is the context: the record of the request convention (see
	// the package doc) in typed form. Nil is a conversion error, and the
	// request is denied.
	Standard *Standard
}

// Standard is the context of the request convention in typed form: it
// becomes the record {args, facts, approval: {confirm, four_eyes},
// mandate: {mode}, amount}. Args and Facts values become String (string),
// Long (int, and amount in minor units) or Boolean (bool); nil Args or
// Facts are empty records. Amount is a Long of minor units.
type Standard struct {
	Args     intent.Args
	Facts    map[string]intent.Value
	Confirm  bool // approval.confirm
	FourEyes bool // approval.four_eyes
	Mode     string
	Amount   intent.Amount
}

// Result is the decision on a Request and what determined it.
type Result struct {
	// Verdict is intent.Allow, intent.Deny or intent.StepUp.
	Verdict intent.Verdict
	// Level is, for StepUp, the highest approval level among the
	// determining guards; LevelAuto otherwise.
	Level intent.Level
	// Policies are the @id of the determining policies, sorted: the
	// matching forbids if any matched, otherwise the matching permits.
	// Empty when nothing matched, and when evaluation errors denied a
	// request only permits matched.
	Policies []string
	// Reasons are the @reason annotations of Policies, in the same order
	// ("" for a policy without one). When no policy matched it is
	// ["no policy permits this action"].
	Reasons []string
	// Errors are evaluation and conversion errors, sorted. When it is not
	// empty, Decision is Deny.
	Errors []string
	// Overflowed are the @id of the policies whose evaluation overflowed
	// an integer (an amount plus a total beyond the largest Long), sorted;
	// each also has its error in Errors. A front door tells the agent
	// that the amount is too large to check, not that the policy is
	// broken.
	Overflowed []string
}

// NoPermitReason is the reason given when no policy matched.
const NoPermitReason = "no policy permits this action"

// Info describes one loaded policy.
type Info struct {
	// ID is the policy's @id.
	ID string
	// Effect is "permit" or "forbid".
	Effect string
	// Approval is the level named by @approval for an approval guard, and
	// LevelAuto for every other policy.
	Approval intent.Level
	// Reason is the @reason annotation, "" if none.
	Reason string
	// File is the name of the .cedar file, Line the line (from 1) where
	// the policy starts, including its annotations.
	File string
	Line int
}

// Guard reports whether the policy is an approval guard.
func (p Info) Guard() bool { return p.Approval != intent.LevelAuto }

// LoadError is returned by [Load] for any problem with a pack's policy or
// schema. Line and Column count from 1 and are zero when unknown.
type LoadError struct {
	File     string
	Line     int
	Column   int
	PolicyID string // the policy's @id, "" if none or not about one policy
	Msg      string
}

// Error returns "file:line:col: msg", or "file: msg" when the line is
// unknown.
func (e *LoadError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d:%d: %s", e.File, e.Line, e.Column, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.File, e.Msg)
}
