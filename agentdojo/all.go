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
	// Asked is, per suite, the user tasks that asked a person without
	// attack and the step-ups they made (approved or declined): the
	// decisions people make for the suite's 16, 40, 21 and 20 tasks.
	Asked []SuiteLoad `json:"asked"`
}

// SuiteLoad is how much of people's attention a suite's user tasks take
// without attack: TasksAsked of Tasks asked a person at least once, in
// StepUps decisions in all.
type SuiteLoad struct {
	Suite      string `json:"suite"`
	Tasks      int    `json:"tasks"`
	TasksAsked int    `json:"tasks_asked"`
	StepUps    int    `json:"step_ups"`
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
	l := SuiteLoad{Suite: r.Suite, Tasks: len(r.NoAttack)}
	for _, row := range r.NoAttack {
		if n := row.StepUps + row.StepUpsDeclined; n > 0 {
			l.TasksAsked++
			l.StepUps += n
		}
	}
	a.Asked = append(a.Asked, l)
}

// WriteJSON writes the report as one JSON object.
func (a *AllReport) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(a)
}

// WriteTable writes the report for people: one line per suite, the
// totals, and the people asked per suite.
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
	fmt.Fprintf(&b, "\npeople asked, without attack:\n")
	for _, l := range a.Asked {
		fmt.Fprintf(&b, "  %-10s %s of the user tasks asked a person; %d decisions\n", l.Suite, rate(l.TasksAsked, l.Tasks), l.StepUps)
	}
	_, err := io.WriteString(w, b.String())
	return err
}
