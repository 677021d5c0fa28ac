package provision

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/erp"
	"github.com/intentplane/intentplane/odoo"
)

// The demo data set Setup enters; fictional, with the standard example
// IBANs of their countries. They match the in-memory demo of the
// accounts-payable pack.
const (
	DemoCompany     = "northwind"                   // the company as erp.Source names it
	DemoCompanyName = "Northwind"                   // its res.company name
	DemoVendor      = "ACME Supplies"               // its vendor
	DemoVendorPhone = "+49 30 1234567"              // its phone on file
	DemoIBAN        = "DE89 3704 0044 0532 0130 00" // the vendor's trusted account
	DemoOldIBAN     = "NL91 ABNA 0417 1643 00"      // its archived previous account
	DemoBill        = "INV-2290"                    // 850.00 EUR, naming DemoIBAN
	DemoBill2       = "INV-2291"                    // 2,400.00 EUR
	DemoPaidBill    = "INV-2187"                    // 612.00 EUR, paid: ACME was paid before
	// DemoOpenBill is left open by `intentplane odoo demo`, which pays
	// DemoBill and DemoBill2: 1,180.00 EUR, due 2026-12-22, for an
	// assistant to pay through intentplane-mcp after the demo.
	DemoOpenBill = "INV-2302"
)

// SetupConfig says what Setup sets up. The zero value of an optional field
// means the default stated on it.
type SetupConfig struct {
	// Company is the company as erp.Source names it; "" means
	// DemoCompany. It is the database's first res.company, renamed
	// CompanyName; "" means DemoCompanyName.
	Company, CompanyName string
	// Currency is the company's currency, set before account is
	// installed; "" means EUR.
	Currency string
	// Others are further companies (erp name → res.company name), created
	// with the generic chart of accounts; the users get access to all.
	Others map[string]string
	// Reader, Payer and BankAdmin are the connector's users; each is
	// skipped if its Login is empty.
	Reader, Payer, BankAdmin odoo.Identity
	// DemoData enters ACME Supplies (in Germany), its accounts and bills
	// INV-2290 and INV-2291 (the demo's) and INV-2302 (left for
	// intentplane-mcp) in Company, and its bill INV-2187, paid, so that
	// paying ACME is not a first payment; what is there is kept.
	DemoData bool
	// Progress is told each step as it starts; nil means silence.
	Progress func(step string)
	// Transport is the connector's odoo.Config.Transport. On Odoo 19 and later,
	// unless it is odoo.TransportXMLRPC, Setup makes an API key for each of
	// the three users (see Admin.NewAPIKey) and returns them as their
	// passwords: JSON-2 takes keys only.
	Transport string
	// KeyDays is the lifetime of those keys in days; zero means KeyDays
	// (90, Odoo's limit for users without Settings rights). Each run of
	// Setup makes new keys; earlier ones stay valid until they expire or
	// are revoked in the user's Preferences.
	KeyDays int
}

// Groups of the connector's users: exactly what each needs.
var (
	ReaderGroups    = []string{"base.group_user", "account.group_account_readonly"}
	PayerGroups     = []string{"base.group_user", "account.group_account_invoice"}
	BankAdminGroups = []string{"base.group_user", "base.group_partner_manager", "account.group_validate_bank_account"}
)

// Setup brings a.DB to what intentplane needs, creating what is missing
// and leaving what is there: the database (with the master password),
// the company and its currency, the account module, other companies, the
// three users with exactly their groups, and the demo data. It then logs
// in as each user and checks with odoo.Client.CheckRights that none can do what
// it must not. It is idempotent. It returns the connector's odoo.Config for
// the database (without Timeout, HTTPClient and Logger).
func Setup(ctx context.Context, a *Admin, sc SetupConfig) (odoo.Config, error) {
	if sc.Company == "" {
		sc.Company = DemoCompany
	}
	if sc.CompanyName == "" {
		sc.CompanyName = DemoCompanyName
	}
	if sc.Currency == "" {
		sc.Currency = "EUR"
	}
	say := sc.Progress
	if say == nil {
		say = func(string) {}
	}
	if err := ensureDatabase(ctx, a, say); err != nil {
		return odoo.Config{}, err
	}
	if err := setupAccounting(ctx, a, sc, say); err != nil {
		return odoo.Config{}, err
	}
	companies := []string{sc.Company}
	for name, display := range sc.Others {
		say("company " + display)
		id, err := a.EnsureCompany(ctx, name, display, sc.Currency)
		if err != nil {
			return odoo.Config{}, err
		}
		if err := a.SetupCompany(ctx, name, id, display, sc.Currency); err != nil {
			say(fmt.Sprintf("company %s: %v", display, err))
		}
		companies = append(companies, name)
	}
	if err := ensureUsers(ctx, a, sc, companies, say); err != nil {
		return odoo.Config{}, err
	}
	if sc.DemoData {
		say("demo data: " + DemoVendor + ", its bank accounts, bills " + DemoBill + " and " + DemoBill2 + " (for odoo demo) and " + DemoOpenBill + " (for intentplane-mcp)")
		if err := demoData(ctx, a, sc.Company); err != nil {
			return odoo.Config{}, err
		}
	}
	cfg := odoo.Config{URL: a.t.Base(), DB: a.db, Reader: sc.Reader, Payer: sc.Payer, BankAdmin: sc.BankAdmin, Companies: a.Companies(),
		Transport: sc.Transport}
	if err := apiKeys(ctx, a, sc, &cfg, say); err != nil {
		return odoo.Config{}, err
	}
	c, err := odoo.New(cfg)
	if err != nil {
		return odoo.Config{}, err
	}
	say("checking what each user must not be able to do")
	if err := c.Login(ctx); err != nil {
		return odoo.Config{}, err
	}
	if err := c.CheckRights(ctx, sc.Company); err != nil {
		return odoo.Config{}, err
	}
	return cfg, nil
}

