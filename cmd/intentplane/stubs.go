package main

import "errors"

type demoCmd struct{}

func (c *demoCmd) Run(e *env) error { return errors.New("demo: not wired yet") }

type agentdojoCmd struct{}

func (c *agentdojoCmd) Run(e *env) error { return errors.New("agentdojo: not wired yet") }
