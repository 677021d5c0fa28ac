package approval

import (
	"errors"
	"time"

	"github.com/intentplane/intentplane/core/intent"
)

// Request is a step-up awaiting a person's approval: the exact resolved
// operation the gateway decided needs Level, with what an approver needs to
// judge it. A front door builds it from the gateway's decision and hands it
// to an approval channel (the page, a webhook); an approval given for it is
// signed over Hash alone.
type Request struct {
	// Operation is the resolved operation: action, trusted arguments,
	// mandate id and owner.
	Operation intent.Operation
	// Hash is the operation hash the gateway named: what an approval is
	// signed over. A channel refuses a Request whose Operation does not
	// hash to it.
	Hash intent.OperationHash
	// Level is the approval level required: intent.LevelConfirm or
	// intent.LevelFourEyes.
	Level intent.Level
	// Resolved lists each critical value with its provenance and what the
	// agent originally sent. Each Value is the string form of the
	// operation's argument of the same name.
	Resolved []intent.Resolved
	// Reason says why a person must approve (the step-up's message); empty
	// means none.
	Reason string
	// Policies are the policies that determined the step-up
	// (gateway.Decision.Policies): the approval guards that asked, by id,
	// from which a Phraser says why in the approver's words; nil means
	// unknown.
	Policies []string
	// Facts are the facts the gateway's policy saw (gateway.Decision.Facts),
	// read from the systems of record when the operation was decided: what
	// an approver needs to judge it, such as a vendor's name on file or the
	// account a change replaces. They are NOT covered by Hash, which names
	// the operation only; nil means none.
	Facts map[string]intent.Value
	// Currency is the ISO 4217 code amounts are in ("EUR"), usually the
	// mandate's budget currency; empty shows amounts without a currency.
	Currency string
	// Requester names the approver, if any, on whose behalf the agent acts
	// (the user of the agent's client); empty means none. Like every
	// approver's, the requester's approval counts at most once.
	Requester string
	// Lines, for a run of operations approved together (a payment run),
	// are its operations, each a Request of its own with its Operation,
	// Hash, Level (what it needs as a line of the run: intent.LevelAuto
	// for none of its own), Resolved, Reason, Policies and Facts.
	// Operation is then RunOperation of their hashes (in any order) under
	// the same mandate and owner, Hash its hash, and Level at least each
	// line's; an approval given for it holds the lines' hashes in
	// Approval.Lines. Nil for one operation.
	Lines []Request
	// ExpiresAt is when the request lapses, and with it every approval
	// given for it, in UTC; zero means the channel's default lifetime.
	ExpiresAt time.Time
}

// Errors of an approval channel that front doors branch on with errors.Is:
// the approval page returns errors wrapping them, and the MCP proxy tells
// the agent what each means.
var (
	// ErrRejected: a person rejected the operation. It stays rejected for
	// its mandate's life; the agent must not ask again.
	ErrRejected = errors.New("approval: a person rejected this operation")
	// ErrTooManyRequests: the channel holds as many open requests as it
	// accepts; no request was made.
	ErrTooManyRequests = errors.New("approval: too many approval requests open")
)
