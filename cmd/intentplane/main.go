// Command intentplane is the gateway's command line: the demo on embedded
// defaults, mandate keys and mandates, receipt verification, policy tests
// and mutation checks, and the Odoo set-up. It is a composition root:
// it wires core, packs and stores and holds no decision logic of its own.
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
	cli.Exit("intentplane", err)
}

// env is what every command receives.
type env struct {
	ctx    context.Context
	stdout io.Writer
	stderr io.Writer
}

type commandLine struct {
	Version      kong.VersionFlag `help:"Print the version (module, commit, Go) and exit."`
	Demo         demoCmd          `cmd:"" help:"Play Emma's scenario (a bill with hidden text redirecting her payments) and a healthcare injection against the gateway, on embedded defaults."`
	Mandate      mandateCmd       `cmd:"" help:"Create issuer keys and signed mandates."`
	Receipts     receiptsCmd      `cmd:"" help:"Verify receipt chains offline."`
	Reconcile    reconcileCmd     `cmd:"" help:"Settle the budget reservations a crash left open in a store, from the executors' idempotency records, with a receipt each (the gateway does the same at start)."`
	Approvals    approvalsCmd     `cmd:"" help:"Administer the approval page's store: list and revoke approvers' passkeys."`
	HashPasscode hashPasscodeCmd  `cmd:"" name:"hash-passcode" help:"Print the scrypt hash of an approver's passcode (read without echo, or from stdin) for the approval page's configuration."`
	Policy       policyCmd        `cmd:"" help:"Test a pack's Cedar policy and check that its tests kill every mutant."`
	Odoo         odooCmd          `cmd:"" help:"Set up an Odoo 17, 18 or 19 database for intentplane and play the accounts-payable demo on it."`
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var c commandLine
	kctx, err := cli.Parse(&c, "intentplane", "intentplane: the agent proposes, a deterministic gateway decides.", args, stdout, stderr)
	if kctx == nil {
		return err
	}
	return kctx.Run(&env{ctx: ctx, stdout: stdout, stderr: stderr})
}
