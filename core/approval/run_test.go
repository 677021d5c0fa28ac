package approval_test

import (
	"errors"
	"testing"

	"github.com/intentplane/intentplane/core/approval"
	"github.com/intentplane/intentplane/core/intent"
)

// TestRunHash: a run's hash depends on its lines, not their order, and on
// the mandate; it is never a line's.
func TestRunHash(t *testing.T) {
	t.Parallel()
	a, b, c := intent.OperationHash{1}, intent.OperationHash{2}, intent.OperationHash{3}
	ab, err := approval.RunHash("m-1", []intent.OperationHash{a, b})
	if err != nil {
		t.Fatal(err)
	}
	ba, _ := approval.RunHash("m-1", []intent.OperationHash{b, a})
	abc, _ := approval.RunHash("m-1", []intent.OperationHash{a, b, c})
	other, _ := approval.RunHash("m-2", []intent.OperationHash{a, b})
	if ab != ba {
		t.Error("the order of the lines changes the run's hash")
	}
	if ab == abc || ab == other || ab == a || ab == b {
		t.Error("another run, mandate or a line has the run's hash")
	}
	for name, tt := range map[string]struct {
		lines []intent.OperationHash
		want  error
	}{
		"empty":    {nil, approval.ErrRunEmpty},
		"twice":    {[]intent.OperationHash{a, a}, approval.ErrRunDuplicate},
		"zero":     {[]intent.OperationHash{{}}, approval.ErrRunDuplicate},
		"too long": {make([]intent.OperationHash, approval.MaxRunLines+1), approval.ErrRunTooLong},
	} {
		if _, err := approval.RunHash("m-1", tt.lines); !errors.Is(err, tt.want) {
			t.Errorf("%s: %v, want %v", name, err, tt.want)
		}
	}
}

// TestEvaluateRun: a run's approval covers each of its lines and nothing
// else; its lines cannot be rewritten.
func TestEvaluateRun(t *testing.T) {
	t.Parallel()
	a, b, c := intent.OperationHash{1}, intent.OperationHash{2}, intent.OperationHash{3}
	lines := approval.SortedLines([]intent.OperationHash{b, a})
	h, err := approval.RunHash("m-1", lines)
	if err != nil {
		t.Fatal(err)
	}
	run := signed(t, "r1", "alice", alice, func(x *approval.Approval) { x.Operation, x.Lines = h, lines })
	for _, line := range lines {
		if g, err := approval.Evaluate(keys, line, "m-1", now, []approval.Approval{run}); err != nil || !g.Confirm {
			t.Errorf("line %s: %v", line.String()[:4], err)
		}
	}
	if _, err := approval.Evaluate(keys, c, "m-1", now, []approval.Approval{run}); !errors.Is(err, approval.ErrOtherOperation) {
		t.Errorf("another operation: %v", err)
	}
	if _, err := approval.Evaluate(keys, h, "m-1", now, []approval.Approval{run}); !errors.Is(err, approval.ErrOtherOperation) {
		t.Errorf("the run's hash itself: %v", err)
	}
	forged := run
	forged.Lines = approval.SortedLines([]intent.OperationHash{a, b, c})
	if _, err := approval.Evaluate(keys, c, "m-1", now, []approval.Approval{forged}); !errors.Is(err, approval.ErrOtherOperation) {
		t.Errorf("a line added: %v", err)
	}
}
