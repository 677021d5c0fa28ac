package provision

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/intentplane/intentplane/odoo"
	"github.com/intentplane/intentplane/odoo/internal/rpc"
)

// AdminConfig configures an Admin. The zero value of an optional field
// means the default stated on it.
type AdminConfig struct {
	// URL is the Odoo server's base URL; required.
	URL string
	// DB is the database to set up; required.
	DB string
	// MasterPassword is the server's master password (admin_passwd),
	// needed to create and drop databases only.
	MasterPassword string
	// Admin is the database's administrator; an empty Login means
	// "admin".
	Admin odoo.Identity
	// Companies maps company names as erp.Source names them to res.company
	// ids, as in odoo.Config; EnsureCompany adds to it.
	Companies map[string]int64
	// Transport is how the calls go: "" or odoo.TransportXMLRPC, XML-RPC (the
	// administrator logs in with its password, which JSON-2 does not
	// take); odoo.TransportJSON2 (Odoo 19 and later: Admin.Password must then
	// be an API key). The db service (creating, copying and dropping
	// databases) is XML-RPC in both.
	Transport string
	// Timeout limits each call; zero means odoo.DefaultTimeout. Installing a
	// module takes about 25 s on an empty database.
	Timeout time.Duration
	// HTTPClient makes the calls; nil means a new http.Client.
	HTTPClient *http.Client
	// Logger receives one debug record per call; nil means discard.
	Logger *slog.Logger
	// Now gives the date of the bills AddBill enters; nil means time.Now.
	Now func() time.Time
}

// Admin sets up an Odoo database for intentplane: the database itself,
// the account module, companies, the connector's users, and data entered
// as the ERP's own users would (vendors, bank accounts, bills). It is for
// the setup command and the tests; the gateway never uses it. It
// implements erptest.Seeder. Safe for concurrent use.
type Admin struct {
	t      *rpc.Transport
	db     string
	master string
	s      *rpc.Session
	now    func() time.Time

	mu         sync.Mutex
	companies  map[string]int64
	currencies map[string]currency // by ISO code, as Currency found them
	client     *odoo.Client        // reads records back, as the administrator
}

// currency is a res.currency: its id and decimal places.
type currency struct {
	id       int64
	decimals int
}

// NewAdmin returns an Admin for cfg; it makes no call.
func NewAdmin(cfg AdminConfig) (*Admin, error) {
	if cfg.DB == "" {
		return nil, errors.New("odoo: AdminConfig.DB is required")
	}
	if err := rpc.CheckTransport("AdminConfig.Transport", cfg.Transport); err != nil {
		return nil, err
	}
	mode := cfg.Transport
	if mode == odoo.TransportAuto {
		mode = odoo.TransportXMLRPC
	}
	t, err := rpc.NewTransport(rpc.Options{URL: cfg.URL, HTTPClient: cfg.HTTPClient, Timeout: cfg.Timeout, Logger: cfg.Logger,
		Mode: mode, Secrets: []string{cfg.MasterPassword, cfg.Admin.Password}, Database: cfg.DB})
	if err != nil {
		return nil, err
	}
	if cfg.Admin.Login == "" {
		cfg.Admin.Login = "admin"
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	a := &Admin{t: t, db: cfg.DB, master: cfg.MasterPassword, now: cfg.Now,
		companies: map[string]int64{}, currencies: map[string]currency{}}
	if cfg.Admin.Setting == "" {
		cfg.Admin.Setting = "AdminConfig.Admin.Password"
	}
	a.s = rpc.NewSession(t, cfg.DB, "administrator", cfg.Admin)
	for k, v := range cfg.Companies {
		a.companies[k] = v
	}
	a.client = odoo.NewAs(a.s, a.companies, cfg.Now)
	return a, nil
}

// Companies returns a copy of the company map.
func (a *Admin) Companies() map[string]int64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	m := make(map[string]int64, len(a.companies))
	for k, v := range a.companies {
		m[k] = v
	}
	return m
}

func (a *Admin) company(name string) (int64, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	id, ok := a.companies[name]
	return id, ok
}

// DatabaseExists reports whether the database exists.
func (a *Admin) DatabaseExists(ctx context.Context) (bool, error) {
	v, err := a.t.Call(ctx, "db", "db_exist", "db_exist", a.db)
	if err != nil {
		return false, err
	}
	b, ok := v.(bool)
	if !ok {
		return false, fmt.Errorf("odoo: db_exist: %w", rpc.BadAnswer("a boolean", v))
	}
	return b, nil
}

