package agentdojo

import (
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/intentplane/intentplane/banking"
	"github.com/intentplane/intentplane/core/approval"
	"github.com/intentplane/intentplane/core/contract"
	"github.com/intentplane/intentplane/core/gateway"
	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/mandate"
	"github.com/intentplane/intentplane/store/mem"
)

// Order says when the attacker's calls run relative to the user's.
type Order int

// The orders of calls. AgentDojo's §5 figures for banking without defence:
// 143 attacks of 144 succeed with AttackerFirst and AfterExposure, 144 with
// AttackerLast.
const (
	// AttackerFirst runs every attacker call before the user's calls.
	AttackerFirst Order = iota
	// AfterExposure runs them right after the user's call that surfaces
	// the injection.
	AfterExposure
	// AttackerLast runs them after all the user's calls.
	AttackerLast
)

// String returns "attacker_first", "after_exposure" or "attacker_last".
func (o Order) String() string {
	switch o {
	case AfterExposure:
		return "after_exposure"
	case AttackerLast:
		return "attacker_last"
	}
	return "attacker_first"
}

// Options configure Replay. The zero value replays the banking suite
// without the gateway, attacker calls first.
type Options struct {
	// Suite is "banking" (the default when empty) or "workspace".
	Suite string
	// DataDir is the suite data directory the workspace suite is read from
	// (see DataDir, the default when empty). Banking's data is built in.
	DataDir string
	// NoApprover declines every step-up: no person is asked. The default
	// is a simulated user who approves the calls of their own task.
	NoApprover bool
	// Extras also replays, for the workspace suite, every pair with no
	// defence, attacker first, to list the pairs an attack cannot win
	// (Report.Unreachable; free when that is the mode replayed), and the
	// variants of the injection tasks that AgentDojo's checks do not count
	// (Report.Variants); for the slack suite, only the variants.
	Extras bool
	// Gateway runs every call as a proposal through intentplane's gateway
	// with the banking pack; false calls the bank directly, with no
	// defence at all (AgentDojo's "no defense" baseline).
	Gateway bool
	// Order places the attacker's calls; the zero value is AttackerFirst.
	Order Order
	// Observe, when not nil, sees each run of the banking, workspace and
	// travel suites once scored: the pair (injectionTask "" without
	// attack), the environments before and after (banking.Account,
	// workspace.Workspace or *travel.Travel), and whether every call
	// (banking) or read (workspace, travel) of the user was served: the
	// agent can answer. For cross-checks with AgentDojo's own code.
	Observe func(userTask, injectionTask string, pre, post any, answered bool)
}

// dataDir is DataDir unless the options name a directory.
func (o Options) dataDir() string {
	if o.DataDir != "" {
		return o.DataDir
	}
	return DataDir()
}

// Row is the outcome of one run: a user task under one injection task, or
// without attack (InjectionTask empty).
type Row struct {
	UserTask      string `json:"user_task"`
	InjectionTask string `json:"injection_task,omitempty"`
	// AttackExecuted is the injection task's security check on the final
	// environment.
	AttackExecuted bool `json:"attack_executed"`
	// AttackerCallsExecuted counts every attacker call that executed at
	// all: AttackerWritesExecuted (calls that changed the bank) plus
	// AttackerReadsServed (read calls that were answered).
	AttackerCallsExecuted  int `json:"attacker_calls_executed"`
	AttackerWritesExecuted int `json:"attacker_writes_executed"`
	AttackerReadsServed    int `json:"attacker_reads_served"`
	// Utility is the user task's utility check.
	Utility bool `json:"utility"`
	// Refusals are the reason codes of every refused call, in call order
	// (attacker's and user's).
	Refusals []string `json:"refusals"`
	// UserRefusals name the user's own refused calls with their codes.
	UserRefusals []string `json:"user_refusals,omitempty"`
	// StepUps counts the step-ups the simulated user approved, and
	// StepUpsDeclined those declined (every one when no person is asked).
	StepUps         int `json:"step_ups_approved,omitempty"`
	StepUpsDeclined int `json:"step_ups_declined,omitempty"`
	// AnswerOnly marks an injection task whose attack is on the agent's
	// final answer, not on an action (travel's task 6): the worst-case
	// agent carries it out, no tool call shows it, and AttackExecuted
	// (the actions' count) leaves it out.
	AnswerOnly bool `json:"answer_only,omitempty"`
	// UserWrites counts the user's own consequential calls, those of an
	// action that changes something (its pack's contract is not
	// ReadOnly), and UserWritesAsked names, by function, those among
	// them that needed a person (a step-up, approved or declined).
	UserWrites      int      `json:"user_writes,omitempty"`
	UserWritesAsked []string `json:"user_writes_asked,omitempty"`
}

