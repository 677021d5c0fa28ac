package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/intentplane/intentplane/ap"
	"github.com/intentplane/intentplane/core/gateway"
	"github.com/intentplane/intentplane/core/mandate"
	"github.com/intentplane/intentplane/internal/cli"
	"github.com/intentplane/intentplane/odoo"
)

type reconcileCmd struct {
	Store     string            `required:"" help:"The store: postgres://... (PostgreSQL) or a file path, optionally embedded:PATH (the embedded store; the gateway using it must be stopped)."`
	OlderThan *time.Duration    `name:"older-than" help:"Settle only reservations made at least this long ago, so that decisions still in flight on running replicas are left alone. Default: 0 for the embedded store (no gateway can hold the file), 10m for PostgreSQL (it must exceed the longest execution: an operation still executing on a live replica must not be settled)."`
	OdooURL   string            `name:"odoo-url" help:"Odoo's base URL: the accounts-payable pack then reads Odoo's payments (as the reader, ODOO_READER_PASSWORD) to settle payments whose outcome was lost."`
	OdooDB    string            `name:"odoo-db" help:"The Odoo database."`
	Companies map[string]string `name:"odoo-company" help:"Mandate owner and the res.company it maps to, as owner=NAME (repeatable), e.g. northwind=Northwind."`
	Reader    string            `name:"odoo-reader" default:"intentplane-reader" help:"Login of Odoo's read-only user."`
}

// Run settles the reservations a crash left open, as the gateway does at
// start (gateway.Reconcile), and prints one line per reservation. It exits
// 3 when some could not be settled.
func (c *reconcileCmd) Run(e *env) error {
	older := 10 * time.Minute
	if c.OlderThan != nil {
		older = *c.OlderThan
	} else if !strings.HasPrefix(c.Store, "postgres://") && !strings.HasPrefix(c.Store, "postgresql://") {
		older = 0
	}
	if older < 0 {
		return &cli.ExitError{Code: 2, Msg: "reconcile: --older-than must not be negative"}
	}
	packs, err := c.packs(e.ctx)
	if err != nil {
		return err
	}
	src, err := openReceiptStore(e.ctx, c.Store, busyReconcile)
	if err != nil {
		return err
	}
	defer src.Close()
	st, ok := src.(gateway.Store)
	if !ok {
		return fmt.Errorf("reconcile: %s is not a gateway store", redactDSN(c.Store))
	}
	gw, err := gateway.New(gateway.Config{Audience: "intentplane-reconcile", Issuers: mandate.StaticKeys{}}, st, packs...)
	if err != nil {
		return err
	}
	start := time.Now()
	rep, err := gw.Reconcile(e.ctx, start.Add(-older))
	for _, s := range rep.Settlements {
		held := "mandate " + s.Mandate
		if s.Total != nil {
			held = "total " + s.TotalName() + ": " + s.TotalKey()
		}
		what := fmt.Sprintf("operation %s (%s of %q, %s)", s.Operation[:16], s.Action, s.Owner, held)
		fmt.Fprintf(e.stdout, "%s: %s: %s\n", s.Outcome, what, s.Reason)
	}
	fmt.Fprintf(e.stdout, "%s: %d reservations settled in %s: %d committed, %d released, %d unsettled\n",
		redactDSN(c.Store), len(rep.Settlements)-rep.Count(gateway.OutcomeUnsettled), time.Since(start).Round(time.Millisecond),
		rep.Count(gateway.OutcomeCommitted), rep.Count(gateway.OutcomeReleased), rep.Count(gateway.OutcomeUnsettled))
	if err != nil {
		return fmt.Errorf("reconcile: %w", err)
	}
	if n := rep.Count(gateway.OutcomeUnsettled); n > 0 {
		return &cli.ExitError{Code: 3, Msg: fmt.Sprintf("%d reservations stay open: their outcome is unknown (see above)", n)}
	}
	return nil
}

// packs returns the packs whose executors can settle operations: the
// accounts-payable pack over Odoo when --odoo-url is given.
func (c *reconcileCmd) packs(ctx context.Context) ([]gateway.Pack, error) {
	if c.OdooURL == "" {
		return nil, nil
	}
	pw := os.Getenv("ODOO_READER_PASSWORD")
	if c.OdooDB == "" || pw == "" || len(c.Companies) == 0 {
		return nil, errors.New("reconcile: with --odoo-url, give --odoo-db, --odoo-company and ODOO_READER_PASSWORD")
	}
	reader := odoo.Identity{Login: c.Reader, Password: pw}
	ids := map[string]int64{}
	for owner, name := range c.Companies {
		id, err := odoo.LookupCompany(ctx, odoo.Config{URL: c.OdooURL, DB: c.OdooDB, Reader: reader}, name)
		if err != nil {
			return nil, err
		}
		ids[owner] = id
	}
	books, err := odoo.New(odoo.Config{URL: c.OdooURL, DB: c.OdooDB, Reader: reader, Companies: ids})
	if err != nil {
		return nil, err
	}
	p, err := ap.NewPack(books, ap.Config{})
	if err != nil {
		return nil, err
	}
	return []gateway.Pack{p}, nil
}