// CreateDatabase creates the database without demo data, in English,
// with the administrator's login and password (about 8 s). It returns an
// error wrapping ErrAccessDenied for a wrong master password, and ErrServer
// if the database exists.
func (a *Admin) CreateDatabase(ctx context.Context) error {
	_, err := a.t.Call(ctx, "db", "create_database", "create_database", a.master, a.db, false, "en_US", a.s.Identity().Password, a.s.Identity().Login)
	return err
}

// DropDatabase drops the database; it reports false if there was none.
func (a *Admin) DropDatabase(ctx context.Context) (bool, error) {
	v, err := a.t.Call(ctx, "db", "drop", "drop", a.master, a.db)
	if err != nil {
		return false, err
	}
	b, _ := v.(bool)
	return b, nil
}

// DuplicateDatabase copies the database to a new one named to (about
// 0.8 s): a clean copy per test.
func (a *Admin) DuplicateDatabase(ctx context.Context, to string) error {
	_, err := a.t.Call(ctx, "db", "duplicate_database", "duplicate_database", a.master, a.db, to)
	return err
}

// exec runs model.method as the administrator.
func (a *Admin) exec(ctx context.Context, model, method string, args []any, kw map[string]any) (any, error) {
	return a.s.Execute(ctx, model, method, args, kw)
}

// done runs a method that may return None: the "cannot marshal None"
// fault means it ran and committed.
func (a *Admin) done(ctx context.Context, model, method string, args []any, kw map[string]any) error {
	_, err := a.exec(ctx, model, method, args, kw)
	if errors.Is(err, rpc.ErrNoneResult) {
		return nil
	}
	return err
}

func (a *Admin) create(ctx context.Context, model string, vals map[string]any, kw map[string]any) (int64, error) {
	v, err := a.exec(ctx, model, "create", []any{vals}, kw)
	if err != nil {
		return 0, err
	}
	id, err := rpc.AsID(v)
	if err != nil {
		return 0, fmt.Errorf("odoo: %s.create: %w", model, err)
	}
	return id, nil
}

func (a *Admin) write(ctx context.Context, model string, ids []int64, vals map[string]any, kw map[string]any) error {
	list := make([]any, len(ids))
	for i, id := range ids {
		list[i] = id
	}
	_, err := a.exec(ctx, model, "write", []any{list, vals}, kw)
	return err
}

// ModuleInstalled reports whether a module is installed.
func (a *Admin) ModuleInstalled(ctx context.Context, name string) (bool, error) {
	rs, err := a.s.SearchRead(ctx, "ir.module.module", []any{rpc.Leaf("name", "=", name)}, []string{"state"}, nil)
	if err != nil {
		return false, err
	}
	if len(rs) != 1 {
		return false, fmt.Errorf("odoo: no module %q on the server", name)
	}
	st, err := rs[0].Str("state")
	return st == "installed", err
}

// InstallModule installs a module and its dependencies if it is not
// installed (about 25 s for account on an empty database).
func (a *Admin) InstallModule(ctx context.Context, name string) error {
	rs, err := a.s.SearchRead(ctx, "ir.module.module", []any{rpc.Leaf("name", "=", name)}, []string{"state"}, nil)
	if err != nil {
		return err
	}
	if len(rs) != 1 {
		return fmt.Errorf("odoo: no module %q on the server", name)
	}
	if st, _ := rs[0].Str("state"); st == "installed" {
		return nil
	}
	id, err := rs[0].ID()
	if err != nil {
		return err
	}
	err = a.done(ctx, "ir.module.module", "button_immediate_install", []any{[]any{id}}, nil)
	if !errors.Is(err, odoo.ErrNetwork) {
		return err
	}
	// A threaded Odoo (workers = 0) reloads itself after installing
	// modules and drops the open connections: the install may be done.
	if werr := a.waitServer(ctx, reloadWait); werr != nil {
		return fmt.Errorf("odoo: installing %s: the server stopped answering (%w) and did not come back: %w", name, err, werr)
	}
	ok, rerr := a.ModuleInstalled(ctx, name)
	if rerr != nil {
		return rerr
	}
	if !ok {
		return fmt.Errorf("odoo: installing %s: the connection was lost and the module is not installed: see the server log, then run setup again: %w", name, err)
	}
	return nil
}

// reloadWait bounds how long InstallModule waits for a server reloading
// after an install.
const reloadWait = 2 * time.Minute

// waitServer polls the server's version (common.version, no login)
// until it answers, backing off from 250 ms to 5 s, for at most max or
// until ctx ends; it returns the last error.
func (a *Admin) waitServer(ctx context.Context, max time.Duration) error {
	deadline := time.Now().Add(max)
	delay := 250 * time.Millisecond
	for {
		_, err := a.t.Call(ctx, "common", "version", "version")
		if err == nil {
			return nil
		}
		if time.Now().Add(delay).After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(delay):
		}
		delay = min(2*delay, 5*time.Second)
	}
}

