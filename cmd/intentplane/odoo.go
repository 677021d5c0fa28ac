package main

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/intentplane/intentplane/ap"
	"github.com/intentplane/intentplane/core/approval"
	"github.com/intentplane/intentplane/core/gateway"
	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/mandate"
	"github.com/intentplane/intentplane/erp"
	"github.com/intentplane/intentplane/odoo"
	"github.com/intentplane/intentplane/store/mem"
)

// odooCmd sets up an Odoo 17 database for intentplane and plays the
// accounts-payable demo against it.
type odooCmd struct {
	Setup odooSetupCmd `cmd:"" help:"Create or complete an Odoo 17 database for intentplane: the account module, ACME Supplies with a trusted bank account, bills INV-2290 and INV-2291, and the connector's three users with exactly their groups. Idempotent."`
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
	Timeout           time.Duration `default:"30s" help:"Time limit of each XML-RPC call."`
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
	return odoo.Identity{Login: c.ReaderLogin, Password: c.ReaderPassword},
		odoo.Identity{Login: c.PayerLogin, Password: c.PayerPassword},
		odoo.Identity{Login: c.BankAdminLogin, Password: c.BankAdminPassword}, nil
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
	a, err := odoo.NewAdmin(odoo.AdminConfig{URL: c.URL, DB: c.DB, MasterPassword: c.MasterPassword,
		Admin: odoo.Identity{Login: c.AdminLogin, Password: c.AdminPassword}, Timeout: c.InstallTimeout})
	if err != nil {
		return err
	}
	start := time.Now()
	cfg, err := odoo.Setup(e.ctx, a, odoo.SetupConfig{Reader: r, Payer: p, BankAdmin: b, DemoData: true,
		Progress: func(s string) { fmt.Fprintf(e.stdout, "[%5.1fs] %s\n", time.Since(start).Seconds(), s) }})
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "Done in %s. Database %s: company %s is res.company %d; users %s, %s, %s can each do only their part.\n",
		time.Since(start).Round(100*time.Millisecond), c.DB, odoo.DemoCompany, cfg.Companies[odoo.DemoCompany], r.Login, p.Login, b.Login)
	fmt.Fprintf(e.stdout, "Next: intentplane odoo demo --url %s --db %s\n", c.URL, c.DB)
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
	cid, err := odoo.LookupCompany(e.ctx, c.URL, c.DB, r, c.CompanyName)
	if err != nil {
		return fmt.Errorf("%w (run intentplane odoo setup first)", err)
	}
	client, err := odoo.New(odoo.Config{URL: c.URL, DB: c.DB, Reader: r, Payer: p, BankAdmin: b, Timeout: c.Timeout,
		Companies: map[string]int64{ap.DemoCompany: cid}})
	if err != nil {
		return err
	}
	return odooDemo(e.ctx, e.stdout, client)
}

