package ap_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/intentplane/intentplane/ap"
	"github.com/intentplane/intentplane/core/approval"
	"github.com/intentplane/intentplane/core/gateway"
	"github.com/intentplane/intentplane/core/intent"
)

// run decides the payments as one run.
func (e *env) run(tok string, lines ...map[string]any) gateway.Run {
	e.t.Helper()
	var ps [][]byte
	for _, args := range lines {
		b, err := json.Marshal(map[string]any{"action": ap.ActionPayBill, "args": args})
		if err != nil {
			e.t.Fatal(err)
		}
		ps = append(ps, b)
	}
	r, err := e.gw.DecideRun(context.Background(), gateway.RunRequest{Mandate: tok, Proposals: ps})
	if err != nil {
		e.t.Fatalf("DecideRun: %v", err)
	}
	return r
}

// approveRun signs who's approval of the run's lines.
func (e *env) approveRun(who string, r gateway.Run) approval.Approval {
	e.t.Helper()
	now := e.clock.Now()
	a, err := approval.Sign(approval.Approval{
		ID: who + "-run-" + r.Hash.String()[:12], Operation: r.Hash, MandateID: r.Lines[0].Operation.MandateID,
		Approver: who, IssuedAt: now, ExpiresAt: now.Add(10 * time.Minute), Lines: approval.SortedLines(r.Operations),
	}, approverKeys[who])
	if err != nil {
		e.t.Fatal(err)
	}
	return a
}

func levels(r gateway.Run) []intent.Level {
	var out []intent.Level
	for _, d := range r.Lines {
		out = append(out, d.Level)
	}
	return out
}

// TestRunCountsTheWholeRun: two payments to ACME Supplies that need no one
// alone (850.00 and 500.00, under the 1,000.00 threshold) need a person
// as one run, since the second sees the first in the vendor's day; the
// run's approval pays both, each once with its own receipt, and the
// totals the run held are given back when it is decided.
func TestRunCountsTheWholeRun(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tok := e.mandate("m-run", ap.DemoCompany, "EUR")
	l1, l2 := pay(ap.DemoVendor, ap.DemoBill, ap.DemoIBAN, "850.00"), pay(ap.DemoVendor, ap.DemoBill2, ap.DemoIBAN, "500.00")
	r := e.run(tok, l1, l2)
	if got := levels(r); r.Level != intent.LevelConfirm || len(got) != 2 || got[0] != intent.LevelAuto || got[1] != intent.LevelConfirm {
		t.Fatalf("run level %s, lines %v; want confirm, [auto confirm]", r.Level, got)
	}
	if !strings.Contains(message(r.Lines[1]), "today 850.00 EUR") {
		t.Errorf("the second line does not show the first in the vendor's day: %s", message(r.Lines[1]))
	}
	if len(e.payments(ap.DemoCompany)) != 0 {
		t.Fatal("deciding a run paid something")
	}
	// The reservations are given back: alone, the second line needs no one.
	if alone := e.run(tok, l2); alone.Level != intent.LevelAuto {
		t.Errorf("the second line alone, after the run: %s, want auto (the run's totals not given back?)", alone.Level)
	}
	a := e.approveRun("alice", r)
	for i, args := range []map[string]any{l1, l2} {
		d := e.decide(tok, ap.ActionPayBill, args, a)
		if !d.Executed || len(d.Receipt.Approvals) != 1 || d.Receipt.Approvals[0].ID != a.ID {
			t.Fatalf("line %d: %s %s, approvals %v", i+1, d.Verdict, message(d), d.Receipt.Approvals)
		}
	}
	if n := len(e.payments(ap.DemoCompany)); n != 2 {
		t.Errorf("%d payments, want 2", n)
	}
	e.verifyReceipts(ap.DemoCompany)
}