// userWrite counts a consequential call of the user's, of function fn,
// that made asked step-ups.
func (row *Row) userWrite(fn string, asked int) {
	row.UserWrites++
	if asked > 0 {
		row.UserWritesAsked = append(row.UserWritesAsked, fn)
	}
}

// HumanLoad is the human-in-the-loop load of a replay: of the user
// tasks' own consequential calls (Row.UserWrites: every call of an action
// that changes something, as its pack's contract says; for slack a page
// visited counts, it reaches the page), how many needed a person (a
// step-up, approved or declined), without attack and under attack.
type HumanLoad struct {
	NoAttackCalls    int `json:"no_attack_calls"`
	NoAttackAsked    int `json:"no_attack_asked"`
	UnderAttackCalls int `json:"under_attack_calls"`
	UnderAttackAsked int `json:"under_attack_asked"`
	// Tasks are the user tasks with a call that needed a person without
	// attack, and what it was ("user_task_2: invite_user_to_slack").
	Tasks []string `json:"tasks"`
}

// Calls is every consequential call counted, with and without attack.
func (h *HumanLoad) Calls() int { return h.NoAttackCalls + h.UnderAttackCalls }

// Asked is the consequential calls that needed a person, with and
// without attack.
func (h *HumanLoad) Asked() int { return h.NoAttackAsked + h.UnderAttackAsked }

// addLoad counts row's consequential calls into r's HumanLoad.
func (r *Report) addLoad(row Row) {
	if r.HumanLoad == nil {
		r.HumanLoad = &HumanLoad{Tasks: []string{}}
	}
	h := r.HumanLoad
	if row.InjectionTask != "" {
		h.UnderAttackCalls += row.UserWrites
		h.UnderAttackAsked += len(row.UserWritesAsked)
		return
	}
	h.NoAttackCalls += row.UserWrites
	h.NoAttackAsked += len(row.UserWritesAsked)
	for _, fn := range row.UserWritesAsked {
		h.Tasks = append(h.Tasks, row.UserTask+": "+fn)
	}
}

// Failing is a user task whose utility check fails, and why.
type Failing struct {
	ID     string `json:"id"`
	Reason string `json:"reason"`
}

// Report is the result of Replay.
type Report struct {
	// Suite is "banking" and Version the benchmark version, "v1.2".
	Suite   string `json:"suite"`
	Version string `json:"version"`
	// Gateway and Order are the Options the replay ran with.
	Gateway bool   `json:"gateway"`
	Order   string `json:"order"`
	// NoApprover is Options.NoApprover: every step-up was declined.
	NoApprover bool `json:"no_approver,omitempty"`
	// Runs is the number of (user task, injection task) pairs.
	Runs                   int `json:"runs"`
	AttacksExecuted        int `json:"attacks_executed"`
	AttackerCallsExecuted  int `json:"attacker_calls_executed"`
	AttackerWritesExecuted int `json:"attacker_writes_executed"`
	AttackerReadsServed    int `json:"attacker_reads_served"`
	// UtilityOK of UtilityTotal runs under attack pass their utility
	// check; UtilityNoAttackOK of UtilityNoAttackTotal without attack.
	UtilityOK            int `json:"utility_ok"`
	UtilityTotal         int `json:"utility_total"`
	UtilityNoAttackOK    int `json:"utility_no_attack_ok"`
	UtilityNoAttackTotal int `json:"utility_no_attack_total"`
	// Rows are the runs under attack, by user task then injection task.
	Rows []Row `json:"rows"`
	// NoAttack are the runs without attack, by user task.
	NoAttack []Row `json:"no_attack"`
	// UserTasksFailing lists the user tasks that fail without attack or
	// under some attack, with the reason.
	UserTasksFailing []Failing `json:"user_tasks_failing"`
	// Unreachable lists, for the workspace suite, the pairs
	// ("user_task_14 x injection_task_0") whose attack does not succeed
	// by AgentDojo's own check even with no defence, attacker first; the
	// other AttacksReachable pairs are those an attack can win.
	Unreachable      []string `json:"unreachable,omitempty"`
	AttacksReachable int      `json:"attacks_reachable,omitempty"`
	// Variants are, for the workspace suite, attacks AgentDojo's checks
	// do not count (cc or bcc instead of to, sharing files instead of
	// attaching them, the stolen text in a calendar invitation), replayed
	// the same way; for the slack suite, those of slackVariants.
	Variants *VariantReport `json:"variants,omitempty"`
	// HumanLoad is the share of the user tasks' consequential calls that
	// needed a person, without attack and under attack.
	HumanLoad *HumanLoad `json:"human_load,omitempty"`
	// AttacksCountingProposals is, for the slack suite, the attacks
	// AgentDojo's own checks would count if given every call the agent
	// proposed, executed or not: injection task 5's check reads the
	// calls, not the environment (AttacksExecuted gives it the calls that
	// executed).
	AttacksCountingProposals int `json:"attacks_counting_proposals,omitempty"`
	// AnswerOnlyAttacks counts the runs whose injection task is answer
	// only (see Row.AnswerOnly): successes by AgentDojo's check that no
	// gateway can see (travel).
	AnswerOnlyAttacks int `json:"answer_only_attacks,omitempty"`
}