// apiKeys makes the users' API keys on Odoo 19 and later unless
// sc.Transport is XML-RPC, and sets them as cfg's passwords.
func apiKeys(ctx context.Context, a *Admin, sc SetupConfig, cfg *odoo.Config, say func(string)) error {
	v, err := a.t.Version(ctx)
	if err != nil {
		return err
	}
	if v.Major < 19 || sc.Transport == odoo.TransportXMLRPC {
		return nil
	}
	days := sc.KeyDays
	if days == 0 {
		days = KeyDays
	}
	for _, id := range []*odoo.Identity{&cfg.Reader, &cfg.Payer, &cfg.BankAdmin} {
		if id.Login == "" {
			continue
		}
		k, err := a.NewAPIKey(ctx, *id, "intentplane", days)
		if err != nil {
			return err
		}
		say(fmt.Sprintf("API key for %s (JSON-2), valid until %s (%d days)", id.Login, k.Expires.Format(time.DateOnly), days))
		id.Password = k.Key
	}
	return nil
}

// ensureDatabase creates a's database unless it exists, telling say.
// Where the server offers no database service (Odoo 20 removes database
// management from its API) it says so and goes on with the database as
// it is: it must then exist.
func ensureDatabase(ctx context.Context, a *Admin, say func(string)) error {
	exists, err := a.DatabaseExists(ctx)
	if noDatabaseService(err) {
		say(fmt.Sprintf("the server offers no database service (no database creation over its API, as in Odoo 20): going on with the existing database %s", a.db))
		return nil
	}
	if err != nil {
		return err
	}
	if !exists {
		say(fmt.Sprintf("creating database %s (about 10 s)", a.db))
		if err := a.CreateDatabase(ctx); noDatabaseService(err) {
			return fmt.Errorf("odoo: database %s does not exist and this server cannot create databases over its API: create it (with the account module) in Odoo's database manager or your hosting's console, then run setup again: %w", a.db, err)
		} else if errors.Is(err, odoo.ErrAccessDenied) {
			return fmt.Errorf("odoo: creating database %s was refused: a wrong master password, or a server that blocks database management (list_db = False): give the right master password, or create the database yourself and run setup again: %w", a.db, err)
		} else if err != nil {
			return fmt.Errorf("odoo: creating database %s: %w", a.db, err)
		}
	}
	return nil
}

// noDatabaseService reports whether err says the server has no db
// service, or not that method of it: XML-RPC's dispatcher fails with
// KeyError 'db' or "Method not found", or the route answers 404.
func noDatabaseService(err error) bool {
	if err == nil {
		return false
	}
	var f *odoo.Fault
	if errors.As(err, &f) && f.Code == 1 {
		return strings.Contains(f.Message, "KeyError: 'db'") || strings.Contains(f.Message, "Method not found")
	}
	return errors.Is(err, odoo.ErrNetwork) && strings.HasSuffix(err.Error(), "HTTP 404")
}

// setupAccounting sets up sc's main company (ID 1: its name and
// currency) and installs the account module unless it is installed,
// setting the company up again after it. Failing to set the company up
// is an error only before the module is installed; afterwards it is told
// to say and Setup goes on.
func setupAccounting(ctx context.Context, a *Admin, sc SetupConfig, say func(string)) error {
	installed, err := a.ModuleInstalled(ctx, "account")
	if err != nil {
		return err
	}
	if err := a.SetupCompany(ctx, sc.Company, 1, sc.CompanyName, sc.Currency); err != nil && !installed {
		return err
	} else if err != nil {
		say(fmt.Sprintf("company %s: %v", sc.CompanyName, err))
	}
	if installed {
		return a.EnsureChart(ctx, 1)
	}
	say("installing account (about 30 s)")
	start := time.Now()
	if err := a.InstallModule(ctx, "account"); err != nil {
		return fmt.Errorf("odoo: installing account: %w", err)
	}
	say(fmt.Sprintf("account installed in %s", time.Since(start).Round(time.Second)))
	// The generic chart of accounts sets the company's currency to USD
	// as it loads; no journal entry exists yet, so it can change back.
	if err := a.SetupCompany(ctx, sc.Company, 1, sc.CompanyName, sc.Currency); err != nil {
		say(fmt.Sprintf("company %s: %v", sc.CompanyName, err))
	}
	return nil
}

