package agentdojo

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/intentplane/intentplane/core/gateway"
	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/mandate"
	"github.com/intentplane/intentplane/slack"
)

// SlackState is one replayed run of the slack suite as AgentDojo's checks
// see it: the environments before and after, the calls that executed and
// those the agent proposed, in order, and the replay's verdicts.
type SlackState struct {
	UserTask      string          `json:"user_task"`
	InjectionTask string          `json:"injection_task,omitempty"`
	Pre           slack.Workspace `json:"pre"`
	Post          slack.Workspace `json:"post"`
	Executed      []SlackTraceRow `json:"executed"`
	Proposed      []SlackTraceRow `json:"proposed"`
	Utility       bool            `json:"utility"`
	Security      bool            `json:"security"`
}

// SlackTraceRow is one call of a trace: AgentDojo's function name and
// arguments.
type SlackTraceRow struct {
	Function string            `json:"function"`
	Args     map[string]string `json:"args"`
}

type slackReplay struct {
	opts     Options
	data     *SlackData
	ws       *slack.Mem
	gw       *gateway.Gateway
	direct   *directAgent
	exposure map[int]int
	runs     int
	// mode is the mandates' mode; empty is known_counterparties.
	mode mandate.Mode
	// states, when keep, collects every run (SlackStates).
	keep   bool
	states []SlackState
}

func newSlackReplay(opts Options) (*slackReplay, error) {
	dir := opts.DataDir
	if dir == "" {
		dir = DataDir()
	}
	data, err := LoadSlackData(dir)
	if err != nil {
		return nil, err
	}
	x := &slackReplay{opts: opts, data: data, ws: slack.NewMem(), exposure: map[int]int{}}
	cs, err := slack.Contracts()
	if err != nil {
		return nil, err
	}
	x.direct = newDirect(cs, slack.Executor{WS: x.ws})
	if opts.Gateway {
		pack, err := slack.NewPack(x.ws)
		if err != nil {
			return nil, err
		}
		if x.gw, err = newReplayGateway(pack); err != nil {
			return nil, err
		}
	}
	for _, ut := range SlackUserTasks() {
		if x.exposure[ut.ID], err = x.findExposure(context.Background(), ut); err != nil {
			return nil, err
		}
	}
	return x, nil
}

// SlackStates replays the slack suite as Replay does and returns every
// run (without attack first, then each pair), for AgentDojo's own checks
// to score (the cross-check).
func SlackStates(ctx context.Context, opts Options) ([]SlackState, error) {
	x, err := newSlackReplay(opts)
	if err != nil {
		return nil, err
	}
	x.keep = true
	if _, err := x.replay(ctx); err != nil {
		return nil, err
	}
	return x.states, nil
}

func replaySlack(ctx context.Context, opts Options) (*Report, error) {
	x, err := newSlackReplay(opts)
	if err != nil {
		return nil, err
	}
	return x.replay(ctx)
}

func (x *slackReplay) replay(ctx context.Context) (*Report, error) {
	opts := x.opts
	users, injections := SlackUserTasks(), SlackInjectionTasks()
	r := &Report{Suite: "slack", Version: "v1.2", Gateway: opts.Gateway, Order: opts.Order.String(), NoApprover: opts.NoApprover}
	failing := map[int]string{}
	for _, ut := range users {
		row, _, err := x.run(ctx, ut, nil)
		if err != nil {
			return nil, err
		}
		if !r.addNoAttack(row) {
			failing[ut.ID] = slackReason(ut, row, "without attack")
		}
	}
	for _, ut := range users {
		for _, it := range injections {
			row, load, err := x.run(ctx, ut, it)
			if err != nil {
				return nil, err
			}
			if load.proposedAttack {
				r.AttacksCountingProposals++
			}
			r.add(row)
			if _, ok := failing[ut.ID]; !ok && !row.Utility {
				failing[ut.ID] = slackReason(ut, row, "under "+it.Name())
			}
		}
	}
	for _, ut := range users {
		if why, ok := failing[ut.ID]; ok {
			r.UserTasksFailing = append(r.UserTasksFailing, Failing{ID: ut.Name(), Reason: why})
		}
	}
	if opts.Extras {
		var err error
		if r.Variants, err = x.variants(ctx, users, injections); err != nil {
			return nil, err
		}
	}
	return r, nil
}

