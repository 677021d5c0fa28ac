package agentdojo

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/intentplane/intentplane/banking"
	"github.com/intentplane/intentplane/core/mandate"
)

// The ablations of a sweep: which of the gateway's two protections are on.
const (
	// AblationBoth is the gateway as built: resolution and approval.
	AblationBoth = "both"
	// AblationResolution keeps resolution and approves every step-up
	// (no person asked).
	AblationResolution = "resolution_alone"
	// AblationApproval switches resolution off (any well-formed account
	// passes as a counterparty) and asks the approver.
	AblationApproval = "approval_alone"
	// AblationNeither switches resolution off and approves every step-up;
	// the mandate's scope and budget and the policy's forbids remain.
	AblationNeither = "neither"
)

// Ablations returns the four ablations in report order.
func Ablations() []string {
	return []string{AblationBoth, AblationResolution, AblationApproval, AblationNeither}
}

// SweepOptions configure Sweep. The zero value sweeps the banking suite
// in known_counterparties mode over DefaultPs with Q = 0, 5 repetitions,
// seed 0.
type SweepOptions struct {
	// Suite is "banking" (the default when empty) or "workspace".
	Suite string
	// DataDir is where the workspace suite's data is read (see DataDir,
	// the default when empty).
	DataDir string
	// Mode is the mandates' mode; empty means known_counterparties.
	Mode mandate.Mode
	// Ps are the approver's probabilities of approving a wrong step-up;
	// nil means DefaultPs.
	Ps []float64
	// Q is the approver's probability of rejecting a right step-up.
	Q float64
	// Reps is the number of seeded repetitions per point; zero means 5.
	Reps int
	// Seed seeds every draw: the same options give the same report.
	Seed uint64
	// UserTasks restricts the run to these user task ids; nil means all.
	UserTasks []int
}

// DefaultPs are the approver error rates a sweep visits by default.
var DefaultPs = []float64{0, 0.01, 0.05, 0.1, 0.2, 0.3, 0.5, 0.75, 1}

// SweepPoint is one ablation at one p, averaged over the repetitions.
type SweepPoint struct {
	Ablation string  `json:"ablation"`
	P        float64 `json:"p"`
	// Attacks is the mean number of (user task, attack) runs whose attack
	// executed; AttacksMin and AttacksMax the extremes over repetitions.
	Attacks    float64 `json:"attacks_executed"`
	AttacksMin int     `json:"attacks_executed_min"`
	AttacksMax int     `json:"attacks_executed_max"`
	// Utility is the mean number of runs under attack that keep their
	// utility; UtilityNoAttack the same for the user tasks alone.
	Utility         float64 `json:"utility_ok"`
	UtilityNoAttack float64 `json:"utility_no_attack_ok"`
	// StepUps is the mean number of step-ups asked in the runs under
	// attack, WrongApproved the mean number of step-ups for attacker
	// calls that the approver approved.
	StepUps       float64 `json:"step_ups"`
	WrongApproved float64 `json:"wrong_step_ups_approved"`
}

// Share splits the protection at one p between resolution and approval:
// Protection is the attacks that "neither" lets through and "both" stops;
// Resolution and Approval are each one's Shapley share of it (the mean of
// its marginal effect with and without the other), summing to 1. Both are
// zero when Protection is.
type Share struct {
	P          float64 `json:"p"`
	Protection float64 `json:"protection"`
	Resolution float64 `json:"resolution_share"`
	Approval   float64 `json:"approval_share"`
}

// SweepReport is the result of Sweep.
type SweepReport struct {
	Suite   string    `json:"suite"`
	Version string    `json:"version"`
	Mode    string    `json:"mode"`
	Q       float64   `json:"q"`
	Reps    int       `json:"reps"`
	Seed    uint64    `json:"seed"`
	Ps      []float64 `json:"ps"`
	// Runs are the (user task, attack) runs per point, Tasks the user
	// tasks run without attack.
	Runs  int `json:"runs"`
	Tasks int `json:"tasks"`
	// NoGatewayAttacks and NoGatewayUtility are the same runs with no
	// gateway at all, for reference.
	NoGatewayAttacks int          `json:"no_gateway_attacks_executed"`
	NoGatewayUtility int          `json:"no_gateway_utility_ok"`
	Points           []SweepPoint `json:"points"`
	Shares           []Share      `json:"shares"`
}

// pair is one run of a sweep or a registry experiment: a user task alone
// or under one attack, attacker first. run replays it through a session
// configured by cfg (name, when the suite needs one, names its mandate),
// or with direct on the environment with no gateway.
type pair struct {
	alone bool
	run   func(ctx context.Context, cfg sessionConfig, direct bool, name string) (runResult, error)
}

// suiteRuns are the pairs of one suite: the user tasks alone, then
// every attack against each user task it applies to; tasks and runs
// count the two kinds. counterparties are the legitimate entries of the
// registry an incomplete registry loses (Registry), registry its name.
type suiteRuns struct {
	suite          string
	pairs          []pair
	tasks, runs    int
	registry       string
	counterparties []string
}

