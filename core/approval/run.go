package approval

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/intentplane/intentplane/core/intent"
)

// RunAction is the action of a run's operation (see RunOperation). It has
// no dot, so no pack can declare it: a run's hash is never the hash of an
// operation a pack executes.
const RunAction intent.Action = "run"

// MaxRunLines is the most operations one run may hold.
const MaxRunLines = 200

// Errors of RunOperation.
var (
	ErrRunEmpty     = errors.New("approval: a run needs at least one operation")
	ErrRunTooLong   = fmt.Errorf("approval: a run holds at most %d operations", MaxRunLines)
	ErrRunDuplicate = errors.New("approval: an operation is twice in the run")
)

// RunOperation returns the operation a run of operations (a payment run)
// stands for, under mandate mandateID of owner: action RunAction, and the
// arguments "lines" (the lines' operation hashes in hex, sorted, joined by
// ",") and "count" (how many). An approval of a run is signed over its
// hash, as over any operation's, with Approval.Lines holding the lines, so
// that it covers exactly those operations, in any order. It returns
// ErrRunEmpty, ErrRunTooLong, or ErrRunDuplicate for a hash given twice
// (or zero).
func RunOperation(mandateID string, owner intent.Owner, lines []intent.OperationHash) (intent.Operation, error) {
	if len(lines) == 0 {
		return intent.Operation{}, ErrRunEmpty
	}
	if len(lines) > MaxRunLines {
		return intent.Operation{}, ErrRunTooLong
	}
	hex := make([]string, len(lines))
	for i, h := range lines {
		if h.IsZero() {
			return intent.Operation{}, fmt.Errorf("%w: a zero hash", ErrRunDuplicate)
		}
		hex[i] = h.String()
	}
	slices.Sort(hex)
	if len(slices.Compact(slices.Clone(hex))) != len(hex) {
		return intent.Operation{}, ErrRunDuplicate
	}
	return intent.Operation{
		Action:    RunAction,
		Args:      intent.Args{"lines": intent.Str(strings.Join(hex, ",")), "count": intent.Int(int64(len(hex)))},
		MandateID: mandateID,
		Owner:     owner,
	}, nil
}

// RunHash returns the hash of RunOperation(mandateID, "", lines): what an
// approval of the run is signed over (the owner is not hashed).
func RunHash(mandateID string, lines []intent.OperationHash) (intent.OperationHash, error) {
	op, err := RunOperation(mandateID, "", lines)
	if err != nil {
		return intent.OperationHash{}, err
	}
	return op.Hash()
}

// RunHash returns, in hex, the hash of the run a approves (its Operation,
// for the approval of a run); "" for the approval of one operation.
func (a Approval) RunHash() string {
	if len(a.Lines) == 0 {
		return ""
	}
	return a.Operation.String()
}

// SortedLines returns lines sorted by their hex form, as Approval.Lines
// holds them.
func SortedLines(lines []intent.OperationHash) []intent.OperationHash {
	out := slices.Clone(lines)
	slices.SortFunc(out, func(a, b intent.OperationHash) int { return strings.Compare(a.String(), b.String()) })
	return out
}

// covers reports whether a approves op: a's operation is op, or a is a
// run's approval (Lines set) whose operation is the run of its Lines, op
// among them.
func (a Approval) covers(op intent.OperationHash) bool {
	if len(a.Lines) == 0 {
		return a.Operation == op
	}
	h, err := RunHash(a.MandateID, a.Lines)
	return err == nil && h == a.Operation && slices.Contains(a.Lines, op)
}