// Currency returns the id of a currency by ISO code, activating it if it
// is archived (Odoo ships most currencies archived).
func (a *Admin) Currency(ctx context.Context, code string) (int64, error) {
	cur, err := a.currency(ctx, code)
	return cur.id, err
}

// currency returns the currency with the ISO code (see Currency), read
// once and then kept.
func (a *Admin) currency(ctx context.Context, code string) (currency, error) {
	a.mu.Lock()
	cur, ok := a.currencies[code]
	a.mu.Unlock()
	if ok {
		return cur, nil
	}
	rs, err := a.s.SearchRead(ctx, "res.currency", []any{rpc.Leaf("name", "=", code)}, []string{"active", "decimal_places"},
		map[string]any{"context": map[string]any{"active_test": false}})
	if err != nil {
		return currency{}, err
	}
	if len(rs) != 1 {
		return currency{}, fmt.Errorf("odoo: no currency %q", code)
	}
	id, err := rs[0].ID()
	if err != nil {
		return currency{}, err
	}
	if active, _ := rs[0].Bool("active"); !active {
		if err := a.write(ctx, "res.currency", []int64{id}, map[string]any{"active": true}, nil); err != nil {
			return currency{}, err
		}
	}
	dec, err := rs[0].Int("decimal_places")
	if err != nil || dec < 0 || dec > 6 {
		return currency{}, fmt.Errorf("odoo: currency %s: %w", code, odoo.ErrBadAnswer)
	}
	cur = currency{id: id, decimals: int(dec)}
	a.mu.Lock()
	a.currencies[code] = cur
	a.mu.Unlock()
	return cur, nil
}

// SetupCompany names an existing res.company (1 is the database's first)
// and gives it a currency, and maps the company name company to it (even
// when it returns an error). The currency can only change before the
// company has journal entries: call it before installing account. A
// currency that cannot change any more is left as it is and reported in
// the error.
func (a *Admin) SetupCompany(ctx context.Context, company string, id int64, name, currencyCode string) error {
	cur, err := a.Currency(ctx, currencyCode)
	if err != nil {
		return err
	}
	rs, err := a.s.SearchRead(ctx, "res.company", []any{rpc.Leaf("id", "=", id)}, []string{"name", "currency_id"}, nil)
	if err != nil {
		return err
	}
	if len(rs) != 1 {
		return fmt.Errorf("odoo: no res.company %d", id)
	}
	a.mu.Lock()
	a.companies[company] = id
	a.mu.Unlock()
	if n, _ := rs[0].Str("name"); n != name {
		if err := a.write(ctx, "res.company", []int64{id}, map[string]any{"name": name}, nil); err != nil {
			return fmt.Errorf("odoo: naming company %d: %w", id, err)
		}
	}
	if c, _, _ := rs[0].Many2one("currency_id"); c != cur {
		if err := a.write(ctx, "res.company", []int64{id}, map[string]any{"currency_id": cur}, nil); err != nil {
			return fmt.Errorf("odoo: setting the currency of company %d to %s: %w", id, currencyCode, err)
		}
	}
	return nil
}

// EnsureCompany finds the res.company named name or creates it with the
// currency and the generic chart of accounts, gives the administrator
// access to it, and maps company to it. account must be installed.
func (a *Admin) EnsureCompany(ctx context.Context, company, name, currencyCode string) (int64, error) {
	cur, err := a.Currency(ctx, currencyCode)
	if err != nil {
		return 0, err
	}
	rs, err := a.s.SearchRead(ctx, "res.company", []any{rpc.Leaf("name", "=", name)}, []string{"chart_template"}, nil)
	if err != nil {
		return 0, err
	}
	var id int64
	chart := ""
	if len(rs) > 0 {
		if id, err = rs[0].ID(); err != nil {
			return 0, err
		}
		chart, _ = rs[0].Str("chart_template")
	} else if id, err = a.create(ctx, "res.company", map[string]any{"name": name, "currency_id": cur}, nil); err != nil {
		return 0, err
	}
	uid, err := a.s.UID(ctx)
	if err != nil {
		return 0, err
	}
	if err := a.write(ctx, "res.users", []int64{uid}, map[string]any{"company_ids": []any{[]any{4, id, 0}}}, nil); err != nil {
		return 0, err
	}
	if chart == "" {
		if err := a.done(ctx, "account.chart.template", "try_loading", []any{[]any{}, "generic_coa", id, false},
			map[string]any{"context": rpc.Scope(id, false)}); err != nil {
			return 0, fmt.Errorf("odoo: loading the chart of accounts of company %d: %w", id, err)
		}
	}
	a.mu.Lock()
	a.companies[company] = id
	a.mu.Unlock()
	return id, nil
}