// pairsOf returns the runs of suite ("" is banking) restricted to the
// user tasks with the given ids (all when nil); the workspace suite's
// data is read from dataDir (DataDir when empty).
func pairsOf(ctx context.Context, suite, dataDir string, ids []int) (*suiteRuns, error) {
	switch suite {
	case "", "banking":
		return bankingPairs(ids), nil
	case "workspace":
		return workspacePairs(ctx, dataDir, ids)
	}
	return nil, fmt.Errorf("agentdojo: unknown suite %q (banking or workspace)", suite)
}

// pick returns the tasks of all whose id is one of ids, all when ids is
// nil.
func pick[T any](all []T, ids []int, id func(T) int) []T {
	if ids == nil {
		return all
	}
	var out []T
	for _, t := range all {
		if slices.Contains(ids, id(t)) {
			out = append(out, t)
		}
	}
	return out
}

// bankingPairs are the banking runs: every attack of Attacks against
// every user task it applies to.
func bankingPairs(ids []int) *suiteRuns {
	r := &suiteRuns{suite: "banking", registry: banking.RegistryBeneficiaries, counterparties: Counterparties()}
	run := func(ut *UserTask, a *Attack) func(context.Context, sessionConfig, bool, string) (runResult, error) {
		return func(ctx context.Context, cfg sessionConfig, direct bool, name string) (runResult, error) {
			return runAttack(ctx, ut, a, AttackerFirst, cfg, direct, name)
		}
	}
	uts := selectTasks(ids)
	for _, ut := range uts {
		r.pairs = append(r.pairs, pair{alone: true, run: run(ut, nil)})
	}
	for _, a := range Attacks() {
		for _, ut := range uts {
			if a.Calls(ut, Environment(nil)) != nil {
				r.pairs = append(r.pairs, pair{run: run(ut, a)})
				r.runs++
			}
		}
	}
	r.tasks = len(uts)
	return r
}

// Sweep replays every attack of Attacks (AgentDojo's injection tasks
// included) against every user task it applies to, attacker first, under
// each ablation, with a FallibleApprover of error rates (p, opts.Q) for
// each p, opts.Reps times with seeded draws, and the user tasks alone for
// utility. A run that asks no step-up does not depend on the approver and
// is run once. It returns an error for an unknown suite, a probability
// outside [0, 1], or if a run cannot be set up.
func Sweep(ctx context.Context, opts SweepOptions) (*SweepReport, error) {
	if opts.Ps == nil {
		opts.Ps = DefaultPs
	}
	if opts.Reps <= 0 {
		opts.Reps = 5
	}
	if opts.Mode == "" {
		opts.Mode = mandate.ModeKnownCounterparties
	}
	for _, p := range append([]float64{opts.Q}, opts.Ps...) {
		if p < 0 || p > 1 {
			return nil, fmt.Errorf("agentdojo: probability %g is not between 0 and 1", p)
		}
	}
	sr, err := pairsOf(ctx, opts.Suite, opts.DataDir, opts.UserTasks)
	if err != nil {
		return nil, err
	}
	pairs := sr.pairs
	r := &SweepReport{Suite: sr.suite, Version: "v1.2", Mode: string(opts.Mode), Q: opts.Q, Reps: opts.Reps, Seed: opts.Seed, Ps: opts.Ps, Tasks: sr.tasks, Runs: sr.runs}
	for _, p := range pairs {
		res, err := p.run(ctx, sessionConfig{}, true, "")
		if err != nil {
			return nil, err
		}
		if !p.alone {
			r.NoGatewayAttacks += b2i(res.attack)
			r.NoGatewayUtility += b2i(res.utility)
		}
	}

	for ai, abl := range Ablations() {
		pts, err := sweepAblation(ctx, opts, pairs, ai, abl)
		if err != nil {
			return nil, err
		}
		r.Points = append(r.Points, pts...)
	}
	r.Shares = shares(r.Points, opts.Ps)
	return r, nil
}

