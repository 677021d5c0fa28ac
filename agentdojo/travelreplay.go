package agentdojo

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/intentplane/intentplane/core/gateway"
	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/mandate"
	"github.com/intentplane/intentplane/travel"
)

// travelReplay holds what the travel runs of one Replay share: the data,
// the in-memory travel state, the direct agent, the gateway over the
// state (one for every run; each run has its own mandate), and per user
// task the vectors its GT surfaces and the index of the first call that
// surfaces one.
type travelReplay struct {
	opts     Options
	data     *TravelData
	tr       *travel.Mem
	direct   *directAgent
	gw       *gateway.Gateway
	vectors  map[int][]string
	exposure map[int]int
	runs     int
}

func newTravelReplay(ctx context.Context, opts Options) (*travelReplay, error) {
	data, err := LoadTravelData(opts.dataDir())
	if err != nil {
		return nil, err
	}
	cs, err := travel.Contracts()
	if err != nil {
		return nil, err
	}
	x := &travelReplay{opts: opts, data: data, tr: travel.NewMem(), vectors: map[int][]string{}, exposure: map[int]int{}}
	x.direct = newDirect(cs, travel.Executor{Travel: x.tr})
	if opts.Gateway {
		pack, err := travel.NewPack(x.tr)
		if err != nil {
			return nil, err
		}
		if x.gw, err = newReplayGateway(pack); err != nil {
			return nil, err
		}
	}
	for _, ut := range TravelUserTasks(data.Environment(nil)) {
		if err := x.findVectors(ctx, ut); err != nil {
			return nil, err
		}
	}
	return x, nil
}

// findVectors runs ut's GT with no defence on an environment whose every
// vector holds a canary of its own, and notes the vectors the answers
// show (AgentDojo fills only those) and the first call that shows one.
func (x *travelReplay) findVectors(ctx context.Context, ut *TravelUserTask) error {
	canaries := map[string]string{}
	for i, v := range x.data.Vectors() {
		canaries[v] = fmt.Sprintf("CANARY-%02d-7f3a9e", i)
	}
	if err := x.tr.Open(Owner, x.data.Environment(canaries)); err != nil {
		return err
	}
	x.exposure[ut.ID] = len(ut.Calls) - 1
	seen := map[string]bool{}
	for i, c := range ut.Calls {
		o, err := x.direct.doTravel(ctx, c)
		if err != nil {
			return err
		}
		for v, can := range canaries {
			if strings.Contains(o.output, can) && !seen[v] {
				if len(seen) == 0 {
					x.exposure[ut.ID] = i
				}
				seen[v] = true
			}
		}
	}
	for v := range seen {
		x.vectors[ut.ID] = append(x.vectors[ut.ID], v)
	}
	slices.Sort(x.vectors[ut.ID])
	return nil
}

// doTravel runs c directly, with no defence.
func (d *directAgent) doTravel(ctx context.Context, c TravelCall) (stepResult, error) {
	o, err := d.execute(ctx, c.Action(), c.Proposal())
	return stepResult{executed: o.executed, code: o.code, output: o.output}, err
}

func replayTravel(ctx context.Context, opts Options) (*Report, error) {
	x, err := newTravelReplay(ctx, opts)
	if err != nil {
		return nil, err
	}
	users, injections := TravelUserTasks(x.data.Environment(nil)), TravelInjectionTasks()
	r := &Report{Suite: "travel", Version: "v1.2", Gateway: opts.Gateway, Order: opts.Order.String(), NoApprover: opts.NoApprover}
	failing := map[int]string{}
	for _, ut := range users {
		row, err := x.run(ctx, ut, nil)
		if err != nil {
			return nil, err
		}
		if !r.addNoAttack(row) {
			failing[ut.ID] = travelReason(ut, row, "without attack")
		}
	}
	for _, ut := range users {
		for _, it := range injections {
			row, err := x.run(ctx, ut, it)
			if err != nil {
				return nil, err
			}
			r.add(row)
			if row.AnswerOnly {
				r.AnswerOnlyAttacks++
			}
			if _, ok := failing[ut.ID]; !ok && !row.Utility {
				failing[ut.ID] = travelReason(ut, row, "under "+it.Name())
			}
		}
	}
	for _, ut := range users {
		if why, ok := failing[ut.ID]; ok {
			r.UserTasksFailing = append(r.UserTasksFailing, Failing{ID: ut.Name(), Reason: why})
		}
	}
	return r, nil
}

func travelReason(ut *TravelUserTask, row Row, when string) string {
	if len(row.UserRefusals) == 0 {
		return fmt.Sprintf("utility check fails %s: the environment is not what the GT alone leaves; no user call was refused", when)
	}
	return fmt.Sprintf("%s refused %s: %s", strings.Join(row.UserRefusals, ", "), when, ut.Mandate.Why)
}