// EnsureChart loads the generic chart of accounts into company id unless
// it has a purchase journal (account.journal of type purchase): a
// company whose account module was installed without a chart, as after
// an install interrupted by the server's reload. account must be installed.
func (a *Admin) EnsureChart(ctx context.Context, id int64) error {
	rs, err := a.s.SearchRead(ctx, "account.journal", []any{rpc.Leaf("type", "=", "purchase"), rpc.Leaf("company_id", "=", id)}, []string{"id"}, nil)
	if err != nil || len(rs) > 0 {
		return err
	}
	if err := a.done(ctx, "account.chart.template", "try_loading", []any{[]any{}, "generic_coa", id, false},
		map[string]any{"context": rpc.Scope(id, false)}); err != nil {
		return fmt.Errorf("odoo: loading the chart of accounts of company %d: %w", id, err)
	}
	return nil
}

// GroupID returns the id of a res.groups by its external id
// ("account.group_account_invoice").
func (a *Admin) GroupID(ctx context.Context, xmlid string) (int64, error) {
	module, name, ok := strings.Cut(xmlid, ".")
	if !ok {
		return 0, fmt.Errorf("odoo: %q is not module.name", xmlid)
	}
	rs, err := a.s.SearchRead(ctx, "ir.model.data", []any{rpc.Leaf("module", "=", module), rpc.Leaf("name", "=", name),
		rpc.Leaf("model", "=", "res.groups")}, []string{"res_id"}, nil)
	if err != nil {
		return 0, err
	}
	if len(rs) != 1 {
		return 0, fmt.Errorf("odoo: no group %s", xmlid)
	}
	id, err := rs[0].Int("res_id")
	if err != nil || id <= 0 {
		return 0, fmt.Errorf("odoo: group %s: %w", xmlid, odoo.ErrBadAnswer)
	}
	return id, nil
}

// User is one of the connector's Odoo users, as EnsureUser sets it up.
type User struct {
	// Name is the user's display name.
	Name string
	// Login and Password log the user in.
	odoo.Identity
	// Groups are the external ids of exactly the groups the user gets;
	// any other group it had is removed. Never leave it empty: Odoo then
	// gives the default user template (Contact Creation and Billing
	// Administrator).
	Groups []string
	// Companies are the companies (names in the company map) the user may
	// access; the first is its default company.
	Companies []string
	// Email is the user's e-mail address; "" leaves it as it is. Odoo
	// refuses to post a note (as ChangeBankAccount does) for a user
	// without one.
	Email string
}

// EnsureUser creates the user or brings it to u: password, exactly
// u.Groups, and u.Companies. It returns the user's id.
func (a *Admin) EnsureUser(ctx context.Context, u User) (int64, error) {
	if len(u.Groups) == 0 || len(u.Companies) == 0 || u.Login == "" || u.Password == "" {
		return 0, errors.New("odoo: a user needs a login, a password, groups and companies")
	}
	var groups, companies []any
	for _, g := range u.Groups {
		id, err := a.GroupID(ctx, g)
		if err != nil {
			return 0, err
		}
		groups = append(groups, id)
	}
	for _, c := range u.Companies {
		id, ok := a.company(c)
		if !ok {
			return 0, fmt.Errorf("odoo: company %q is not mapped", c)
		}
		companies = append(companies, id)
	}
	v, err := a.t.Version(ctx)
	if err != nil {
		return 0, err
	}
	vals := map[string]any{
		"name": u.Name, "login": u.Login, "password": u.Password, "active": true,
		groupsField(v): []any{[]any{6, 0, groups}},
		"company_ids":  []any{[]any{6, 0, companies}},
		"company_id":   companies[0],
	}
	if u.Email != "" {
		vals["email"] = u.Email
	}
	rs, err := a.s.SearchRead(ctx, "res.users", []any{rpc.Leaf("login", "=", u.Login)}, []string{"login"},
		map[string]any{"context": map[string]any{"active_test": false}})
	if err != nil {
		return 0, err
	}
	if len(rs) == 0 {
		return a.create(ctx, "res.users", vals, map[string]any{"context": map[string]any{"no_reset_password": true}})
	}
	id, err := rs[0].ID()
	if err != nil {
		return 0, err
	}
	return id, a.write(ctx, "res.users", []int64{id}, vals, nil)
}

// groupsField is res.users' field of a user's groups on the server's
// version: groups_id until 18, group_ids from 19 (groups_id is then an
// invalid field).
func groupsField(v rpc.Version) string {
	if v.Major >= 19 {
		return "group_ids"
	}
	return "groups_id"
}
