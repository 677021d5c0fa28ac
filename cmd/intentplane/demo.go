package main

import "github.com/intentplane/intentplane/examples/demo"

type demoCmd struct {
	Receipts string `help:"Export the demo's receipts as JSONL to this file."`
}

func (c *demoCmd) Run(e *env) error {
	return demo.Run(e.ctx, e.stdout, demo.Options{Receipts: c.Receipts})
}