// odooDemo plays the scenario of `intentplane demo ap` on a real Odoo
// through a real gateway, and checks in Odoo what happened. It returns an
// error if any outcome differs.
func odooDemo(ctx context.Context, w io.Writer, books *odoo.Client) error {
	const company = ap.DemoCompany
	if err := books.Login(ctx); err != nil {
		return err
	}
	vs, err := books.Vendors(ctx, company, erp.VendorQuery{Name: ap.DemoVendor})
	if err != nil {
		return err
	}
	if len(vs) != 1 {
		return fmt.Errorf("odoo demo: %d vendors named %s; run intentplane odoo setup first", len(vs), ap.DemoVendor)
	}
	acme := vs[0]
	open, err := books.Bills(ctx, company, erp.BillQuery{Vendor: acme.ID, Open: true})
	if err != nil {
		return err
	}
	bills := map[string]erp.Bill{}
	for _, bl := range open {
		bills[bl.Ref] = bl
	}
	for _, ref := range []string{ap.DemoBill, ap.DemoBill2} {
		if bl, ok := bills[ref]; !ok || bl.PaymentState != erp.NotPaid {
			return fmt.Errorf("odoo demo: bill %s is not open and unpaid (the demo ran on this database already?): set up a new database with intentplane odoo setup --db", ref)
		}
	}
	accounts, err := books.BankAccounts(ctx, company, erp.BankAccountQuery{Vendor: acme.ID})
	if err != nil {
		return err
	}
	onFile, ok := erp.Current(accounts, acme.ID)
	if !ok || onFile.Sanitized != ap.DemoIBAN {
		return fmt.Errorf("odoo demo: %s's current account is not %s", ap.DemoVendor, ap.DemoIBAN)
	}

	// The account on file was created by setup minutes ago: with the real
	// clock it is in its cooling-off period and every payment needs four
	// eyes. The gateway runs ahead of it by the cooling-off period.
	var mu sync.Mutex
	now := time.Now().UTC().Truncate(time.Second)
	if ahead := onFile.SetAt.Add(ap.DefaultCoolingOff + 24*time.Hour); ahead.After(now) {
		now = ahead
	}
	start := now
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	tick := func() { mu.Lock(); now = now.Add(time.Second); mu.Unlock() }

	issuerPub, issuerPriv, err := ed25519.GenerateKey(nil)
	if err != nil {
		return err
	}
	cfoPub, cfoPriv, err := ed25519.GenerateKey(nil)
	if err != nil {
		return err
	}
	pack, err := ap.NewPack(books, ap.Config{Callbacks: &ap.CallbackMem{}, Now: clock})
	if err != nil {
		return err
	}
	const audience, issuer, cfo = "intentplane-odoo-demo", "northwind-finance-console", "cfo@northwind"
	gw, err := gateway.New(gateway.Config{Audience: audience, Issuers: mandate.StaticKeys{issuer: issuerPub},
		Approvers: approval.StaticKeys{cfo: cfoPub}, Now: clock}, mem.New(clock), pack)
	if err != nil {
		return err
	}
	tok, err := mandate.Issue(mandate.Mandate{
		ID: "m-northwind-ap-odoo", Issuer: issuer, Audience: audience, Owner: company,
		Scope:  []intent.Action{ap.ActionListOpenBills, ap.ActionGetVendor, ap.ActionPayBill, ap.ActionChangeVendorBank},
		Budget: intent.Money{Currency: "EUR", Amount: 500000}, Mode: mandate.ModeKnownCounterparties,
		NotBefore: start, Expiry: start.Add(8 * time.Hour),
	}, issuer, issuerPriv)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "intentplane odoo demo: the agent proposes, the gateway decides, Odoo pays.\n\n")
	fmt.Fprintf(w, "Odoo: %s's account on file is %s (bank account %s); bills %s (%s) and %s (%s) are open.\n",
		ap.DemoVendor, onFile.Number, onFile.ID, ap.DemoBill, bills[ap.DemoBill].Name, ap.DemoBill2, bills[ap.DemoBill2].Name)
	fmt.Fprintf(w, "The account was set up at %s; the gateway's clock starts at %s, past its cooling-off period.\n",
		onFile.SetAt.Format(time.RFC3339), start.Format(time.RFC3339))
	fmt.Fprintf(w, "The inbox holds the \"we changed banks\" email (IBAN LT12 1000 0111 0100 1000), and the agent obeys it.\n\n")

	pay := func(bill, iban, amount string) map[string]any {
		return map[string]any{"vendor": ap.DemoVendor, "bill": bill, "iban": iban, "amount": amount, "currency": "EUR"}
	}
	steps := []struct {
		title   string
		action  intent.Action
		args    map[string]any
		verdict intent.Verdict
		code    intent.Code
		confirm bool
	}{
		{"The agent lists the open bills.", ap.ActionListOpenBills, map[string]any{}, intent.Allow, "", false},
		{"It pays INV-2290 to the email's IBAN.", ap.ActionPayBill, pay(ap.DemoBill, "LT12 1000 0111 0100 1000", "850.00"), intent.Deny, intent.CodeNotTrusted, false},
		{"It changes ACME Supplies' bank details to the email's IBAN, without a call-back.", ap.ActionChangeVendorBank,
			map[string]any{"vendor": ap.DemoVendor, "iban": "LT12 1000 0111 0100 1000"}, intent.Deny, intent.CodeNotTrusted, false},
		{"It pays INV-2290 to the account on file, spelled its own way.", ap.ActionPayBill, pay("inv 2290", "de89 3704 0044 0532 0130 00", "850.00"), intent.Allow, "", false},
		{"It pays INV-2290 a second time.", ap.ActionPayBill, pay(ap.DemoBill, ap.DemoIBAN, "850.00"), intent.Deny, intent.CodePolicyDenied, false},
		{"It pays INV-2291, 2,400.00 EUR: above the threshold, the CFO confirms.", ap.ActionPayBill, pay(ap.DemoBill2, ap.DemoIBAN, "2400.00"), intent.Allow, "", true},
	}
	failures := 0
	for i, s := range steps {
		tick()
		body, err := json.Marshal(map[string]any{"action": s.action, "args": s.args})
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "[%d] %s\n    agent sends: %s\n", i+1, s.title, body)
		callsBefore := books.Calls()
		d, err := gw.Decide(ctx, gateway.Request{Mandate: tok, Proposal: body})
		if err != nil {
			return err
		}
		if s.confirm && d.Verdict == intent.StepUp {
			fmt.Fprintf(w, "    STEP-UP (%s): %s\n", d.Level, d.Refusal.Message)
			a, err := approval.Sign(approval.Approval{ID: "appr-" + d.OperationHash.String()[:12], Operation: d.OperationHash,
				MandateID: d.Operation.MandateID, Approver: cfo, IssuedAt: clock(), ExpiresAt: clock().Add(5 * time.Minute)}, cfoPriv)
			if err != nil {
				return err
			}
			fmt.Fprintf(w, "    the CFO confirms the resolved operation: approval %s\n", a.ID)
			tick()
			if d, err = gw.Decide(ctx, gateway.Request{Mandate: tok, Proposal: body, Approvals: []approval.Approval{a}}); err != nil {
				return err
			}
		}
		switch d.Verdict {
		case intent.Allow:
			fmt.Fprintf(w, "    ALLOW, executed %v (%d XML-RPC calls to Odoo)\n", d.Executed, books.Calls()-callsBefore)
			if out := d.Output; out != "" {
				if len(out) > 240 {
					out = out[:240] + "…"
				}
				fmt.Fprintf(w, "    result: %s\n", out)
			}
		default:
			code, msg := intent.Code(""), ""
			if d.Refusal != nil {
				code, msg = d.Refusal.Code, d.Refusal.Message
			}
			fmt.Fprintf(w, "    %s %s\n    reason: %s\n", strings.ToUpper(d.Verdict.String()), code, msg)
		}
		switch {
		case d.Verdict != s.verdict:
			failures++
			fmt.Fprintf(w, "    UNEXPECTED: verdict %s, expected %s\n", d.Verdict, s.verdict)
		case s.code != "" && (d.Refusal == nil || d.Refusal.Code != s.code):
			failures++
			fmt.Fprintf(w, "    UNEXPECTED: refusal %+v, expected %s\n", d.Refusal, s.code)
		case s.verdict == intent.Allow && !d.Executed:
			failures++
			fmt.Fprintf(w, "    UNEXPECTED: allowed but not executed\n")
		}
		fmt.Fprintln(w)
	}

	fmt.Fprintf(w, "What Odoo shows afterwards:\n")
	for _, ref := range []string{ap.DemoBill, ap.DemoBill2} {
		bs, err := books.Bills(ctx, company, erp.BillQuery{ID: bills[ref].ID})
		if err != nil || len(bs) != 1 {
			return fmt.Errorf("odoo demo: reading bill %s: %v", ref, err)
		}
		fmt.Fprintf(w, "  bill %s (%s): payment state %s, residual %s %s\n", bs[0].Name, ref, bs[0].PaymentState, intent.FormatAmount(bs[0].Residual, 2), bs[0].Currency)
		if bs[0].PaymentState != erp.Paid {
			failures++
			fmt.Fprintf(w, "  UNEXPECTED: not paid\n")
		}
		ps, err := books.Payments(ctx, company, erp.PaymentQuery{Bill: bs[0].ID})
		if err != nil {
			return err
		}
		for _, p := range ps {
			fmt.Fprintf(w, "    payment %s: %s %s to bank account %s (%s), key %.16s…\n", p.ID, intent.FormatAmount(p.Amount.Amount, 2), p.Amount.Currency, p.BankAccount, p.State, p.Key)
			if p.BankAccount != onFile.ID {
				failures++
				fmt.Fprintf(w, "    UNEXPECTED: paid to an account other than the one on file\n")
			}
		}
		if len(ps) != 1 {
			failures++
			fmt.Fprintf(w, "    UNEXPECTED: %d payments, expected 1\n", len(ps))
		}
	}
	if as, err := books.BankAccounts(ctx, company, erp.BankAccountQuery{Number: ap.DemoEmailIBAN}); err != nil || len(as) != 0 {
		failures++
		fmt.Fprintf(w, "  UNEXPECTED: the email's IBAN is on file (%v)\n", err)
	}
	fmt.Fprintf(w, "\nIn Odoo itself, as each identity: the reader and the payer try to add, change and trust a vendor bank account...\n")
	if err := books.CheckRights(ctx, company); err != nil {
		failures++
		fmt.Fprintf(w, "  UNEXPECTED: %v\n", err)
	} else {
		fmt.Fprintf(w, "  refused, every time (and the bank administrator cannot read bills or pay).\n")
	}
	if failures > 0 {
		return fmt.Errorf("odoo demo: %d outcomes differed from the scenario", failures)
	}
	return nil
}
