package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/intentplane/intentplane/ap"
	"github.com/intentplane/intentplane/internal/demo/apdemo"
	"github.com/intentplane/intentplane/odoo"
	"github.com/intentplane/intentplane/odoo/provision"
)

// odooCmd sets up an Odoo database (17, 18 or 19) for intentplane and
// plays the accounts-payable demo against it.
type odooCmd struct {
	Setup odooSetupCmd `cmd:"" help:"Create or complete an Odoo 17, 18 or 19 database for intentplane: the account module, ACME Supplies with a trusted bank account, bills INV-2290 and INV-2291, and the connector's three users with exactly their groups (on Odoo 19, unless the transport is xmlrpc, with the API keys it prints). Idempotent."`
	Demo  odooDemoCmd  `cmd:"" help:"Play the accounts-payable scenario on that Odoo: the email's IBAN and a bank change without call-back are refused, the two bills are paid in Odoo, a second payment is refused, and neither the reader nor the payer can touch bank accounts."`
}

// odooConn is where the Odoo server is and who the connector logs in as.
// Passwords come from the environment or flags; none is built in.
type odooConn struct {
	URL               string        `required:"" env:"ODOO_URL" help:"Odoo's base URL, e.g. http://127.0.0.1:8069."`
	DB                string        `required:"" env:"ODOO_DB" help:"The database."`
	ReaderLogin       string        `default:"intentplane-reader" help:"Login of the read-only user."`
	ReaderPassword    string        `env:"ODOO_READER_PASSWORD" help:"Its password."`
	PayerLogin        string        `default:"intentplane-payer" help:"Login of the user that registers payments."`
	PayerPassword     string        `env:"ODOO_PAYER_PASSWORD" help:"Its password."`
	BankAdminLogin    string        `default:"intentplane-bankadmin" help:"Login of the user that changes bank accounts."`
	BankAdminPassword string        `env:"ODOO_BANKADMIN_PASSWORD" help:"Its password."`
	Transport         string        `env:"ODOO_TRANSPORT" enum:",xmlrpc,json2" default:"" help:"How to call Odoo: empty is JSON-2 on Odoo 19 and later (the passwords are then API keys, which setup makes) and XML-RPC on 17 and 18; xmlrpc on every version; json2 (refused on 17 and 18)."`
	Timeout           time.Duration `default:"30s" help:"Time limit of each call to Odoo."`
}

func (c odooConn) identities() (r, p, b odoo.Identity, err error) {
	var missing []string
	for _, x := range []struct{ name, pw string }{{"reader", c.ReaderPassword}, {"payer", c.PayerPassword}, {"bank administrator", c.BankAdminPassword}} {
		if x.pw == "" {
			missing = append(missing, x.name)
		}
	}
	if len(missing) > 0 {
		return r, p, b, fmt.Errorf("no password for the %s: set ODOO_READER_PASSWORD, ODOO_PAYER_PASSWORD and ODOO_BANKADMIN_PASSWORD (or the flags)", strings.Join(missing, ", "))
	}
	return odoo.Identity{Login: c.ReaderLogin, Password: c.ReaderPassword, Setting: "ODOO_READER_PASSWORD (or --reader-password)"},
		odoo.Identity{Login: c.PayerLogin, Password: c.PayerPassword, Setting: "ODOO_PAYER_PASSWORD (or --payer-password)"},
		odoo.Identity{Login: c.BankAdminLogin, Password: c.BankAdminPassword, Setting: "ODOO_BANKADMIN_PASSWORD (or --bank-admin-password)"}, nil
}

type odooSetupCmd struct {
	odooConn       `embed:""`
	MasterPassword string        `env:"ODOO_MASTER_PASSWORD" help:"The server's master password, needed to create the database."`
	AdminLogin     string        `default:"admin" help:"The database administrator's login."`
	AdminPassword  string        `env:"ODOO_ADMIN_PASSWORD" help:"Its password; a new database gets it."`
	InstallTimeout time.Duration `default:"10m" help:"Time limit of the long calls (creating the database, installing account)."`
}