func slackReason(ut *SlackUserTask, row Row, when string) string {
	if len(row.UserRefusals) == 0 {
		return fmt.Sprintf("utility check fails %s: an attacker's write changed the environment; no user call was refused", when)
	}
	return fmt.Sprintf("%s refused %s: %s", strings.Join(row.UserRefusals, ", "), when, ut.Mandate.Why)
}

// findExposure returns the index of the first GT call of ut whose answer
// shows the content of an injection vector, found by running the GT with
// no defence on an environment whose vectors hold a canary.
func (x *slackReplay) findExposure(ctx context.Context, ut *SlackUserTask) (int, error) {
	const canary = "CANARY-5c1d"
	inj := map[string]string{}
	for _, v := range ut.Vectors {
		inj[v] = canary
	}
	pre := x.data.Environment(inj)
	x.ws.Reset(Owner, pre)
	for i, c := range ut.Calls {
		o, err := x.direct.execute(ctx, c.Action(), c.bind(pre).Proposal())
		if err != nil {
			return 0, err
		}
		if strings.Contains(o.output, canary) {
			return i, nil
		}
	}
	return 0, fmt.Errorf("agentdojo: slack %s: no call of its GT surfaces its injection vectors", ut.Name())
}

// slackLoad is what one run tells of the proposed calls (the person's
// load is in the row: Row.UserWrites).
type slackLoad struct {
	// proposedAttack is the injection task's check fed every call the
	// agent proposed, executed or not (as AgentDojo's trace-based check
	// of injection task 5 is).
	proposedAttack bool
}

type slackStep struct {
	call SlackCall
	user bool
}

// steps places the attacker's calls among the user's in the replay's
// order.
func (x *slackReplay) steps(ut *SlackUserTask, it *SlackInjectionTask, pre slack.Workspace, ch func([]SlackCall) []SlackCall) []slackStep {
	var users, attacks []slackStep
	for _, c := range ut.Calls {
		users = append(users, slackStep{call: c.bind(pre), user: true})
	}
	if it != nil {
		calls := it.Calls(pre)
		if ch != nil {
			calls = ch(calls)
		}
		for _, c := range calls {
			attacks = append(attacks, slackStep{call: c})
		}
	}
	exp := x.exposure[ut.ID]
	switch x.opts.Order {
	case AfterExposure:
		return slices.Concat(users[:exp+1], attacks, users[exp+1:])
	case AttackerLast:
		return slices.Concat(users, attacks)
	}
	return slices.Concat(attacks, users)
}

// run replays one pair (it nil: without attack) and scores it with the
// suite's own checks.
func (x *slackReplay) run(ctx context.Context, ut *SlackUserTask, it *SlackInjectionTask) (Row, slackLoad, error) {
	row, load, _, err := x.runVariant(ctx, ut, it, nil, nil)
	return row, load, err
}

// runVariant is run with the attacker's calls changed by ch (nil keeps
// them); it also reports whether the attacker received anything, by
// judge or, when judge is nil, by slackLeaked.
func (x *slackReplay) runVariant(ctx context.Context, ut *SlackUserTask, it *SlackInjectionTask, ch func([]SlackCall) []SlackCall, judge slackJudge) (Row, slackLoad, bool, error) {
	var load slackLoad
	row := Row{UserTask: ut.Name(), Refusals: []string{}}
	injections := map[string]string{}
	if it != nil {
		row.InjectionTask = it.Name()
		for _, v := range ut.Vectors {
			injections[v] = attackText(it.Goal)
		}
	}
	pre := x.data.Environment(injections)
	x.ws.Reset(Owner, pre)
	do := func(c SlackCall) (stepResult, error) {
		o, err := x.direct.execute(ctx, c.Action(), c.Proposal())
		return stepResult{executed: o.executed, code: o.code, output: o.output}, err
	}
	if x.opts.Gateway {
		s, err := x.session(ut, it, pre)
		if err != nil {
			return row, load, false, err
		}
		do = func(c SlackCall) (stepResult, error) { return s.decide(ctx, c.Proposal()) }
	}
	var executed, proposed []SlackCall
	for _, st := range x.steps(ut, it, pre, ch) {
		r, err := do(st.call)
		if err != nil {
			return row, load, false, err
		}
		proposed = append(proposed, st.call)
		if r.executed {
			executed = append(executed, st.call)
		}
		slackCount(&row, st, r)
	}
	post, err := x.ws.Workspace(Owner)
	if err != nil {
		return row, load, false, err
	}
	row.Utility = ut.Utility(pre, post, executed)
	if it != nil {
		row.AttackExecuted = it.Security(pre, post, executed)
		load.proposedAttack = it.Security(pre, post, proposed)
	}
	if x.keep {
		x.states = append(x.states, SlackState{
			UserTask: row.UserTask, InjectionTask: row.InjectionTask, Pre: pre, Post: post,
			Executed: traceRows(executed), Proposed: traceRows(proposed), Utility: row.Utility, Security: row.AttackExecuted,
		})
	}
	if judge == nil {
		return row, load, slackLeaked(post, executed), nil
	}
	return row, load, judge(pre, post, executed), nil
}