// sweepAblation runs every pair under ablation abl (number ai of
// Ablations) for each p of opts.Ps, opts.Reps times.
func sweepAblation(ctx context.Context, opts SweepOptions, pairs []pair, ai int, abl string) ([]SweepPoint, error) {
	var points []SweepPoint
	always := &FallibleApprover{P: 1}
	noRes := abl == AblationApproval || abl == AblationNeither
	asks := abl == AblationBoth || abl == AblationApproval
	// Runs that ask no step-up under the ideal approver never consult
	// one: their result holds for every approver.
	fixed := make([]*runResult, len(pairs))
	for i, p := range pairs {
		cfg := sessionConfig{mode: opts.Mode, noResolution: noRes, approver: always}
		if asks {
			cfg.approver = &FallibleApprover{}
		}
		res, err := p.run(ctx, cfg, false, fmt.Sprintf("m-%d", i))
		if err != nil {
			return nil, err
		}
		if !asks || res.stepUps+res.userStepUps == 0 {
			fixed[i] = &res
		}
	}
	for pi, pv := range opts.Ps {
		pt := SweepPoint{Ablation: abl, P: pv, AttacksMin: -1}
		for rep := 0; rep < opts.Reps; rep++ {
			rng := seeded(opts.Seed, uint64(ai)<<32|uint64(pi)<<16|uint64(rep))
			attacks, err := sweepRep(ctx, opts.Mode, pairs, fixed, noRes, &FallibleApprover{P: pv, Q: opts.Q, Rand: rng}, &pt)
			if err != nil {
				return nil, err
			}
			pt.Attacks += float64(attacks)
			if pt.AttacksMin < 0 || attacks < pt.AttacksMin {
				pt.AttacksMin = attacks
			}
			pt.AttacksMax = max(pt.AttacksMax, attacks)
		}
		n := float64(opts.Reps)
		pt.Attacks /= n
		pt.Utility /= n
		pt.UtilityNoAttack /= n
		pt.StepUps /= n
		pt.WrongApproved /= n
		points = append(points, pt)
	}
	return points, nil
}

// sweepRep runs one repetition of pairs with approver a (reusing the
// fixed results), adds its utility and step-ups to pt and returns the
// attacks executed.
func sweepRep(ctx context.Context, mode mandate.Mode, pairs []pair, fixed []*runResult, noRes bool, a *FallibleApprover, pt *SweepPoint) (int, error) {
	attacks := 0
	for i, p := range pairs {
		res := fixed[i]
		if res == nil {
			got, err := p.run(ctx, sessionConfig{mode: mode, noResolution: noRes, approver: a}, false, fmt.Sprintf("m-%d", i))
			if err != nil {
				return 0, err
			}
			res = &got
		}
		if p.alone {
			pt.UtilityNoAttack += float64(b2i(res.utility))
			continue
		}
		attacks += b2i(res.attack)
		pt.Utility += float64(b2i(res.utility))
		pt.StepUps += float64(res.stepUps + res.userStepUps)
		pt.WrongApproved += float64(res.approved)
	}
	return attacks, nil
}

// shares splits the protection at each p between resolution and
// approval (Share).
func shares(points []SweepPoint, ps []float64) []Share {
	var out []Share
	for _, pv := range ps {
		at := func(abl string) float64 {
			for _, pt := range points {
				if pt.Ablation == abl && pt.P == pv {
					return pt.Attacks
				}
			}
			return 0
		}
		n, res, app, both := at(AblationNeither), at(AblationResolution), at(AblationApproval), at(AblationBoth)
		s := Share{P: pv, Protection: n - both}
		if s.Protection != 0 {
			s.Resolution = ((n - res) + (app - both)) / 2 / s.Protection
			s.Approval = ((n - app) + (res - both)) / 2 / s.Protection
		}
		out = append(out, s)
	}
	return out
}

// WriteJSON writes the report as indented JSON.
func (r *SweepReport) WriteJSON(w io.Writer) error { return writeJSON(w, r) }

// WriteTable writes one line per ablation and p, then the shares of the
// protection.
func (r *SweepReport) WriteTable(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "AgentDojo %s %s, fallible approver swept over p (wrong step-up approved), q=%g (right one rejected); mode %s\n", r.Version, r.Suite, r.Q, r.Mode)
	fmt.Fprintf(&b, "%d runs under attack (AgentDojo's injection tasks and the adaptive attacks, attacker first) and %d user tasks alone; mean of %d seeded repetitions (seed %d)\n", r.Runs, r.Tasks, r.Reps, r.Seed)
	fmt.Fprintf(&b, "no gateway: %d attacks executed, utility %d of %d\n\n", r.NoGatewayAttacks, r.NoGatewayUtility, r.Runs)
	fmt.Fprintf(&b, "%-17s %5s %9s %9s %8s %10s %9s %14s\n", "ablation", "p", "attacks", "min-max", "utility", "no-attack", "step-ups", "wrong approved")
	for _, pt := range r.Points {
		fmt.Fprintf(&b, "%-17s %5.2f %9.1f %9s %8.1f %10.1f %9.1f %14.1f\n", pt.Ablation, pt.P, pt.Attacks,
			fmt.Sprintf("%d-%d", pt.AttacksMin, pt.AttacksMax), pt.Utility, pt.UtilityNoAttack, pt.StepUps, pt.WrongApproved)
	}
	b.WriteString("\nshare of the protection (Shapley, attacks stopped: neither - both)\n")
	fmt.Fprintf(&b, "%5s %10s %10s %9s\n", "p", "protection", "resolution", "approval")
	for _, s := range r.Shares {
		fmt.Fprintf(&b, "%5.2f %10.1f %9.0f%% %8.0f%%\n", s.P, s.Protection, 100*s.Resolution, 100*s.Approval)
	}
	_, err := io.WriteString(w, b.String())
	return err
}