// TestRunFourEyesCountsTheRun: with four eyes above 2,000.00 a vendor's
// day, the run of 850.00 and 1,500.00 needs two people, though neither
// payment alone does; one approval of the run pays only the line that
// needs no more.
func TestRunFourEyesCountsTheRun(t *testing.T) {
	t.Parallel()
	e := newEnvConfig(t, ap.Config{FourEyesDailyAbove: 200000, MaxVendorTotal: 2000000})
	tok := e.mandate("m-run4", ap.DemoCompany, "EUR")
	l1, l2 := pay(ap.DemoVendor, ap.DemoBill, ap.DemoIBAN, "850.00"), pay(ap.DemoVendor, ap.DemoBill2, ap.DemoIBAN, "1500.00")
	for _, args := range []map[string]any{l1, l2} {
		if alone := e.run(tok, args); alone.Level == intent.LevelFourEyes {
			t.Fatalf("%v alone needs four eyes", args)
		}
	}
	r := e.run(tok, l1, l2)
	if r.Level != intent.LevelFourEyes {
		t.Fatalf("run level %s %v, want four_eyes", r.Level, levels(r))
	}
	alice := e.approveRun("alice", r)
	if d := e.decide(tok, ap.ActionPayBill, l1, alice); !d.Executed {
		t.Fatalf("line 1 with one approval: %s %s", d.Verdict, message(d))
	}
	if d := e.decide(tok, ap.ActionPayBill, l2, alice); d.Executed || d.Verdict != intent.StepUp || d.Level != intent.LevelFourEyes {
		t.Fatalf("line 2 with one approval: %s %s %s, want a step-up to four eyes", d.Verdict, d.Level, message(d))
	}
	if d := e.decide(tok, ap.ActionPayBill, l2, alice, e.approveRun("bob", r)); !d.Executed || len(d.Receipt.Approvals) != 2 {
		t.Fatalf("line 2 with two approvals: %s %s", d.Verdict, message(d))
	}
}

// TestRunRedTeam: what an agent can try with a run's approval.
func TestRunRedTeam(t *testing.T) {
	t.Parallel()
	l1, l2 := pay(ap.DemoVendor, ap.DemoBill, ap.DemoIBAN, "850.00"), pay(ap.DemoVendor, ap.DemoBill2, ap.DemoIBAN, "500.00")

	t.Run("a line altered after approval is not covered", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		tok := e.mandate("m-alter", ap.DemoCompany, "EUR")
		r := e.run(tok, l1, l2)
		a := e.approveRun("alice", r)
		altered := pay(ap.DemoVendor, ap.DemoBill2, ap.DemoIBAN, "1500.00")
		if d := e.decide(tok, ap.ActionPayBill, altered, a); d.Executed || code(d) != intent.CodeApprovalInvalid {
			t.Fatalf("altered line: %s %s %s", d.Verdict, code(d), message(d))
		}
		// Without the run's approval it asks again, as any payment does.
		if d := e.decide(tok, ap.ActionPayBill, altered); d.Verdict != intent.StepUp {
			t.Fatalf("altered line alone: %s %s", d.Verdict, message(d))
		}
		if n := len(e.payments(ap.DemoCompany)); n != 0 {
			t.Fatalf("%d payments", n)
		}
	})

	t.Run("a run's approval is not valid for another run", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		tok := e.mandate("m-replay", ap.DemoCompany, "EUR")
		a := e.approveRun("alice", e.run(tok, l1))
		other := e.run(tok, l2)
		if d := e.decide(tok, ap.ActionPayBill, l2, a); d.Executed || code(d) != intent.CodeApprovalInvalid {
			t.Fatalf("run A's approval on run B's line: %s %s", d.Verdict, message(d))
		}
		// Its lines rewritten to name the other run's line: the signature
		// is over run A's hash, which is not the run of those lines.
		for name, lines := range map[string][]intent.OperationHash{
			"B's line":         other.Operations,
			"A's and B's line": approval.SortedLines(append(cloneHashes(a.Lines), other.Operations...)),
		} {
			forged := a
			forged.Lines = lines
			if d := e.decide(tok, ap.ActionPayBill, l2, forged); d.Executed || code(d) != intent.CodeApprovalInvalid {
				t.Fatalf("lines rewritten to %s: %s %s", name, d.Verdict, message(d))
			}
		}
		// Nor under another mandate, for the same lines.
		tok2 := e.mandate("m-replay-2", ap.DemoCompany, "EUR")
		if d := e.decide(tok2, ap.ActionPayBill, l1, a); d.Executed || code(d) != intent.CodeApprovalInvalid {
			t.Fatalf("under another mandate: %s %s", d.Verdict, message(d))
		}
	})

	t.Run("a line executed twice executes once", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		tok := e.mandate("m-twice", ap.DemoCompany, "EUR")
		r := e.run(tok, l1, l2)
		a := e.approveRun("alice", r)
		if d := e.decide(tok, ap.ActionPayBill, l1, a); !d.Executed {
			t.Fatalf("first: %s %s", d.Verdict, message(d))
		}
		for i := 0; i < 2; i++ {
			if d := e.decide(tok, ap.ActionPayBill, l1, a); d.Executed {
				t.Fatalf("again (%d): executed", i)
			}
		}
		if n := len(e.payments(ap.DemoCompany)); n != 1 {
			t.Fatalf("%d payments, want 1", n)
		}
		// The same line twice in one run is one line.
		twice := e.run(tok, l2, l2)
		if len(twice.Operations) != 1 || twice.Lines[1].Verdict != intent.Deny {
			t.Fatalf("a line twice in a run: %d operations, second %s %s", len(twice.Operations), twice.Lines[1].Verdict, message(twice.Lines[1]))
		}
	})

	t.Run("splitting a run never lowers what is asked", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		tok := e.mandate("m-split-run", ap.DemoCompany, "EUR")
		a, b := e.run(tok, l1), e.run(tok, l2)
		if a.Level != intent.LevelAuto || b.Level != intent.LevelAuto {
			t.Fatalf("each half alone: %s, %s", a.Level, b.Level)
		}
		if d := e.decide(tok, ap.ActionPayBill, l1); !d.Executed {
			t.Fatalf("first half: %s %s", d.Verdict, message(d))
		}
		// The second half, when it executes, sees the first: a person.
		if d := e.decide(tok, ap.ActionPayBill, l2); d.Executed || d.Verdict != intent.StepUp || d.Level != intent.LevelConfirm {
			t.Fatalf("second half: %s %s %s", d.Verdict, d.Level, message(d))
		}
		if again := e.run(tok, l2); again.Level != intent.LevelConfirm {
			t.Fatalf("the second half proposed again: %s", again.Level)
		}
	})
}

