package agentdojo

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// Suites are AgentDojo v1.2's four suites, in the order ReplayAll runs
// them: 144, 560, 105 and 140 pairs, 949 in all.
var Suites = []string{"banking", "workspace", "slack", "travel"}

// AllReport is the replay of every suite (`agentdojo replay --suite
// all`): each suite's report and the totals over the 949 pairs.
type AllReport struct {
	Gateway bool      `json:"gateway"`
	Order   string    `json:"order"`
	Suites  []*Report `json:"suites"`
	// Runs, AttacksExecuted, UtilityOK, UtilityTotal, UtilityNoAttackOK
	// and UtilityNoAttackTotal are the suites' sums.
	Runs                 int `json:"runs"`
	AttacksExecuted      int `json:"attacks_executed"`
	UtilityOK            int `json:"utility_ok"`
	UtilityTotal         int `json:"utility_total"`
	UtilityNoAttackOK    int `json:"utility_no_attack_ok"`
	UtilityNoAttackTotal int `json:"utility_no_attack_total"`
	// AnswerOnlyAttacks are the suites' answer-only attacks (travel's
	// injection task 6: words in the final answer, no tool call), which
	// no gateway sees and AttacksExecuted leaves out.
	AnswerOnlyAttacks int `json:"answer_only_attacks"`
	// Load is, per suite, the human-in-the-loop load: of the user
	// tasks' consequential calls (calls of an action whose contract is
	// not ReadOnly), those that needed a person (a step-up, approved or
	// declined), without attack and under attack. LoadTotal is their sum
	// over the four suites; its Tasks are every suite's, each prefixed
	// with the suite ("banking user_task_2: update_scheduled_transaction").
	Load      []SuiteLoad `json:"load"`
	LoadTotal HumanLoad   `json:"load_total"`
}

// SuiteLoad is one suite's HumanLoad (Report.HumanLoad), named.
type SuiteLoad struct {
	Suite string `json:"suite"`
	HumanLoad
}

// ReplayAll replays every suite of Suites with opts (Suite ignored; the
// workspace and slack suites with their extras, as the command does) and
// sums them.
func ReplayAll(ctx context.Context, opts Options) (*AllReport, error) {
	all := &AllReport{Gateway: opts.Gateway, Order: opts.Order.String()}
	for _, s := range Suites {
		o := opts
		o.Suite, o.Extras = s, s == "workspace" || s == "slack"
		r, err := Replay(ctx, o)
		if err != nil {
			return nil, fmt.Errorf("agentdojo: suite %s: %w", s, err)
		}
		all.add(r)
	}
	return all, nil
}

func (a *AllReport) add(r *Report) {
	a.Suites = append(a.Suites, r)
	a.Runs += r.Runs
	a.AttacksExecuted += r.AttacksExecuted
	a.UtilityOK += r.UtilityOK
	a.UtilityTotal += r.UtilityTotal
	a.UtilityNoAttackOK += r.UtilityNoAttackOK
	a.UtilityNoAttackTotal += r.UtilityNoAttackTotal
	a.AnswerOnlyAttacks += r.AnswerOnlyAttacks
	l := SuiteLoad{Suite: r.Suite, HumanLoad: HumanLoad{Tasks: []string{}}}
	if r.HumanLoad != nil {
		l.HumanLoad = *r.HumanLoad
	}
	a.Load = append(a.Load, l)
	t := &a.LoadTotal
	t.NoAttackCalls += l.NoAttackCalls
	t.NoAttackAsked += l.NoAttackAsked
	t.UnderAttackCalls += l.UnderAttackCalls
	t.UnderAttackAsked += l.UnderAttackAsked
	if t.Tasks == nil {
		t.Tasks = []string{}
	}
	for _, task := range l.Tasks {
		t.Tasks = append(t.Tasks, r.Suite+" "+task)
	}
}

// WriteJSON writes the report as one JSON object.
func (a *AllReport) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(a)
}

// WriteTable writes the report for people: one line per suite and the
// totals, then the human-in-the-loop load the same way.
func (a *AllReport) WriteTable(w io.Writer) error {
	var b strings.Builder
	mode := "through the intentplane gateway"
	if !a.Gateway {
		mode = "without a defence"
	}
	fmt.Fprintf(&b, "AgentDojo v1.2, all four suites, replayed %s, order %s (95%% CI: Wilson score interval, each pair or task one trial)\n\n", mode, a.Order)
	fmt.Fprintf(&b, "%-10s %-36s %-38s %s\n", "suite", "attacks executed", "utility under attack", "utility without attack")
	for _, r := range a.Suites {
		fmt.Fprintf(&b, "%-10s %-36s %-38s %s\n", r.Suite, rate(r.AttacksExecuted, r.Runs), rate(r.UtilityOK, r.UtilityTotal), rate(r.UtilityNoAttackOK, r.UtilityNoAttackTotal))
	}
	fmt.Fprintf(&b, "%-10s %-36s %-38s %s\n", "all", rate(a.AttacksExecuted, a.Runs), rate(a.UtilityOK, a.UtilityTotal), rate(a.UtilityNoAttackOK, a.UtilityNoAttackTotal))
	if a.AnswerOnlyAttacks > 0 {
		fmt.Fprintf(&b, "\nanswer-only attacks (the attacker's words in the final answer, no tool call; no gateway sees them): %d of %d\n", a.AnswerOnlyAttacks, a.Runs)
	}
	fmt.Fprintf(&b, "\nhuman-in-the-loop load: the user tasks' consequential calls (of an action that changes something) that needed a person\n")
	fmt.Fprintf(&b, "(95%% CI over calls; under attack each call recurs once per injection task)\n")
	fmt.Fprintf(&b, "%-10s %-36s %s\n", "suite", "without attack", "under attack")
	for _, l := range a.Load {
		fmt.Fprintf(&b, "%-10s %-36s %s\n", l.Suite, rate(l.NoAttackAsked, l.NoAttackCalls), rate(l.UnderAttackAsked, l.UnderAttackCalls))
	}
	t := a.LoadTotal
	fmt.Fprintf(&b, "%-10s %-36s %s\n", "all", rate(t.NoAttackAsked, t.NoAttackCalls), rate(t.UnderAttackAsked, t.UnderAttackCalls))
	if len(t.Tasks) > 0 {
		fmt.Fprintf(&b, "asked without attack: %s\n", strings.Join(t.Tasks, "; "))
	}
	_, err := io.WriteString(w, b.String())
	return err
}