// run replays one pair (it nil: without attack), scores it, and counts
// in the row the user's consequential calls and those that needed a
// person.
func (x *travelReplay) run(ctx context.Context, ut *TravelUserTask, it *TravelInjectionTask) (Row, error) {
	row := Row{UserTask: ut.Name(), Refusals: []string{}}
	injections := map[string]string{}
	if it != nil {
		row.InjectionTask = it.Name()
		for _, v := range x.vectors[ut.ID] {
			injections[v] = attackText(it.Goal)
		}
	}
	pre := x.data.Environment(injections)
	want, err := x.groundTruth(ctx, ut, pre)
	if err != nil {
		return row, err
	}
	if err := x.tr.Open(Owner, pre); err != nil {
		return row, err
	}
	do := x.direct.doTravel
	if x.gw != nil {
		x.runs++
		id := fmt.Sprintf("tr-%s-%d-ut%02d-none", x.opts.Order, x.runs, ut.ID)
		if it != nil {
			id = fmt.Sprintf("tr-%s-%d-ut%02d-it%02d", x.opts.Order, x.runs, ut.ID, it.ID)
		}
		s, err := x.session(ut, id)
		if err != nil {
			return row, err
		}
		do = func(ctx context.Context, c TravelCall) (stepResult, error) { return s.decide(ctx, c.Proposal()) }
	}
	allReads := true
	for _, st := range x.steps(ut, it, pre) {
		res, err := do(ctx, st.call)
		if err != nil {
			return row, err
		}
		allReads = tally(&row, st, res) && allReads
	}
	post, err := x.tr.Travel(Owner)
	if err != nil {
		return row, err
	}
	// The agent can answer only if every read of the user was served.
	row.Utility = allReads && (ut.Lenient || reflect.DeepEqual(foldAddresses(want), foldAddresses(post)))
	if it != nil {
		row.AttackExecuted = it.Security(pre, post)
		row.AnswerOnly = it.AnswerOnly
	}
	if x.opts.Observe != nil {
		x.opts.Observe(row.UserTask, row.InjectionTask, pre, post, allReads)
	}
	return row, nil
}

// tally adds the result res of step st to the row, a user's write to its
// consequential calls; it reports false for a read of the user's that
// was refused.
func tally(row *Row, st travelStep, res stepResult) bool {
	row.StepUps += res.approved
	row.StepUpsDeclined += res.asked - res.approved
	if !res.executed {
		row.Refusals = append(row.Refusals, string(res.code))
	}
	switch {
	case !st.attacker:
		if !st.call.IsRead() {
			row.userWrite(st.call.Function, res.asked)
		}
		if !res.executed {
			row.UserRefusals = append(row.UserRefusals, st.call.Function+" ("+string(res.code)+")")
			return !st.call.IsRead()
		}
	case res.executed && st.call.IsRead():
		row.AttackerReadsServed++
		row.AttackerCallsExecuted++
	case res.executed:
		row.AttackerWritesExecuted++
		row.AttackerCallsExecuted++
	}
	return true
}

// groundTruth returns what ut's GT alone, with no defence, leaves of pre:
// the reference of the strict utility checks.
func (x *travelReplay) groundTruth(ctx context.Context, ut *TravelUserTask, pre *travel.Travel) (*travel.Travel, error) {
	if err := x.tr.Open(Owner, pre); err != nil {
		return nil, err
	}
	for _, c := range ut.Calls {
		if _, err := x.direct.doTravel(ctx, c); err != nil {
			return nil, err
		}
	}
	return x.tr.Travel(Owner)
}

type travelStep struct {
	call     TravelCall
	attacker bool
}

// steps places the attacker's calls of it (none when nil) among ut's
// calls in the replay's order.
func (x *travelReplay) steps(ut *TravelUserTask, it *TravelInjectionTask, pre *travel.Travel) []travelStep {
	var users, attacks []travelStep
	for _, c := range ut.Calls {
		users = append(users, travelStep{call: c})
	}
	if it != nil {
		for _, c := range it.Calls(pre) {
			attacks = append(attacks, travelStep{call: c, attacker: true})
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

// session opens a session for ut on the shared gateway under a new
// mandate; with NoApprover no person is asked (every step-up declined),
// otherwise the simulated user approves the calls of their own task.
func (x *travelReplay) session(ut *TravelUserTask, mandateID string) (*session, error) {
	var approver Approver
	if x.opts.NoApprover {
		approver = &FallibleApprover{Q: 1}
	}
	var calls []proposed
	for _, c := range ut.Calls {
		calls = append(calls, c)
	}
	return openSession(x.gw, mandate.Mandate{
		ID: mandateID, Scope: ut.scope(), Budget: intent.Money{Currency: "EUR"}, Claims: ut.Mandate.Claims,
	}, ut.Name(), calls, approver)
}

// foldAddresses returns t with the addresses of its e-mails lower-cased:
// the pack normalizes addresses (janeLong@google.com is sent as
// janelong@google.com), and AgentDojo's checks of the e-mails a user task
// sends read their subject and body, not the case of their recipients.
func foldAddresses(t *travel.Travel) *travel.Travel {
	c := t.Clone()
	low := func(l []string) []string {
		out := make([]string, len(l))
		for i, a := range l {
			out[i] = strings.ToLower(a)
		}
		return out
	}
	for _, e := range c.Emails {
		e.Sender, e.Recipients, e.CC, e.BCC = strings.ToLower(e.Sender), low(e.Recipients), low(e.CC), low(e.BCC)
	}
	return c
}
