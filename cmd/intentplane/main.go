// Command intentplane is the gateway's command line: the demo on embedded
// defaults, mandate keys and mandates, receipt verification, policy tests
// and mutation checks, and the AgentDojo replay. It is a composition root:
// it wires core, packs and stores and holds no decision logic of its own.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"

	"github.com/alecthomas/kong"

	"github.com/intentplane/intentplane/internal/version"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if err != nil {
		var ee *exitError
		if errors.As(err, &ee) {
			if ee.msg != "" {
				fmt.Fprintln(os.Stderr, "intentplane:", ee.msg)
			}
			os.Exit(ee.code)
		}
		fmt.Fprintln(os.Stderr, "intentplane:", err)
		os.Exit(1)
	}
}

// exitError carries an exit code other than 1 (kong's usage errors: 2).
type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string { return e.msg }

// env is what every command receives.
type env struct {
	ctx    context.Context
	stdout io.Writer
	stderr io.Writer
}

type cli struct {
	Version      kong.VersionFlag `help:"Print the version (module, commit, Go) and exit."`
	Demo         demoCmd          `cmd:"" help:"Play Emma's scenario (a bill with hidden text redirecting her payments) and a healthcare injection against the gateway, on embedded defaults."`
	Mandate      mandateCmd       `cmd:"" help:"Create issuer keys and signed mandates."`
	Receipts     receiptsCmd      `cmd:"" help:"Verify receipt chains offline."`
	Reconcile    reconcileCmd     `cmd:"" help:"Settle the budget reservations a crash left open in a store, from the executors' idempotency records, with a receipt each (the gateway does the same at start)."`
	HashPasscode hashPasscodeCmd  `cmd:"" name:"hash-passcode" help:"Print the scrypt hash of an approver's passcode (read without echo, or from stdin) for the approval page's configuration."`
	Policy       policyCmd        `cmd:"" help:"Test a pack's Cedar policy and check that its tests kill every mutant."`
	Agentdojo    agentdojoCmd     `cmd:"" name:"agentdojo" help:"Replay the AgentDojo banking and workspace suites, worst case, through the gateway."`
	Odoo         odooCmd          `cmd:"" help:"Set up an Odoo 17, 18 or 19 database for intentplane and play the accounts-payable demo on it."`
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var c cli
	exit := -1
	parser, err := kong.New(&c,
		kong.Name("intentplane"),
		kong.Description("intentplane: the agent proposes, a deterministic gateway decides."),
		kong.Writers(stdout, stderr),
		kong.Exit(func(code int) { exit = code }),
		kong.UsageOnError(),
		kong.Vars{"version": version.Read().String("intentplane")},
	)
	if err != nil {
		return err
	}
	kctx, err := parser.Parse(args)
	if exit >= 0 { // --help
		if exit == 0 {
			return nil
		}
		return &exitError{code: exit}
	}
	if err != nil {
		return &exitError{code: 2, msg: err.Error()}
	}
	return kctx.Run(&env{ctx: ctx, stdout: stdout, stderr: stderr})
}
