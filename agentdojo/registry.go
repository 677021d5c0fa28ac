package agentdojo

import (
	"context"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
)

// RegistryOptions configure Registry. The zero value runs the banking
// suite over DefaultKs with 5 repetitions, seed 0.
type RegistryOptions struct {
	// Suite is "banking" (the default when empty) or "workspace".
	Suite string
	// DataDir is where the workspace suite's data is read (see DataDir,
	// the default when empty).
	DataDir string
	// Ks are the percentages of legitimate counterparties removed from
	// the registry (banking: beneficiaries; workspace: counterparties,
	// the addresses of the mail, calendar and drive), each in [0, 100];
	// nil means DefaultKs.
	Ks []int
	// Reps is the number of seeded repetitions (orders of removal); zero
	// means 5.
	Reps int
	// Seed seeds the orders of removal.
	Seed uint64
	// UserTasks restricts the run to these user task ids; nil means all.
	UserTasks []int
}

// DefaultKs are the percentages a registry run visits by default.
var DefaultKs = []int{0, 25, 50, 75, 100}

// RegistryPoint is the outcome at one k, averaged over the repetitions.
type RegistryPoint struct {
	K int `json:"k"`
	// Removed is how many of the legitimate counterparties were removed.
	Removed int `json:"removed"`
	// StepUps are the step-ups asked (user's and attacker's calls),
	// UserRefusals the user's own calls refused, Utility the runs under
	// attack that keep their utility, UtilityNoAttack the user tasks alone
	// that do; Attacks the runs whose attack executed.
	StepUps         float64 `json:"step_ups"`
	UserRefusals    float64 `json:"user_refusals"`
	Utility         float64 `json:"utility_ok"`
	UtilityNoAttack float64 `json:"utility_no_attack_ok"`
	Attacks         float64 `json:"attacks_executed"`
	// NewAttacks counts, over all repetitions, the runs whose attack
	// executed at k but not with the full registry (k = 0): the claim
	// "an incomplete registry never gives an attack" holds when it is 0.
	NewAttacks int `json:"new_attacks"`
}

// RegistryReport is the result of Registry.
type RegistryReport struct {
	Suite   string `json:"suite"`
	Version string `json:"version"`
	Mode    string `json:"mode"`
	Reps    int    `json:"reps"`
	Seed    uint64 `json:"seed"`
	// Registry names the registry that loses entries: "beneficiaries"
	// (banking) or "counterparties" (workspace).
	Registry string `json:"registry"`
	// Counterparties are the legitimate counterparties of the
	// environment: the entries the registry can lose.
	Counterparties []string        `json:"counterparties"`
	Runs           int             `json:"runs"`
	Tasks          int             `json:"tasks"`
	Points         []RegistryPoint `json:"points"`
}

// Counterparties returns the accounts of the banking environment's
// beneficiaries registry, canonical and sorted: every sender and
// recipient of the history and the standing orders but the owner's own.
func Counterparties() []string {
	env := Environment(nil)
	seen := map[string]bool{}
	for _, t := range append(slices.Clone(env.Transactions), env.Scheduled...) {
		for _, v := range []string{t.Sender, t.Recipient} {
			if c := compact(v); c != OwnIBAN && c != "ME" {
				seen[c] = true
			}
		}
	}
	out := make([]string, 0, len(seen))
	for v := range seen {
		out = append(out, v)
	}
	slices.Sort(out)
	return out
}