// ensureUsers creates or updates the connector's users of sc (reader,
// payer, bank administrator; each skipped when its Login is empty) with
// exactly their groups, in the companies, telling say.
func ensureUsers(ctx context.Context, a *Admin, sc SetupConfig, companies []string, say func(string)) error {
	users := []struct {
		role   string
		id     odoo.Identity
		groups []string
	}{
		{"reader", sc.Reader, ReaderGroups},
		{"payer", sc.Payer, PayerGroups},
		{"bankadmin", sc.BankAdmin, BankAdminGroups},
	}
	for _, u := range users {
		if u.id.Login == "" {
			continue
		}
		say(fmt.Sprintf("user %s (%s): %s", u.id.Login, u.role, strings.Join(u.groups, ", ")))
		if _, err := a.EnsureUser(ctx, User{
			Name: "intentplane " + u.role, Identity: u.id, Groups: u.groups, Companies: companies,
			Email: u.id.Login + "@intentplane.invalid",
		}); err != nil {
			return fmt.Errorf("odoo: user %s: %w", u.id.Login, err)
		}
	}
	return nil
}

// demoData enters the demo data set in company, skipping what is there.
func demoData(ctx context.Context, a *Admin, company string) error {
	v, ok, err := a.FindVendor(ctx, company, DemoVendor)
	if err != nil {
		return err
	}
	if !ok {
		if v, err = a.AddVendor(ctx, company, erp.Vendor{Name: DemoVendor, Phone: DemoVendorPhone, Active: true, Country: "DE"}); err != nil {
			return err
		}
	}
	accounts, err := a.client.BankAccounts(ctx, company, erp.BankAccountQuery{Vendor: v.ID})
	if err != nil {
		return err
	}
	has := func(number string) (erp.BankAccount, bool) {
		for _, x := range accounts {
			if x.Sanitized == erp.Sanitize(number) {
				return x, true
			}
		}
		return erp.BankAccount{}, false
	}
	if _, ok := has(DemoOldIBAN); !ok {
		if _, err := a.AddBankAccount(ctx, company, erp.BankAccount{Vendor: v.ID, Number: DemoOldIBAN, Trusted: true, Active: false, Sequence: 20}); err != nil {
			return err
		}
	}
	onFile, ok := has(DemoIBAN)
	if !ok {
		if onFile, err = a.AddBankAccount(ctx, company, erp.BankAccount{Vendor: v.ID, Number: DemoIBAN, Trusted: true, Active: true}); err != nil {
			return err
		}
	}
	bills, err := a.client.Bills(ctx, company, erp.BillQuery{Vendor: v.ID})
	if err != nil {
		return err
	}
	for _, b := range []erp.Bill{
		{Ref: DemoBill, Vendor: v.ID, Currency: "EUR", Total: 85000, Due: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC), BankAccount: onFile.ID},
		{Ref: DemoBill2, Vendor: v.ID, Currency: "EUR", Total: 240000, Due: time.Date(2026, 12, 15, 0, 0, 0, 0, time.UTC)},
		{Ref: DemoOpenBill, Vendor: v.ID, Currency: "EUR", Total: 118000, Due: time.Date(2026, 12, 22, 0, 0, 0, 0, time.UTC)},
		{Ref: DemoPaidBill, Vendor: v.ID, Currency: "EUR", Total: 61200, Date: time.Date(2026, 10, 5, 0, 0, 0, 0, time.UTC),
			Due: time.Date(2026, 11, 4, 0, 0, 0, 0, time.UTC), BankAccount: onFile.ID},
	} {
		found := false
		for _, x := range bills {
			found = found || x.Ref == b.Ref
		}
		if found {
			continue
		}
		added, err := a.AddBill(ctx, company, b)
		if err != nil {
			return err
		}
		if b.Ref == DemoPaidBill { // paid before: ACME is not paid for the first time
			if _, err := a.client.RegisterPayment(ctx, company, erp.PaymentRequest{Bill: added.ID, BankAccount: onFile.ID,
				Amount: intent.Money{Currency: "EUR", Amount: b.Total}, Key: "demo-paid-" + added.ID}); err != nil {
				return err
			}
		}
	}
	return nil
}
