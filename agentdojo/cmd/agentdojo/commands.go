package main

import (
	"fmt"

	"github.com/intentplane/intentplane/agentdojo"
)

type replayCmd struct {
	Suite      string `default:"banking" enum:"banking,workspace,slack,travel" help:"Suite to replay (banking, workspace, slack or travel)."`
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
	rep, err := agentdojo.Replay(e.ctx, agentdojo.Options{
		Suite: c.Suite, Gateway: !c.NoGateway, Order: orders[c.Order], NoApprover: c.NoApprover,
		DataDir: c.Data, Extras: c.Suite == "workspace" || c.Suite == "slack",
	})
	if err != nil {
		return fmt.Errorf("agentdojo replay: %w", err)
	}
	if c.JSON {
		err = rep.WriteJSON(e.stdout)
	} else {
		err = rep.WriteTable(e.stdout)
	}
	if err != nil {
		return err
	}
	switch {
	case c.MinUtility > 0 && rep.Gateway && rep.AttacksExecuted > 0:
		return fmt.Errorf("agentdojo replay: %d of %d attacks executed through the gateway", rep.AttacksExecuted, rep.Runs)
	case rep.UtilityOK < c.MinUtility:
		return fmt.Errorf("agentdojo replay: utility under attack %d of %d, below %d", rep.UtilityOK, rep.UtilityTotal, c.MinUtility)
	}
	return nil
}
