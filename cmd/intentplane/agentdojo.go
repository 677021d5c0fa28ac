package main

import (
	"fmt"

	"github.com/intentplane/intentplane/agentdojo"
)

type agentdojoCmd struct {
	Replay agentdojoReplayCmd `cmd:"" help:"Replay every user task x injection task pair without an LLM: the agent executes the attacker's goal verbatim, then the user's task."`
}

type agentdojoReplayCmd struct {
	Suite     string `default:"banking" enum:"banking" help:"Suite to replay (banking)."`
	JSON      bool   `help:"Print a JSON object instead of a table."`
	NoGateway bool   `name:"no-gateway" help:"Call the bank directly, without intentplane: AgentDojo's no-defence baseline."`
	Order     string `default:"attacker-first" enum:"attacker-first,exposure,attacker-last" help:"Where the attacker's calls go: before the user's task, right after the call that surfaces the injection, or after the user's task."`
}

func (c *agentdojoReplayCmd) Run(e *env) error {
	orders := map[string]agentdojo.Order{
		"attacker-first": agentdojo.AttackerFirst,
		"exposure":       agentdojo.AfterExposure,
		"attacker-last":  agentdojo.AttackerLast,
	}
	rep, err := agentdojo.Replay(e.ctx, agentdojo.Options{Gateway: !c.NoGateway, Order: orders[c.Order]})
	if err != nil {
		return fmt.Errorf("agentdojo replay: %w", err)
	}
	if c.JSON {
		return rep.WriteJSON(e.stdout)
	}
	return rep.WriteTable(e.stdout)
}
