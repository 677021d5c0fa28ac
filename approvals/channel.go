package approvals

import (
	"context"
	"errors"
	"time"

	"github.com/intentplane/intentplane/core/approval"
	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/receipt"
)

// Channel submits operations awaiting approval to people and collects the
// approvals they sign. A front door calls Request when the gateway steps up,
// gives the agent the ticket (or waits with Await), and presents
// Outcome.Approvals to the gateway once the status is StatusApproved.
//
// Only the front door, in-process, may call Request: a channel must offer no
// way for an agent to create or decide a request. Its methods may be called
// concurrently. ErrNotFound means the id names no request (never created, or
// forgotten some time after it ended).
type Channel interface {
	// Request submits r and returns its ticket. It returns ErrInvalid for
	// an incomplete request, ErrExpired if r has already expired, and an
	// error wrapping ErrTampered if r's content does not hash to r.Hash or
	// a resolved value is not the string form of its argument. Facts are
	// shown, sorted by name, escaped and flagged like every value; they
	// never make a request refused.
	Request(ctx context.Context, r approval.Request) (Ticket, error)
	// Outcome returns the request's current state without blocking.
	Outcome(ctx context.Context, id string) (Outcome, error)
	// Wait blocks until the request is decided, expires or is refused, or
	// until ctx is done; it then returns the current state and ctx's error.
	Wait(ctx context.Context, id string) (Outcome, error)
}

// Log records receipts for requests and decisions. receipt.Log (the
// gateway's store) implements it; cmd/ wires it so that approvals land in
// the owner's receipt chain. Append is called concurrently; an error makes
// the request or the decision fail (nothing is approved unrecorded).
type Log interface {
	// Append links r into its owner's chain and returns it as stored.
	Append(ctx context.Context, r receipt.Receipt) (receipt.Receipt, error)
}

// Ticket names a submitted request.
type Ticket struct {
	// ID identifies the request: 32 lowercase hex digits.
	ID string
	// URL is the request's page, to give to the agent (which can show the
	// link but cannot sign in) or to the user.
	URL string
	// ExpiresAt is when the request lapses, in UTC.
	ExpiresAt time.Time
}

// Status is the state of a request.
type Status string

// The statuses. Every status but StatusPending is final.
const (
	StatusPending  Status = "pending"  // waiting for (more) approvals
	StatusApproved Status = "approved" // approvals enough for the level were given
	StatusRejected Status = "rejected" // an approver rejected it
	StatusExpired  Status = "expired"  // it lapsed undecided
	StatusRefused  Status = "refused"  // its content does not hash to its operation hash
)

// Vote is one approver's decision on a request: an approval or a
// rejection.
type Vote struct {
	// Approver names who decided.
	Approver string
	// Approve is true for an approval, false for a rejection.
	Approve bool
	// At is when, in UTC.
	At time.Time
	// Via names the channel: "page" or "webhook".
	Via string
	// Reason is why the approver rejected, as they typed it on the page
	// (at most 500 bytes, one line); empty for an approval and for a
	// webhook's decision. The decision's receipt message ends with it.
	Reason string
	// Receipt is the receipt recorded for the decision, as stored.
	Receipt receipt.Receipt
	// Left, for an approval of a run, are the lines the approver left out
	// of it: rejected, finally, as a rejection of the run would be. The
	// approval covers the run's other open lines (Approval.Lines). Nil
	// otherwise.
	Left []intent.OperationHash `json:",omitempty"`
}

// Outcome is the state of a request.
type Outcome struct {
	// ID identifies the request.
	ID string
	// Status is the request's status.
	Status Status
	// Level is the approval level required.
	Level intent.Level
	// Hash is the operation hash the approvals are signed over.
	Hash intent.OperationHash
	// Approvals are the signed approvals given so far, one per approver
	// at most; with StatusApproved they grant Level. Each is single use
	// (the gateway consumes its id) and expires with the request.
	Approvals []approval.Approval
	// Votes are the approvers' decisions, in order.
	Votes []Vote
	// ExpiresAt is when the request lapses, in UTC.
	ExpiresAt time.Time
}

// Errors of Channel methods and of decisions. Callers branch on them with
// errors.Is.
var (
	// ErrNotFound: the id names no request.
	ErrNotFound = errors.New("approvals: no such request")
	// ErrInvalid: the request is incomplete, its level is not confirm or
	// four_eyes, or four eyes is asked of a channel with fewer than two
	// approvers.
	ErrInvalid = errors.New("approvals: invalid request")
	// ErrTampered: the content to show does not hash to the operation hash,
	// or a trusted value does not match its argument. Nothing can be
	// approved for it.
	ErrTampered = errors.New("approvals: shown content does not match the operation hash")
	// ErrExpired: the request has lapsed.
	ErrExpired = errors.New("approvals: request expired")
	// ErrDecided: the request was already approved or rejected.
	ErrDecided = errors.New("approvals: request already decided")
	// ErrVoteLost: the approver's vote was recorded in the receipt chain,
	// but another decision on the same request, made at the same moment on
	// another replica, decided or ended it first, so the vote does not
	// count (a later receipt says so). The error also wraps why (for
	// example ErrDecided).
	ErrVoteLost = errors.New("approvals: vote recorded but did not count: the request changed at the same moment")
	// ErrSameApprover: this approver already decided on the request; an
	// approver's approval never counts twice.
	ErrSameApprover = errors.New("approvals: approver already decided on this request")
	// ErrOtherOperation: the decision names another operation hash than the
	// request's (the page shown was not this operation).
	ErrOtherOperation = errors.New("approvals: decision is for another operation")
	// ErrNoLines: an approval of a run ticks none of its open lines
	// (approve some, or reject the run).
	ErrNoLines = errors.New("approvals: an approval of a run must keep at least one of its lines")
	// ErrUnknownApprover: the approver is not configured.
	ErrUnknownApprover = errors.New("approvals: unknown approver")
	// ErrOtherOwner: the approver may not decide for the request's owner
	// (Approver.Owners).
	ErrOtherOwner = errors.New("approvals: approver may not decide for this owner")
	// ErrNotIndependent: the request's facts name the approver as someone
	// who may not approve it (Config.NotApprovers: the person who recorded
	// the call-back a bank-detail change relies on); they may still reject
	// it.
	ErrNotIndependent = errors.New("approvals: the request's facts name this approver as one who may not approve it")
	// ErrTooMany: too many requests are pending (Config.MaxPending).
	ErrTooMany = errors.New("approvals: too many pending requests")
)

// Await is what a front door calls after a step-up. With wait zero or less
// it returns the request's current state at once (the agent gets the link
// and calls again after approval); otherwise it waits up to wait for the
// decision and then returns the state as it is, pending or not. It returns
// an error only if the channel fails or ctx itself ends.
func Await(ctx context.Context, ch Channel, id string, wait time.Duration) (Outcome, error) {
	if wait <= 0 {
		return ch.Outcome(ctx, id)
	}
	wctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	out, err := ch.Wait(wctx, id)
	if err != nil && ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
		return ch.Outcome(ctx, id)
	}
	return out, err
}
