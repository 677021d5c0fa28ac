package agentdojo_test

import (
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/intentplane/intentplane/agentdojo"
	"github.com/intentplane/intentplane/banking"
	"github.com/intentplane/intentplane/workspace"
)

// verdict is one line of testdata/SUITE-verdicts.jsonl: AgentDojo's own
// utility and security checks (its Python code, v1.2, run in a scratch
// directory outside the repository on the replay's final environments)
// for one run of one mode. InjectionTask is empty, and Security absent,
// for a run without attack.
type verdict struct {
	Mode          string `json:"mode"`
	UserTask      string `json:"user_task"`
	InjectionTask string `json:"injection_task"`
	Utility       bool   `json:"utility"`
	Security      bool   `json:"security"`
}

// goldenModes are the four modes the golden verdicts hold, by their names
// there: through the gateway or with no defence, attacker first or last.
var goldenModes = map[string]agentdojo.Options{
	"gateway_first": {Gateway: true}, "gateway_last": {Gateway: true, Order: agentdojo.AttackerLast},
	"none_first": {}, "none_last": {Order: agentdojo.AttackerLast},
}

// readVerdicts reads testdata/SUITE-verdicts.jsonl, one verdict a line,
// keyed by "mode user_task injection_task".
func readVerdicts(suite string) (map[string]verdict, error) {
	b, err := os.ReadFile("testdata/" + suite + "-verdicts.jsonl")
	if err != nil {
		return nil, err
	}
	want := map[string]verdict{}
	for i, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var v verdict
		if err := json.Unmarshal([]byte(line), &v); err != nil {
			return nil, fmt.Errorf("%s verdicts, line %d: %w", suite, i+1, err)
		}
		want[v.Mode+" "+v.UserTask+" "+v.InjectionTask] = v
	}
	return want, nil
}

// checkGoldenVerdicts replays suite in the four golden modes and requires
// every run to agree with AgentDojo's verdict: utility with its utility
// check, and an attack executed (or answer only, travel's injection task
// 6) with its security check; every golden verdict must be met once. A
// model that drifts from the suite fails here.
func checkGoldenVerdicts(t *testing.T, suite string) {
	t.Helper()
	want, err := readVerdicts(suite)
	if err != nil {
		t.Fatal(err)
	}
	agreed := 0
	for mode, opts := range goldenModes {
		opts.Suite = suite
		r := replay(t, opts)
		for _, row := range append(r.NoAttack, r.Rows...) {
			v, ok := want[mode+" "+row.UserTask+" "+row.InjectionTask]
			if !ok {
				t.Errorf("%s %s %s: no golden verdict", mode, row.UserTask, row.InjectionTask)
				continue
			}
			attack := row.AttackExecuted || row.AnswerOnly
			if row.Utility != v.Utility || row.InjectionTask != "" && attack != v.Security {
				t.Errorf("%s %s %s: utility %t, attack %t; AgentDojo's checks %t, %t", mode, row.UserTask, row.InjectionTask, row.Utility, attack, v.Utility, v.Security)
				continue
			}
			agreed++
		}
	}
	if agreed != len(want) {
		t.Errorf("%s: %d of %d runs agree with AgentDojo's verdicts", suite, agreed, len(want))
	}
}

// TestBankingVerdictsMatchAgentDojo holds the banking replay to AgentDojo's
// own verdicts: 640 runs (160 a mode), 1,216 verdicts, all computed by
// AgentDojo's code (the last scoring on 8 December 2026, after user tasks
// 0, 11 and 13 began to execute through the gateway with a person's
// confirmation).
func TestBankingVerdictsMatchAgentDojo(t *testing.T) {
	t.Parallel()
	checkGoldenVerdicts(t, "banking")
}

// TestWorkspaceVerdictsMatchAgentDojo holds the workspace replay to
// AgentDojo's own verdicts: 2,400 runs (600 a mode), 4,640 verdicts.
func TestWorkspaceVerdictsMatchAgentDojo(t *testing.T) {
	t.Parallel()
	checkGoldenVerdicts(t, "workspace")
}

// TestObserveSeesEveryRun: Options.Observe sees each run of the mode
// replayed once, with the environments of its suite, and not the extra
// runs of another mode (workspace's Extras).
func TestObserveSeesEveryRun(t *testing.T) {
	t.Parallel()
	for _, opts := range []agentdojo.Options{{Suite: "banking"}, {Suite: "workspace", Gateway: true, Extras: true}} {
		seen, changed := map[string]int{}, 0
		opts.Observe = func(ut, it string, pre, post any, _ bool) {
			seen[ut+" "+it]++
			switch p := pre.(type) {
			case banking.Account:
				if !reflect.DeepEqual(p, post.(banking.Account)) {
					changed++
				}
			case workspace.Workspace:
				if !reflect.DeepEqual(p, post.(workspace.Workspace)) {
					changed++
				}
			default:
				t.Errorf("%s: environment %T", opts.Suite, pre)
			}
		}
		r := replay(t, opts)
		runs := append(r.NoAttack, r.Rows...)
		for _, row := range runs {
			if n := seen[row.UserTask+" "+row.InjectionTask]; n != 1 {
				t.Errorf("%s %s %s: observed %d times; want once", opts.Suite, row.UserTask, row.InjectionTask, n)
			}
		}
		if len(seen) != len(runs) || changed == 0 {
			t.Errorf("%s: %d pairs observed, %d changed; want %d, some", opts.Suite, len(seen), changed, len(runs))
		}
	}
}
