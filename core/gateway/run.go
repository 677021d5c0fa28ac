package gateway

import (
	"context"
	"errors"
	"slices"

	"github.com/intentplane/intentplane/core/approval"
	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/receipt"
	"github.com/intentplane/intentplane/core/state"
)

// RunRequest is a run of proposals decided together (a payment run: the
// bills of a day, of several vendors), under one mandate.
type RunRequest struct {
	// Mandate is the session's signed mandate token.
	Mandate string
	// Proposals are the agent's proposals, verbatim, in the order the
	// lines will execute; at most approval.MaxRunLines.
	Proposals [][]byte
}

// Run is the gateway's answer to a RunRequest: what each line needs as a
// line of the whole run. Nothing of it executed.
type Run struct {
	// Lines are the decisions of the proposals, in order. A line that may
	// execute is a StepUp with the Level it needs counting the lines
	// before it in the run's running totals (LevelAuto: none of its own,
	// it waits for the run's approval all the same); any other line is a
	// Deny, final for this run.
	Lines []Decision
	// Level is the highest Level of the lines that may execute: what the
	// run's approval must grant (LevelAuto when none needs a person).
	Level intent.Level
	// Operations are the operation hashes of the lines that may execute,
	// in order; Hash is approval.RunHash over them (zero when none may
	// execute): what the run's approvals are signed over.
	Operations []intent.OperationHash
	Hash       intent.OperationHash
}

// ErrRun is returned by DecideRun for a run without proposals or with more
// than approval.MaxRunLines.
var ErrRun = errors.New("gateway: a run holds 1 to 200 proposals")

// DecideRun decides a run of proposals as a whole without executing any:
// each line goes through the pipeline up to the policy, in order, and the
// amounts it reserves on the running totals (contract.Total: what is paid
// to a vendor today, on a bill) and on the budget stay reserved until
// every line is decided, so that each line's policy sees the lines before
// it and the run must fit the budget as a whole. The level
// a run needs is thus at least what any line needs given the run's
// totals, and splitting a run never lowers what is asked: a line of a
// later run sees the earlier run's lines once they executed, and each
// line's approval is checked again when it executes (Decide), with the
// totals of that moment. Each line appends its receipt, as Decide's. A
// line that the policy allows is a StepUp of level auto (RunLine): as a
// line of the run, it waits for the run's approval.
//
// DecideRun returns ErrRun for an empty or too long run, and an error when
// a receipt could not be stored (with the lines decided so far).
func (g *Gateway) DecideRun(ctx context.Context, req RunRequest) (Run, error) {
	if len(req.Proposals) == 0 || len(req.Proposals) > approval.MaxRunLines {
		return Run{}, ErrRun
	}
	var held []string
	defer g.release(ctx, &held)
	run := Run{Level: intent.LevelAuto}
	for _, p := range req.Proposals {
		dec, err := g.decideLine(ctx, req.Mandate, p, run.Operations, &held)
		run.Lines = append(run.Lines, dec)
		if err != nil {
			return run, err
		}
		if dec.Verdict == intent.StepUp {
			run.Operations = append(run.Operations, dec.OperationHash)
			run.Level = higher(run.Level, dec.Level)
		}
	}
	if len(run.Operations) > 0 {
		h, err := approval.RunHash(run.mandateID(), run.Operations)
		if err != nil {
			return run, err
		}
		run.Hash = h
	}
	return run, nil
}

// mandateID is the mandate of the run's lines that may execute.
func (r Run) mandateID() string {
	for _, d := range r.Lines {
		if d.Verdict == intent.StepUp && d.Operation != nil {
			return d.Operation.MandateID
		}
	}
	return ""
}

// decideLine decides proposal p as a line of a run whose lines so far
// are before, holding its totals' reservations in held, and appends its
// receipt. A line that is already in the run is refused (RunDuplicate). A
// refused line's reservations are given back at once: it will not execute,
// so the lines after it do not count it.
func (g *Gateway) decideLine(ctx context.Context, token string, p []byte, before []intent.OperationHash, held *[]string) (Decision, error) {
	var mine []string
	st := &decision{req: Request{Mandate: token, Proposal: p}, now: g.now().UTC(),
		exec: executionState{result: receipt.ResultNotExecuted}, reserve: reservationState{run: &mine}}
	d := &st.out
	r := g.runGuarded(ctx, st)
	d.Verdict, d.Refusal = intent.Deny, r
	if r != nil && r.Code == intent.CodeApprovalRequired {
		d.Verdict = intent.StepUp
		if slices.Contains(before, d.OperationHash) {
			d.Verdict, d.Refusal = intent.Deny, refusals.RunDuplicate(st.op.hash)
		}
	}
	if d.Verdict == intent.StepUp {
		*held = append(*held, mine...)
	} else {
		g.release(ctx, &mine)
	}
	return g.receipt(ctx, st)
}

// runLine ends a line of a run that the policy allows (stepUp nil) or
// steps up (stepUp): its amount is reserved on the budget, held with its
// totals until the run is decided, so that the run as a whole must fit
// the budget; a line the budget cannot pay is refused. A line the policy
// allows needs no approval of its own, but executes only with the run's
// (RunLine); one already executed is refused as it would be on its own.
func (g *Gateway) runLine(ctx context.Context, st *decision, stepUp *intent.Refusal) *intent.Refusal {
	if stepUp == nil {
		if r := g.executedBefore(ctx, st); r != nil {
			return r
		}
		st.out.Level = intent.LevelAuto
		stepUp = refusals.RunLine(st.op.hash)
	}
	if r := g.budget(ctx, st); r != nil {
		return r
	}
	return stepUp
}

// release gives back the reservations a run held on the totals.
func (g *Gateway) release(ctx context.Context, held *[]string) {
	if len(*held) == 0 {
		return
	}
	for i, err := range state.Settle(context.WithoutCancel(ctx), g.store, *held, false) {
		if err != nil {
			g.log.Error("run: total release failed", "reservation", (*held)[i], "err", err)
		}
	}
}

// higher returns the higher of two approval levels.
func higher(a, b intent.Level) intent.Level {
	if b.Rank() > a.Rank() {
		return b
	}
	return a
}
