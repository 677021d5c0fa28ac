package main

import (
	"github.com/intentplane/intentplane/internal/demo/apdemo"
	"github.com/intentplane/intentplane/internal/demo/emma"
)

type demoCmd struct {
	Scenario string `arg:"" optional:"" default:"emma" enum:"emma,ap" help:"emma (default): a bill with hidden text against the banking pack, then a healthcare injection; ap: the CFO's 'we changed banks' email against the accounts-payable pack."`
	Receipts string `help:"Export the receipts as JSONL to this file (emma scenario)."`
}

func (c *demoCmd) Run(e *env) error {
	if c.Scenario == "ap" {
		return apdemo.Run(e.ctx, e.stdout, apdemo.Config{})
	}
	return emma.Run(e.ctx, e.stdout, emma.Options{Receipts: c.Receipts})
}
