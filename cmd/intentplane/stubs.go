package main

import "errors"

type agentdojoCmd struct{}

func (c *agentdojoCmd) Run(e *env) error { return errors.New("agentdojo: not wired yet") }
