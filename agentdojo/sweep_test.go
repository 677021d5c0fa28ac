package agentdojo_test

import (
	"bytes"
	"context"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/intentplane/intentplane/agentdojo"
)

// TestSweep runs a reduced sweep (user task 15, which pays, moves the rent
// and asks a step-up of its own; p 0, 0.5 and 1; one repetition; q = 0)
// and checks what must hold for any suite: with the ideal approver (p = 0)
// approval alone stops exactly what both stop; with an approver who
// approves everything (p = 1) both are resolution alone; each ablation
// lets through no fewer attacks than both; the shares sum to 1; the same
// seed gives the same report.
func TestSweep(t *testing.T) {
	t.Parallel()
	opts := agentdojo.SweepOptions{UserTasks: []int{15}, Ps: []float64{0, 0.5, 1}, Reps: 1, Seed: 7}
	r := sweepTwice(t, opts)
	at := sweepAt(r)
	both, res, app, neither := at[agentdojo.AblationBoth], at[agentdojo.AblationResolution], at[agentdojo.AblationApproval], at[agentdojo.AblationNeither]
	if both[0].Attacks != app[0].Attacks {
		t.Errorf("p=0: both %g, approval alone %g; want equal", both[0].Attacks, app[0].Attacks)
	}
	if both[1].Attacks != res[1].Attacks {
		t.Errorf("p=1: both %g, resolution alone %g; want equal", both[1].Attacks, res[1].Attacks)
	}
	for _, p := range opts.Ps {
		for _, abl := range []map[float64]agentdojo.SweepPoint{res, app, neither} {
			if abl[p].Attacks < both[p].Attacks {
				t.Errorf("p=%g: %s lets %g attacks through, fewer than both (%g)", p, abl[p].Ablation, abl[p].Attacks, both[p].Attacks)
			}
		}
	}
	if neither[0].Attacks <= both[0].Attacks || app[1].Attacks <= app[0].Attacks {
		t.Errorf("no protection measured: neither %g, both %g, approval alone at p=0 %g and p=1 %g", neither[0].Attacks, both[0].Attacks, app[0].Attacks, app[1].Attacks)
	}
	for _, s := range r.Shares {
		if s.Protection > 0 && math.Abs(s.Resolution+s.Approval-1) > 1e-9 {
			t.Errorf("p=%g: shares %g + %g", s.P, s.Resolution, s.Approval)
		}
	}
	var b bytes.Buffer
	if err := r.WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "share of the protection") {
		t.Errorf("table:\n%s", b.String())
	}
}

// sweepTwice sweeps with opts twice, checks that the same seed gave the
// same report, and returns it.
func sweepTwice(t *testing.T, opts agentdojo.SweepOptions) *agentdojo.SweepReport {
	t.Helper()
	r, err := agentdojo.Sweep(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	again, err := agentdojo.Sweep(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(r, again); diff != "" {
		t.Errorf("same seed, another report (-first, +second):\n%s", diff)
	}
	return r
}

func TestSweepRefusesBadOptions(t *testing.T) {
	t.Parallel()
	for _, opts := range []agentdojo.SweepOptions{{Q: 1.5}, {Ps: []float64{-0.1}}, {Suite: "travel"}} {
		if _, err := agentdojo.Sweep(context.Background(), opts); err == nil {
			t.Errorf("%+v: no error", opts)
		}
	}
}
