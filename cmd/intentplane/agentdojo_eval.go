package main

import (
	"fmt"
	"io"

	"github.com/intentplane/intentplane/agentdojo"
)

// report is what each agentdojo evaluation command prints.
type report interface {
	WriteJSON(w io.Writer) error
	WriteTable(w io.Writer) error
}

func printReport(e *env, r report, asJSON bool) error {
	if asJSON {
		return r.WriteJSON(e.stdout)
	}
	return r.WriteTable(e.stdout)
}

type agentdojoAdaptiveCmd struct {
	Suite string  `default:"banking" enum:"banking" help:"Suite to attack (banking)."`
	JSON  bool    `help:"Print a JSON object instead of a table."`
	Seed  uint64  `default:"1" help:"Seed of the approver's draws (used when --p or --q is strictly between 0 and 1)."`
	P     float64 `default:"0" help:"Probability that the approver approves a wrong step-up (0: the ideal approver)."`
	Q     float64 `default:"0" help:"Probability that the approver rejects a right step-up."`
}

func (c *agentdojoAdaptiveCmd) Run(e *env) error {
	if c.P < 0 || c.P > 1 || c.Q < 0 || c.Q > 1 {
		return fmt.Errorf("agentdojo adaptive: --p and --q are probabilities, between 0 and 1")
	}
	r, err := agentdojo.Adaptive(e.ctx, agentdojo.AdaptiveOptions{Suite: c.Suite, Seed: c.Seed, P: c.P, Q: c.Q})
	if err != nil {
		return fmt.Errorf("agentdojo adaptive: %w", err)
	}
	return printReport(e, r, c.JSON)
}
