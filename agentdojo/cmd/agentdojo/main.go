// Command agentdojo evaluates intentplane on the AgentDojo v1.2 suites:
// it replays every user task x injection task pair worst case through the
// gateway, runs gateway-aware (adaptive) attacks, sweeps a fallible
// approver and a thinned registry, and drives a real model through the
// gateway. It is the evaluation harness, a module of its own so that it
// stays out of the product's import graph (see ../../doc.go).
package main

import (
	"context"
	"io"
	"os"
	"os/signal"

	"github.com/alecthomas/kong"

	"github.com/intentplane/intentplane/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	cli.Exit("agentdojo", err)
}

// env is what every command receives.
type env struct {
	ctx    context.Context
	stdout io.Writer
	stderr io.Writer
}

type commandLine struct {
	Version kong.VersionFlag `help:"Print the version (module, commit, Go) and exit."`

	Replay   replayCmd   `cmd:"" help:"Replay every user task x injection task pair without an LLM: the agent executes the attacker's goal verbatim, then the user's task."`
	Adaptive adaptiveCmd `cmd:"" help:"Gateway-aware attacks (disguised values, making the attacker known, abuse of legitimate values) replayed worst case against each user task, in both mandate modes."`
	Sweep    sweepCmd    `cmd:"" help:"A fallible approver (approves a wrong step-up with probability p, rejects a right one with q) swept over p, with the ablations resolution alone, approval alone, both, neither; its --json report is what agentdojo/plot draws."`
	Registry registryCmd `cmd:"" help:"Registries with k% of the legitimate counterparties removed (seeded): step-ups, refusals, utility and attacks against k."`
	Run      runCmd      `cmd:"" help:"A real agent: a model behind an OpenAI-compatible chat-completions endpoint calls the suite's tools through the gateway, under AgentDojo-style injections (or --scripted, a local stand-in)."`
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var c commandLine
	kctx, err := cli.Parse(&c, "agentdojo", "agentdojo: the AgentDojo v1.2 banking, workspace and slack suites, worst case, through intentplane's gateway.", args, stdout, stderr)
	if kctx == nil {
		return err
	}
	return kctx.Run(&env{ctx: ctx, stdout: stdout, stderr: stderr})
}