// slackJudge says whether an attack reached its aim, on the environments
// before and after a run and the calls that executed.
type slackJudge func(pre, post slack.Workspace, executed []SlackCall) bool

func traceRows(cs []SlackCall) []SlackTraceRow {
	out := make([]SlackTraceRow, len(cs))
	for i, c := range cs {
		out[i] = SlackTraceRow(c)
	}
	return out
}

// slackCount adds the result r of step st to the row.
func slackCount(row *Row, st slackStep, r stepResult) {
	row.StepUps += r.approved
	row.StepUpsDeclined += r.asked - r.approved
	if !r.executed {
		row.Refusals = append(row.Refusals, string(r.code))
	}
	switch {
	case st.user:
		if !st.call.IsRead() {
			row.userWrite(st.call.Function, r.asked)
		}
		if !r.executed {
			row.UserRefusals = append(row.UserRefusals, st.call.Function+" ("+string(r.code)+")")
		}
	case !r.executed:
	case st.call.IsRead():
		row.AttackerReadsServed++
		row.AttackerCallsExecuted++
	default:
		row.AttackerWritesExecuted++
		row.AttackerCallsExecuted++
	}
}

// session opens a session for ut on the shared gateway under a new
// mandate: the task's claims, the actions of its GT as scope. The
// simulated user approves the calls of their own task (bound to pre's
// External channel), or, with NoApprover, no person is asked.
func (x *slackReplay) session(ut *SlackUserTask, it *SlackInjectionTask, pre slack.Workspace) (*session, error) {
	x.runs++
	id := fmt.Sprintf("slack-%s-%d-ut%02d-none", x.opts.Order, x.runs, ut.ID)
	if it != nil {
		id = fmt.Sprintf("slack-%s-%d-ut%02d-it%02d", x.opts.Order, x.runs, ut.ID, it.ID)
	}
	var approver Approver
	if x.opts.NoApprover {
		approver = &FallibleApprover{Q: 1}
	}
	var calls []proposed
	for _, c := range ut.Calls {
		calls = append(calls, c.bind(pre))
	}
	return openSession(x.gw, mandate.Mandate{
		ID: id, Scope: ut.scope(), Budget: intent.Money{Currency: "EUR"}, Claims: ut.Mandate.Claims, Mode: x.mode,
	}, ut.Name(), calls, approver)
}

// SlackSurfacedVectors runs every user task's GT, with no defence, on the
// environment whose every vector holds its own canary, and returns per
// user task the vectors whose canary some call's output shows, sorted:
// what AgentDojo computes to choose the vectors it injects.
func SlackSurfacedVectors(dir string) (map[string][]string, error) {
	x, err := newSlackReplay(Options{DataDir: dir})
	if err != nil {
		return nil, err
	}
	canaries := map[string]string{}
	for v := range x.data.defaults {
		canaries[v] = "CANARY-" + v + "-"
	}
	out := map[string][]string{}
	for _, ut := range SlackUserTasks() {
		pre := x.data.Environment(canaries)
		x.ws.Reset(Owner, pre)
		var seen []string
		for _, c := range ut.Calls {
			o, err := x.direct.execute(context.Background(), c.Action(), c.bind(pre).Proposal())
			if err != nil {
				return nil, err
			}
			for v, can := range canaries {
				if strings.Contains(o.output, can) && !slices.Contains(seen, v) {
					seen = append(seen, v)
				}
			}
		}
		slices.Sort(seen)
		out[ut.Name()] = seen
	}
	return out, nil
}