func (c *odooSetupCmd) Run(e *env) error {
	r, p, b, err := c.identities()
	if err != nil {
		return err
	}
	if c.AdminPassword == "" {
		return errors.New("no administrator password: set ODOO_ADMIN_PASSWORD (or --admin-password)")
	}
	a, err := provision.NewAdmin(provision.AdminConfig{URL: c.URL, DB: c.DB, MasterPassword: c.MasterPassword,
		Admin: odoo.Identity{Login: c.AdminLogin, Password: c.AdminPassword}, Timeout: c.InstallTimeout})
	if err != nil {
		return err
	}
	start := time.Now()
	cfg, err := provision.Setup(e.ctx, a, provision.SetupConfig{Reader: r, Payer: p, BankAdmin: b, DemoData: true, Transport: c.Transport,
		Progress: func(s string) { fmt.Fprintf(e.stdout, "[%5.1fs] %s\n", time.Since(start).Seconds(), s) }})
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "Done in %s. Database %s: company %s is res.company %d; users %s, %s, %s can each do only their part.\n",
		time.Since(start).Round(100*time.Millisecond), c.DB, provision.DemoCompany, cfg.Companies[provision.DemoCompany], r.Login, p.Login, b.Login)
	if cfg.Reader.Password != r.Password { // Odoo 19: JSON-2 takes API keys, which setup made
		fmt.Fprintf(e.stdout, "Odoo 19 and later are called over JSON-2, with API keys instead of passwords. The users' new keys, valid %d days "+
			"(Odoo's limit for users without Settings rights; run setup again, or make new ones in each user's Preferences, before they expire):\n"+
			"export ODOO_READER_PASSWORD=%s ODOO_PAYER_PASSWORD=%s ODOO_BANKADMIN_PASSWORD=%s\n",
			provision.KeyDays, cfg.Reader.Password, cfg.Payer.Password, cfg.BankAdmin.Password)
	}
	fmt.Fprintf(e.stdout, "Next: intentplane odoo demo --url %s --db %s (it pays %s and %s, and leaves %s open for an assistant to pay through intentplane-mcp)\n",
		c.URL, c.DB, provision.DemoBill, provision.DemoBill2, provision.DemoOpenBill)
	return nil
}

type odooDemoCmd struct {
	odooConn    `embed:""`
	CompanyName string `default:"Northwind" help:"The res.company the demo's mandate owner (northwind) maps to."`
}

func (c *odooDemoCmd) Run(e *env) error {
	r, p, b, err := c.identities()
	if err != nil {
		return err
	}
	cfg := odoo.Config{URL: c.URL, DB: c.DB, Reader: r, Payer: p, BankAdmin: b, Timeout: c.Timeout, Transport: c.Transport}
	cid, err := odoo.LookupCompany(e.ctx, cfg, c.CompanyName)
	if err != nil {
		return fmt.Errorf("%w (run intentplane odoo setup first)", err)
	}
	cfg.Companies = map[string]int64{ap.DemoCompany: cid}
	client, err := odoo.New(cfg)
	if err != nil {
		return err
	}
	return odooDemo(e.ctx, e.stdout, client)
}

// odooDemo plays the scenario of `intentplane demo ap` (package
// internal/demo/apdemo) on a real Odoo through a real gateway, counting the
// XML-RPC calls, and checks in Odoo what happened and that neither the
// reader nor the payer can touch bank accounts. It returns an error if any
// outcome differs.
func odooDemo(ctx context.Context, w io.Writer, books *odoo.Client) error {
	if err := books.Login(ctx); err != nil {
		return err
	}
	return apdemo.Run(ctx, w, apdemo.Config{Books: books, Name: "intentplane odoo demo", Calls: books.Calls, Rights: books.CheckRights})
}