// Registry removes k% of the legitimate counterparties from the
// registry (the first k% of a seeded order, so the removed sets grow with
// k) and replays the user tasks alone and under every attack of the
// suite (as Sweep), attacker first, in known_counterparties mode (strict
// mode never reads the registry) with the ideal approver. It reports
// step-ups, refusals, utility and attacks against k. It returns an error
// for an unknown suite, a k outside [0, 100], or if a run cannot be set up.
func Registry(ctx context.Context, opts RegistryOptions) (*RegistryReport, error) {
	if opts.Ks == nil {
		opts.Ks = DefaultKs
	}
	if opts.Reps <= 0 {
		opts.Reps = 5
	}
	for _, k := range opts.Ks {
		if k < 0 || k > 100 {
			return nil, fmt.Errorf("agentdojo: k = %d is not a percentage between 0 and 100", k)
		}
	}
	sr, err := pairsOf(ctx, opts.Suite, opts.DataDir, opts.UserTasks)
	if err != nil {
		return nil, err
	}
	pairs, cps := sr.pairs, sr.counterparties
	r := &RegistryReport{Suite: sr.suite, Version: "v1.2", Mode: "known_counterparties", Reps: opts.Reps, Seed: opts.Seed,
		Registry: sr.registry, Counterparties: cps, Tasks: sr.tasks, Runs: sr.runs}
	// The full registry, recording what each run looks up: a run that
	// looks up none of the removed accounts takes the same course.
	full := make([]runResult, len(pairs))
	looked := make([]map[string]bool, len(pairs))
	for i, p := range pairs {
		looked[i] = map[string]bool{}
		res, err := p.run(ctx, sessionConfig{seen: looked[i]}, false, fmt.Sprintf("m-%d", i))
		if err != nil {
			return nil, err
		}
		full[i] = res
	}
	cache := map[string][]runResult{}
	for _, k := range opts.Ks {
		n := int(math.Round(float64(k) * float64(len(cps)) / 100))
		pt := RegistryPoint{K: k, Removed: n}
		for rep := 0; rep < opts.Reps; rep++ {
			order := slices.Clone(cps)
			rng := seeded(opts.Seed, uint64(rep))
			rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
			removed := slices.Sorted(slices.Values(order[:n]))
			key := strings.Join(removed, ",")
			results, ok := cache[key]
			if !ok {
				var err error
				if results, err = registryRuns(ctx, pairs, full, looked, removed); err != nil {
					return nil, err
				}
				cache[key] = results
			}
			for i, p := range pairs {
				res := results[i]
				if p.alone {
					pt.UtilityNoAttack += float64(b2i(res.utility))
					continue
				}
				pt.StepUps += float64(res.stepUps + res.userStepUps)
				pt.UserRefusals += float64(res.userRefusals)
				pt.Utility += float64(b2i(res.utility))
				pt.Attacks += float64(b2i(res.attack))
				if res.attack && !full[i].attack {
					pt.NewAttacks++
				}
			}
		}
		reps := float64(opts.Reps)
		pt.StepUps /= reps
		pt.UserRefusals /= reps
		pt.Utility /= reps
		pt.UtilityNoAttack /= reps
		pt.Attacks /= reps
		r.Points = append(r.Points, pt)
	}
	return r, nil
}

// registryRuns replays pairs with the removed accounts hidden from the
// registry; a run that looked up none of them (looked, with the full
// registry) keeps its full result.
func registryRuns(ctx context.Context, pairs []pair, full []runResult, looked []map[string]bool, removed []string) ([]runResult, error) {
	hidden := map[string]bool{}
	for _, v := range removed {
		hidden[v] = true
	}
	results := make([]runResult, len(pairs))
	for i, p := range pairs {
		touched := false
		for v := range looked[i] {
			touched = touched || hidden[v]
		}
		if !touched {
			results[i] = full[i]
			continue
		}
		res, err := p.run(ctx, sessionConfig{hidden: hidden}, false, fmt.Sprintf("m-%d", i))
		if err != nil {
			return nil, err
		}
		results[i] = res
	}
	return results, nil
}

// WriteJSON writes the report as indented JSON.
func (r *RegistryReport) WriteJSON(w io.Writer) error { return writeJSON(w, r) }

// WriteTable writes one line per k.
func (r *RegistryReport) WriteTable(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "AgentDojo %s %s, %s registry with k%% of its %d legitimate counterparties removed (seeded); mode %s, ideal approver\n", r.Version, r.Suite, r.Registry, len(r.Counterparties), r.Mode)
	fmt.Fprintf(&b, "%d runs under attack (attacker first) and %d user tasks alone; mean of %d seeded repetitions (seed %d)\n\n", r.Runs, r.Tasks, r.Reps, r.Seed)
	fmt.Fprintf(&b, "%4s %7s %9s %14s %8s %10s %8s %12s\n", "k", "removed", "step-ups", "user refusals", "utility", "no-attack", "attacks", "new attacks")
	for _, pt := range r.Points {
		fmt.Fprintf(&b, "%3d%% %7d %9.1f %14.1f %8.1f %10.1f %8.1f %12d\n", pt.K, pt.Removed, pt.StepUps, pt.UserRefusals, pt.Utility, pt.UtilityNoAttack, pt.Attacks, pt.NewAttacks)
	}
	b.WriteString("(new attacks: runs whose attack executed with the registry incomplete but not with it full, over all repetitions)\n")
	_, err := io.WriteString(w, b.String())
	return err
}