func cloneHashes(hs []intent.OperationHash) []intent.OperationHash {
	return append([]intent.OperationHash(nil), hs...)
}

// TestRunFitsTheBudget: a run must fit the mandate's budget as a whole:
// with 3,000.00 left, 850.00 and 2,400.00 each fit, not both; the second
// line is refused, and the run is the first alone.
func TestRunFitsTheBudget(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tok, err := issue(ap.DemoCompany, 300000)
	if err != nil {
		t.Fatal(err)
	}
	l1, l2 := pay(ap.DemoVendor, ap.DemoBill, ap.DemoIBAN, "850.00"), pay(ap.DemoVendor, ap.DemoBill2, ap.DemoIBAN, "2400.00")
	if alone := e.run(tok, l2); len(alone.Operations) != 1 {
		t.Fatalf("2,400.00 alone: %s", message(alone.Lines[0]))
	}
	r := e.run(tok, l1, l2)
	if len(r.Operations) != 1 || r.Lines[1].Verdict != intent.Deny || code(r.Lines[1]) != intent.CodeBudgetExceeded {
		t.Fatalf("run over the budget: %d lines may execute, the second %s %s", len(r.Operations), code(r.Lines[1]), message(r.Lines[1]))
	}
	if again := e.run(tok, l2); len(again.Operations) != 1 {
		t.Fatalf("the run's budget reservations were not given back: %s", message(again.Lines[0]))
	}
}

// TestRunBounds: a run holds 1 to approval.MaxRunLines proposals.
func TestRunBounds(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tok := e.mandate("m-bounds", ap.DemoCompany, "EUR")
	for _, n := range []int{0, approval.MaxRunLines + 1} {
		if _, err := e.gw.DecideRun(context.Background(), gateway.RunRequest{Mandate: tok, Proposals: make([][]byte, n)}); !errors.Is(err, gateway.ErrRun) {
			t.Errorf("%d proposals: %v, want ErrRun", n, err)
		}
	}
}
