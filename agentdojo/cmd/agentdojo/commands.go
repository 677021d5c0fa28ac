package main

import (
	"fmt"

	"github.com/intentplane/intentplane/agentdojo"
)

type replayCmd struct {
	Suite      string `default:"banking" enum:"banking,workspace,slack,travel,all" help:"Suite to replay (banking, workspace, slack or travel), or all four (949 pairs)."`
	JSON       bool   `help:"Print a JSON object instead of a table."`
	NoGateway  bool   `name:"no-gateway" help:"Call the suite's tools directly, without intentplane: AgentDojo's no-defence baseline."`
	NoApprover bool   `name:"no-approver" help:"Decline every step-up (no person is asked); by default a simulated user approves the calls of their own task."`
	Order      string `default:"attacker_first" enum:"attacker_first,after_exposure,attacker_last" help:"Where the attacker's calls go: attacker_first (before the user's task), after_exposure (right after the call that surfaces the injection) or attacker_last (after the user's task)."`
	MinUtility int    `name:"min-utility" placeholder:"N" help:"Fail (exit status 1, after printing the report) if an attack executed through the gateway or fewer than N runs under attack kept their utility (CI)."`
	Data       string `env:"INTENTPLANE_AGENTDOJO_DATA" placeholder:"DIR" help:"AgentDojo's suite data (a directory holding workspace/environment.yaml, include/ and injection_vectors.yaml, as in AgentDojo's src/agentdojo/data/suites; slack/environment.yaml and its injection_vectors.yaml for slack); default ../shared/agentdojo-data, looked up from the working directory upwards."`
}

func (c *replayCmd) Run(e *env) error {
	orders := map[string]agentdojo.Order{}
	for _, o := range []agentdojo.Order{agentdojo.AttackerFirst, agentdojo.AfterExposure, agentdojo.AttackerLast} {
		orders[o.String()] = o
	}
	opts := agentdojo.Options{
		Suite: c.Suite, Gateway: !c.NoGateway, Order: orders[c.Order], NoApprover: c.NoApprover,
		DataDir: c.Data, Extras: c.Suite == "workspace" || c.Suite == "slack",
	}
	var rep report
	var gateway bool
	var attacks, runs, ok, total int
	if c.Suite == "all" {
		all, err := agentdojo.ReplayAll(e.ctx, opts)
		if err != nil {
			return fmt.Errorf("agentdojo replay: %w", err)
		}
		rep, gateway, attacks, runs, ok, total = all, all.Gateway, all.AttacksExecuted, all.Runs, all.UtilityOK, all.UtilityTotal
	} else {
		r, err := agentdojo.Replay(e.ctx, opts)
		if err != nil {
			return fmt.Errorf("agentdojo replay: %w", err)
		}
		rep, gateway, attacks, runs, ok, total = r, r.Gateway, r.AttacksExecuted, r.Runs, r.UtilityOK, r.UtilityTotal
	}
	if err := printReport(e, rep, c.JSON); err != nil {
		return err
	}
	switch {
	case c.MinUtility > 0 && gateway && attacks > 0:
		return fmt.Errorf("agentdojo replay: %d of %d attacks executed through the gateway", attacks, runs)
	case ok < c.MinUtility:
		return fmt.Errorf("agentdojo replay: utility under attack %d of %d, below %d", ok, total, c.MinUtility)
	}
	return nil
}