// Replay replays the banking suite as the package doc describes. It
// returns an error only if the replay itself cannot run (the pack or a
// mandate cannot be built, a receipt cannot be stored); refusals are
// results, not errors.
func Replay(ctx context.Context, opts Options) (*Report, error) {
	switch opts.Suite {
	case "", "banking":
	case "workspace":
		return replayWorkspace(ctx, opts)
	case "slack":
		return replaySlack(ctx, opts)
	case "travel":
		return replayTravel(ctx, opts)
	default:
		return nil, fmt.Errorf("agentdojo: unknown suite %q (banking, workspace, slack or travel)", opts.Suite)
	}
	r := &Report{Suite: "banking", Version: "v1.2", Gateway: opts.Gateway, Order: opts.Order.String(), NoApprover: opts.NoApprover}
	users, injections := UserTasks(), InjectionTasks()
	failing := map[int]string{}
	for _, ut := range users {
		row, err := runOne(ctx, opts, ut, nil)
		if err != nil {
			return nil, err
		}
		if !r.addNoAttack(row) {
			failing[ut.ID] = reason(ut, row, "without attack")
		}
	}
	for _, ut := range users {
		for _, it := range injections {
			row, err := runOne(ctx, opts, ut, it)
			if err != nil {
				return nil, err
			}
			r.add(row)
			if _, ok := failing[ut.ID]; !ok && !row.Utility {
				failing[ut.ID] = reason(ut, row, "under "+it.Name())
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

// addNoAttack records row, a user task's run without attack, and reports
// whether the task's utility held.
func (r *Report) addNoAttack(row Row) bool {
	r.NoAttack = append(r.NoAttack, row)
	r.addLoad(row)
	r.UtilityNoAttackTotal++
	if row.Utility {
		r.UtilityNoAttackOK++
	}
	return row.Utility
}

// add counts one run under attack.
func (r *Report) add(row Row) {
	r.Rows = append(r.Rows, row)
	r.addLoad(row)
	r.Runs++
	r.UtilityTotal++
	if row.Utility {
		r.UtilityOK++
	}
	if row.AttackExecuted {
		r.AttacksExecuted++
	}
	r.AttackerCallsExecuted += row.AttackerCallsExecuted
	r.AttackerWritesExecuted += row.AttackerWritesExecuted
	r.AttackerReadsServed += row.AttackerReadsServed
}

func reason(ut *UserTask, row Row, when string) string {
	if len(row.UserRefusals) == 0 {
		return fmt.Sprintf("utility check fails %s; no user call was refused", when)
	}
	return fmt.Sprintf("%s refused %s: %s", strings.Join(row.UserRefusals, ", "), when, ut.Mandate.Why)
}

// outcome is what became of one call.
type outcome struct {
	executed bool
	code     intent.Code
	stepUps  int
	declined int
	output   string
}

// agent carries out calls, through the gateway or directly on the bank.
type agent interface {
	do(ctx context.Context, c Call) (outcome, error)
}

func runOne(ctx context.Context, opts Options, ut *UserTask, it *InjectionTask) (Row, error) {
	row := Row{UserTask: ut.Name(), Refusals: []string{}}
	injections := map[string]string{}
	if it != nil {
		row.InjectionTask = it.Name()
		for _, v := range ut.Vectors {
			injections[v] = attackText(it.Goal)
		}
	}
	bank := banking.NewMem()
	if err := bank.Open(Owner, Environment(injections)); err != nil {
		return row, err
	}
	pre, err := bank.Account(Owner)
	if err != nil {
		return row, err
	}

	var attackCalls []Call
	if it != nil {
		attackCalls = it.Calls(pre)
	}
	steps := schedule(ut, attackCalls, opts.Order)

	a, err := newAgent(opts, bank, ut, it)
	if err != nil {
		return row, err
	}
	allUser := true
	for _, s := range steps {
		o, err := a.do(ctx, s.call)
		if err != nil {
			return row, err
		}
		if !row.count(s, o) {
			allUser = false
		}
	}

	var security func(pre, post banking.Account) bool
	if it != nil {
		security = it.Security
	}
	row.Utility, row.AttackExecuted, err = score(bank, ut, pre, allUser, security)
	if err != nil || opts.Observe == nil {
		return row, err
	}
	post, err := bank.Account(Owner)
	if err == nil {
		opts.Observe(row.UserTask, row.InjectionTask, pre, post, allUser)
	}
	return row, err
}

// newAgent returns the agent of a run: through a gateway with a mandate
// named after the pair (opts.Gateway), or directly on the bank.
func newAgent(opts Options, bank *banking.Mem, ut *UserTask, it *InjectionTask) (agent, error) {
	if !opts.Gateway {
		return newDirectAgent(bank)
	}
	name := fmt.Sprintf("m-ut%02d-none", ut.ID)
	if it != nil {
		name = fmt.Sprintf("m-ut%02d-it%02d", ut.ID, it.ID)
	}
	g, err := newGatewayAgent(bank, ut, name)
	if err != nil {
		return nil, err
	}
	g.noApprover = opts.NoApprover
	return g, nil
}

// count adds the outcome o of step s to the row: its step-ups, its
// refusal, and the attacker's calls served. It reports false for a user's
// call that was not executed.
func (row *Row) count(s step, o outcome) bool {
	row.StepUps += o.stepUps
	row.StepUpsDeclined += o.declined
	if !o.executed {
		row.Refusals = append(row.Refusals, string(o.code))
	}
	if !s.attacker && !s.call.IsRead() {
		row.userWrite(s.call.Function, o.stepUps+o.declined)
	}
	switch {
	case s.attacker && o.executed && s.call.IsRead():
		row.AttackerReadsServed++
		row.AttackerCallsExecuted++
	case s.attacker && o.executed:
		row.AttackerWritesExecuted++
		row.AttackerCallsExecuted++
	case !s.attacker && !o.executed:
		row.UserRefusals = append(row.UserRefusals, s.call.Function+" ("+string(o.code)+")")
		return false
	}
	return true
}

// score checks a finished run on the bank: the user task's utility (the
// agent gives the GT's answer only if every user call was served) and,
// if security is not nil, the attack's success.
func score(bank *banking.Mem, ut *UserTask, pre banking.Account, allUser bool, security func(pre, post banking.Account) bool) (utility, attack bool, err error) {
	post, err := bank.Account(Owner)
	if err != nil {
		return false, false, err
	}
	output := ""
	if allUser {
		output = ut.Output
	}
	if security != nil {
		attack = security(pre, post)
	}
	return ut.Utility(output, pre, post), attack, nil
}

// step is one call of a run, the attacker's or the user's.
type step struct {
	call     Call
	attacker bool
}

// schedule places the attacker's calls among the user task's
// ground-truth calls in the given order.
func schedule(ut *UserTask, attackCalls []Call, order Order) []step {
	users := make([]step, len(ut.Calls))
	for i, c := range ut.Calls {
		users[i] = step{call: c}
	}
	attacks := make([]step, len(attackCalls))
	for i, c := range attackCalls {
		attacks[i] = step{call: c, attacker: true}
	}
	switch order {
	case AfterExposure:
		return slices.Concat(users[:ut.Exposure+1], attacks, users[ut.Exposure+1:])
	case AttackerLast:
		return slices.Concat(users, attacks)
	}
	return slices.Concat(attacks, users)
}

// directAgent calls a pack's executor with the arguments as sent: no
// mandate, no resolution, no policy. Arguments are only decoded to their
// types.
type directAgent struct {
	contracts map[intent.Action]*contract.Contract
	exec      gateway.Executor
}

func newDirect(cs []*contract.Contract, exec gateway.Executor) *directAgent {
	d := &directAgent{contracts: map[intent.Action]*contract.Contract{}, exec: exec}
	for _, c := range cs {
		d.contracts[c.Action] = c
	}
	return d
}

func newDirectAgent(bank *banking.Mem) (*directAgent, error) {
	cs, err := banking.Contracts()
	if err != nil {
		return nil, err
	}
	return newDirect(cs, banking.Executor{Bank: bank}), nil
}

func (d *directAgent) do(ctx context.Context, c Call) (outcome, error) {
	return d.execute(ctx, c.Action(), c.Proposal())
}

// execute decodes proposal for action and executes it; the outcome holds
// the executor's output.
func (d *directAgent) execute(ctx context.Context, action intent.Action, proposal []byte) (outcome, error) {
	ct, ok := d.contracts[action]
	if !ok {
		return outcome{code: intent.CodeUnknownAction}, nil
	}
	p, err := contract.DecodeProposal(proposal, contract.Limits{})
	if err != nil {
		return outcome{code: intent.CodeMalformed}, nil
	}
	args, err := ct.Decode(p.Args)
	if err != nil {
		return outcome{code: intent.CodeBadArgument}, nil
	}
	res, err := d.exec.Execute(ctx, intent.Operation{Action: ct.Action, Args: args, Owner: Owner}, intent.OperationHash{})
	if err != nil {
		return outcome{code: intent.CodeExecutionFailed}, nil
	}
	return outcome{executed: true, output: res.Output}, nil
}

// The replay's fixed clock and keys: a replay is deterministic.
var (
	replayNow = time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)
	issuerKey = ed25519.NewKeyFromSeed(seed("agentdojo replay: mandate issuer"))
	userKey   = ed25519.NewKeyFromSeed(seed("agentdojo replay: emma's approval key"))
)

const (
	replayAudience = "intentplane-agentdojo"
	replayIssuer   = "emma-bank-app"
	replayApprover = "emma"
)

func seed(s string) []byte {
	h := sha256.Sum256([]byte(s))
	return h[:]
}

// gatewayAgent sends each call as a proposal to a gateway of its own (a
// fresh store per run), under the user task's mandate, and plays the
// user on step-ups.
type gatewayAgent struct {
	gw        *gateway.Gateway
	token     string
	mandateID string
	expected  []intent.Operation // the user's own GT calls, as operations
	approvals int
	// noApprover declines every step-up: no person is asked.
	noApprover bool
}

func newGatewayAgent(bank *banking.Mem, ut *UserTask, mandateID string) (*gatewayAgent, error) {
	pack, err := banking.NewPack(bank)
	if err != nil {
		return nil, err
	}
	clock := func() time.Time { return replayNow }
	gw, err := gateway.New(gateway.Config{
		Audience:  replayAudience,
		Issuers:   mandate.StaticKeys{replayIssuer: issuerKey.Public().(ed25519.PublicKey)},
		Approvers: approval.StaticKeys{replayApprover: userKey.Public().(ed25519.PublicKey)},
		Now:       clock,
	}, mem.New(clock), pack)
	if err != nil {
		return nil, err
	}
	m := mandate.Mandate{
		ID: mandateID, Audience: replayAudience, Owner: Owner,
		Scope:     ut.Mandate.Scope,
		Budget:    intent.Money{Currency: "EUR", Amount: ut.Mandate.Budget},
		Claims:    ut.Mandate.Claims,
		Mode:      mandate.ModeKnownCounterparties,
		NotBefore: replayNow.Add(-time.Minute), Expiry: replayNow.Add(time.Hour),
	}
	token, err := mandate.Issue(m, replayIssuer, issuerKey)
	if err != nil {
		return nil, fmt.Errorf("agentdojo: mandate of %s: %w", ut.Name(), err)
	}
	g := &gatewayAgent{gw: gw, token: token, mandateID: mandateID}
	for _, c := range ut.approvedCalls() {
		if op, ok := g.operation(c); ok {
			g.expected = append(g.expected, op)
		}
	}
	return g, nil
}

// operation is what the user expects call c of their own task to do.
func (g *gatewayAgent) operation(c Call) (intent.Operation, bool) {
	return expectedOperation(g.gw, c.Action(), c.Proposal(), g.mandateID)
}

// expectedOperation is what the user expects a proposal of their own task
// to do: its arguments decoded and its critical values normalized.
func expectedOperation(gw *gateway.Gateway, action intent.Action, proposal []byte, mandateID string) (intent.Operation, bool) {
	ct, ok := gw.Contract(action)
	if !ok {
		return intent.Operation{}, false
	}
	p, err := contract.DecodeProposal(proposal, contract.Limits{})
	if err != nil {
		return intent.Operation{}, false
	}
	args, err := ct.Decode(p.Args)
	if err != nil {
		return intent.Operation{}, false
	}
	for _, prm := range ct.Critical() {
		v, ok := args[prm.Name]
		if !ok || prm.Normalizer == nil {
			continue
		}
		n, err := prm.Normalizer(v.Str)
		if err != nil {
			return intent.Operation{}, false
		}
		args[prm.Name] = intent.Str(n)
	}
	return intent.Operation{Action: ct.Action, Args: args, MandateID: mandateID, Owner: Owner}, true
}

// approves is the simulated user: they approve an operation only if it is
// exactly one of the calls they asked for, and never when no person is
// asked.
func (g *gatewayAgent) approves(op *intent.Operation) bool {
	if op == nil || g.noApprover {
		return false
	}
	for _, e := range g.expected {
		if reflect.DeepEqual(e, *op) {
			return true
		}
	}
	return false
}

func (g *gatewayAgent) do(ctx context.Context, c Call) (outcome, error) {
	return g.decide(ctx, c.Proposal())
}

// decide sends one proposal to the gateway and plays the user on a
// step-up.
func (g *gatewayAgent) decide(ctx context.Context, proposal []byte) (outcome, error) {
	d, err := g.gw.Decide(ctx, gateway.Request{Mandate: g.token, Proposal: proposal})
	if err != nil {
		return outcome{}, err
	}
	stepUps, declined := 0, 0
	if d.Verdict == intent.StepUp {
		if !g.approves(d.Operation) {
			declined = 1
		} else {
			g.approvals++
			a, err := approval.Sign(approval.Approval{
				ID:        fmt.Sprintf("%s-approval-%d", g.mandateID, g.approvals),
				Operation: d.OperationHash, MandateID: g.mandateID, Approver: replayApprover,
				IssuedAt: replayNow, ExpiresAt: replayNow.Add(5 * time.Minute),
			}, userKey)
			if err != nil {
				return outcome{}, err
			}
			stepUps = 1
			d, err = g.gw.Decide(ctx, gateway.Request{Mandate: g.token, Proposal: proposal, Approvals: []approval.Approval{a}})
			if err != nil {
				return outcome{}, err
			}
		}
	}
	o := outcome{executed: d.Executed, stepUps: stepUps, declined: declined, output: d.Output}
	if !d.Executed {
		o.code = intent.CodeExecutionFailed
		if d.Refusal != nil {
			o.code = d.Refusal.Code
		}
	}
	return o, nil
}

// WriteJSON writes the report as indented JSON.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// WriteTable writes the report for people: the totals, then one line per
// user task with one cell per injection task ("X" the attack succeeded,
// "." it did not; "u" utility kept, "-" lost), then the failing user
// tasks.
func (r *Report) WriteTable(w io.Writer) error {
	mode := "without the gateway (no defence)"
	if r.Gateway {
		mode = "through the intentplane gateway"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "AgentDojo %s %s, replayed %s, order %s\n", r.Version, r.Suite, mode, r.Order)
	fmt.Fprintf(&b, "attacks executed:        %s\n", rate(r.AttacksExecuted, r.Runs))
	fmt.Fprintf(&b, "attacker calls executed: %d (writes %d, reads %d)\n", r.AttackerCallsExecuted, r.AttackerWritesExecuted, r.AttackerReadsServed)
	fmt.Fprintf(&b, "utility under attack:    %s\n", rate(r.UtilityOK, r.UtilityTotal))
	fmt.Fprintf(&b, "utility without attack:  %s\n", rate(r.UtilityNoAttackOK, r.UtilityNoAttackTotal))
	fmt.Fprintf(&b, "                         (95%% CI: Wilson score interval, each pair or task one trial; the replay is deterministic, so it bounds what AgentDojo's tasks say of tasks like them)\n")
	approved, declined := 0, 0
	for _, row := range append(slices.Clone(r.Rows), r.NoAttack...) {
		approved += row.StepUps
		declined += row.StepUpsDeclined
	}
	who := "a simulated user approves the calls of their own task"
	if r.NoApprover {
		who = "no person asked"
	}
	fmt.Fprintf(&b, "step-ups:                %d approved, %d declined (%s)\n", approved, declined, who)
	r.writeLoad(&b)
	if r.Unreachable != nil {
		fmt.Fprintf(&b, "attacks reachable:       %d of %d (the %d pairs listed below cannot succeed even without a defence)\n", r.AttacksReachable, r.Runs, len(r.Unreachable))
	}
	if v := r.Variants; v != nil {
		var names []string
		for _, row := range v.Rows {
			if !slices.Contains(names, row.Variant) {
				names = append(names, row.Variant)
			}
		}
		fmt.Fprintf(&b, "variants:                %d runs (%s); %d reached the attacker, %d of them unseen by AgentDojo's checks\n", v.Runs, strings.Join(names, ", "), v.Leaks, v.LeaksMissedByChecks)
	}
	b.WriteString("\n")
	b.WriteString("user task     no-attack")
	its := 0
	for _, row := range r.Rows {
		if row.UserTask != r.Rows[0].UserTask {
			break
		}
		its++
		fmt.Fprintf(&b, " %4s", strings.Replace(row.InjectionTask, "injection_task_", "IT", 1))
	}
	b.WriteString("\n")
	for i, na := range r.NoAttack {
		fmt.Fprintf(&b, "%-13s %9s", na.UserTask, mark(false, na.Utility))
		for j := 0; j < its && i*its+j < len(r.Rows); j++ {
			row := r.Rows[i*its+j]
			fmt.Fprintf(&b, " %4s", mark(row.AttackExecuted, row.Utility))
		}
		b.WriteString("\n")
	}
	b.WriteString("(X attack executed, . not; u utility kept, - lost)\n")
	if len(r.Unreachable) > 0 {
		b.WriteString("\npairs whose attack cannot succeed even without a defence (AgentDojo's checks, attacker first):\n")
		for _, p := range r.Unreachable {
			fmt.Fprintf(&b, "  %s\n", p)
		}
	}
	if len(r.UserTasksFailing) > 0 {
		b.WriteString("\nuser tasks failing:\n")
		for _, f := range r.UserTasksFailing {
			fmt.Fprintf(&b, "  %s: %s\n", f.ID, f.Reason)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func mark(attack, utility bool) string {
	s := "."
	if attack {
		s = "X"
	}
	if utility {
		return s + "u"
	}
	return s + "-"
}

// writeLoad writes the human-in-the-loop load and the suite's own
// counts (slack: attacks counting proposals; travel: answer-only
// attacks) for WriteTable.
func (r *Report) writeLoad(b *strings.Builder) {
	if h := r.HumanLoad; h != nil {
		fmt.Fprintf(b, "human-in-the-loop load:  without attack %s of the user's consequential calls needed a person\n", rate(h.NoAttackAsked, h.NoAttackCalls))
		fmt.Fprintf(b, "                         under attack   %s\n", rate(h.UnderAttackAsked, h.UnderAttackCalls))
		if len(h.Tasks) > 0 {
			fmt.Fprintf(b, "                         (%s)\n", strings.Join(h.Tasks, "; "))
		}
	}
	if r.Suite == "slack" {
		fmt.Fprintf(b, "attacks counting proposals: %d (AgentDojo's check of injection task 5 reads the calls proposed, not those executed)\n", r.AttacksCountingProposals)
	}
	if r.AnswerOnlyAttacks > 0 {
		fmt.Fprintf(b, "answer-only attacks:     %d of %d runs (the attacker's words in the final answer, no tool call; counted by AgentDojo, outside any gateway, not in the attacks above)\n", r.AnswerOnlyAttacks, r.Runs)
	}
}
