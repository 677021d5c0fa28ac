// Package odoo implements erp.Source over Odoo's external API, XML-RPC
// (/xmlrpc/2) on Odoo 17, 18 and 19 and JSON-2 (/json/2, API keys) on Odoo
// 19 (Config.Transport), so that the accounts-payable pack reads and pays
// through a company's Odoo. Odoo is reached as three operator-configured identities,
// none of them held by the agent: a reader, a payer (registers payments
// and cannot create or change bank accounts or vendors) and a bank
// administrator (changes bank accounts, for the registry-authority flow
// only). Package odoo/provision sets up a database for the connector
// (intentplane odoo setup, the demo and the tests); package odootest is
// a fake Odoo 17, 18 or 19 server for tests (XML-RPC, and JSON-2 as 19). The calls themselves (transports, logins, decoding,
// faults, the server's version) are the RPC layer, odoo/internal/rpc,
// whose errors and settings this package names. The server's version is
// read at the first call and what differs between the versions is kept
// in one place (dialect.go); a version other than 17, 18 or 19 is
// refused at Login.
//
// The connector does not trust Odoo Community to enforce what the gateway
// relies on: it checks itself that a payment goes to an active, trusted
// account of the bill's vendor, within the bill's residual and currency
// (as read for the request, or as the caller read them while deciding:
// erp.PaymentRequest.Decided), and passes that account and the payment's
// date explicitly to Odoo's payment wizard. It never retries a write: each
// payment carries its idempotency key in its memo, the payments of a bill
// are read with it, and a lost answer is settled by looking for the key,
// so an answer lost on the network cannot pay twice. It reads what Odoo
// shows a company: its own records and those without a company; a bill's
// vendor is its commercial partner. Every read is bound to a vendor, a
// bill, a number or a name and limited (MaxRead). See the README of the
// repository, ../shared/odoo17-api.md and ../shared/odoo18-19-api.md for
// the behaviour of Odoo it is built on.
//
// Account numbers: Odoo's sanitized_acc_number keeps every Unicode letter
// and digit and the underscore (Python's \W), while erp.Sanitize keeps
// ASCII letters and digits only. The connector never lets either clean-up
// turn an invalid number into a valid one: a number it is asked to find
// or write may hold only ASCII letters, digits, spaces and the separators
// - . /, a lookup matches only accounts whose stored sanitized number is
// byte-equal to erp.Sanitize of the query, and an account is reported with
// Odoo's sanitized number exactly as stored. Strict IBAN validation (check
// digits, length) is the pack's normalizer's job, done before the lookup.
//
// Package odoo may import erp, core/intent and its RPC layer
// (odoo/internal/rpc); it must never import core/gateway, a pack or a
// store.
package odoo

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/intentplane/intentplane/erp"
	"github.com/intentplane/intentplane/odoo/internal/rpc"
)

var _ erp.Source = (*Client)(nil)

// Config configures a Client. The zero value of an optional field means
// the default stated on it.
type Config struct {
	// URL is the Odoo server's base URL, e.g. "http://127.0.0.1:8069";
	// required. It must not carry credentials.
	URL string
	// DB is the database name; required.
	DB string
	// Reader reads vendors, bank accounts, bills and payments: in Odoo
	// base.group_user and account.group_account_readonly.
	Reader Identity
	// Payer registers payments: account.group_account_invoice, without
	// base.group_partner_manager. RegisterPayment needs it.
	Payer Identity
	// BankAdmin changes bank accounts: base.group_user,
	// base.group_partner_manager and account.group_validate_bank_account.
	// ChangeBankAccount needs it.
	BankAdmin Identity
	// Companies maps a company as erp.Source names it (a mandate's owner,
	// such as "northwind") to its res.company id. A company not in the
	// map has no records.
	Companies map[string]int64
	// TimeZone is the IANA name of the time zone whose calendar dates a
	// payment ("Europe/Berlin") when the company's own partner has none
	// (res.company's partner_id, its tz field: "Timezone" on the company's
	// contact in Odoo's UI, which the company's settings set); empty means
	// UTC. Odoo would otherwise date a payment in the paying user's time
	// zone, so a payer set to UTC+14 books tomorrow's date.
	TimeZone string
	// Transport is how the calls go: TransportAuto ("", JSON-2 on Odoo 19
	// and later, where the identities' passwords must then be API keys;
	// XML-RPC on 17 and 18), TransportXMLRPC ("xmlrpc", on every version)
	// or TransportJSON2 ("json2", refused at Login on 17 and 18).
	Transport string
	// Timeout limits each call; zero means DefaultTimeout.
	Timeout time.Duration
	// HTTPClient makes the calls; nil means a new http.Client. Its own
	// Timeout, if any, applies as well.
	HTTPClient *http.Client
	// Logger receives one debug record per call (service, model, method,
	// duration, fault code; never an argument); nil means discard.
	Logger *slog.Logger
}

// Client is an erp.Source over Odoo's XML-RPC or JSON-2 API. It is safe
// for concurrent use. Each identity authenticates once, on its first
// call, and its uid is cached for the life of the Client. Every call
// names Config.DB, so that Odoo does not list its databases over a new
// PostgreSQL connection on every call: on Odoo 19 in the X-Odoo-Database
// header, on 17 and 18 with the cookie of an Odoo session that names the
// database and no user, asked for (GET /web/login?db=DB, not counted by
// Calls) at the first call and again every hour. A server that gives
// none is called without one.
type Client struct {
	t         *rpc.Transport
	companies map[string]int64
	reader    *rpc.Session
	payer     *rpc.Session
	bankAdmin *rpc.Session

	mu          sync.Mutex
	locks       map[string]chan struct{} // company and bill or vendor → a lock held while paying it
	currencies  map[int64]currency       // res.currency id → code and decimals
	zones       map[int64]*time.Location // res.company id → its calendar's time zone
	ownCurrency map[int64]int64          // res.company id → its currency's res.currency id (see Rate)
	zone        *time.Location           // Config.TimeZone
	now         func() time.Time
}

type currency struct {
	code     string
	decimals int
}

// New returns a Client for cfg. It makes no call: identities
// authenticate on first use (see Login). It returns an error if the URL
// or the database is missing or malformed.
func New(cfg Config) (*Client, error) {
	if cfg.DB == "" {
		return nil, errors.New("odoo: Config.DB is required")
	}
	if err := rpc.CheckTransport("Config.Transport", cfg.Transport); err != nil {
		return nil, err
	}
	t, err := rpc.NewTransport(rpc.Options{URL: cfg.URL, HTTPClient: cfg.HTTPClient, Timeout: cfg.Timeout, Logger: cfg.Logger,
		Mode: cfg.Transport, Secrets: []string{cfg.Reader.Password, cfg.Payer.Password, cfg.BankAdmin.Password}, Database: cfg.DB})
	if err != nil {
		return nil, err
	}
	zone := time.UTC
	if cfg.TimeZone != "" {
		if zone, err = time.LoadLocation(cfg.TimeZone); err != nil || cfg.TimeZone == "Local" {
			return nil, fmt.Errorf("odoo: Config.TimeZone %q is not an IANA time zone", cfg.TimeZone)
		}
	}
	c := &Client{
		t:          t,
		companies:  make(map[string]int64, len(cfg.Companies)),
		locks:      map[string]chan struct{}{},
		currencies: map[int64]currency{},
		zones:      map[int64]*time.Location{},
		zone:       zone,
		now:        time.Now,
	}
	for k, v := range cfg.Companies {
		c.companies[k] = v
	}
	t.UseDatabase(cfg.DB, func() time.Time { return c.now() })
	c.reader = rpc.NewSession(t, cfg.DB, "reader", setting(cfg.Reader, "Config.Reader.Password"))
	c.payer = rpc.NewSession(t, cfg.DB, "payer", setting(cfg.Payer, "Config.Payer.Password"))
	c.bankAdmin = rpc.NewSession(t, cfg.DB, "bank administrator", setting(cfg.BankAdmin, "Config.BankAdmin.Password"))
	return c, nil
}

// NewAs returns a Client whose every call, read or payment, is made as
// the one identity of s, over s's Transport: for package
// odoo/provision, which enters records as the database's administrator
// and reads them back through the connector (rpc is internal to
// package odoo and its subpackages). companies is the Client's company
// map, kept and not copied: the caller may add to it, not concurrently
// with the Client's calls. now dates payments, in UTC unless the
// company's partner names a time zone.
func NewAs(s *rpc.Session, companies map[string]int64, now func() time.Time) *Client {
	return &Client{t: s.Transport(), companies: companies, locks: map[string]chan struct{}{}, currencies: map[int64]currency{},
		zones: map[int64]*time.Location{}, zone: time.UTC, now: now, reader: s, payer: s, bankAdmin: s}
}

// Login reads the server's version, authenticates every configured
// identity that has not yet, so that a wrong password shows at startup
// rather than at the first payment, and reads the time zone of each
// company the payer pays for. It returns an error wrapping
// ErrUnsupportedVersion for an Odoo it does not speak and one wrapping
// ErrAccessDenied for a refused login.
func (c *Client) Login(ctx context.Context) error {
	if _, err := c.t.Version(ctx); err != nil {
		return err
	}
	for _, s := range []*rpc.Session{c.reader, c.payer, c.bankAdmin} {
		if s.Identity().Login == "" {
			continue
		}
		if _, err := s.UID(ctx); err != nil {
			return err
		}
	}
	if c.payer.Identity().Login != "" {
		for _, cid := range c.companies {
			if _, err := c.companyZone(ctx, cid); err != nil {
				return err
			}
		}
	}
	return nil
}

// companyZone returns the time zone of a company's calendar: the tz of
// the company's partner, else Config.TimeZone, else UTC. It is read once
// per company (two calls, as the payer) and cached: a company's time
// zone is configuration, not a fact a payment decides on.
func (c *Client) companyZone(ctx context.Context, cid int64) (*time.Location, error) {
	c.mu.Lock()
	z, ok := c.zones[cid]
	c.mu.Unlock()
	if ok {
		return z, nil
	}
	v, err := c.payer.Execute(ctx, "res.company", "read", []any{[]any{cid}}, map[string]any{"fields": rpc.Strs([]string{"partner_id"})})
	if err != nil {
		return nil, err
	}
	rs, err := rpc.Records(v)
	if err != nil || len(rs) != 1 {
		return nil, fmt.Errorf("odoo: res.company %d: %w", cid, errors.Join(err, ErrBadAnswer))
	}
	partner, _, err := rs[0].Many2one("partner_id")
	if err != nil {
		return nil, fmt.Errorf("odoo: res.company %d: %w", cid, err)
	}
	z = c.zone
	if partner != 0 {
		v, err = c.payer.Execute(ctx, "res.partner", "read", []any{[]any{partner}}, map[string]any{"fields": rpc.Strs([]string{"tz"})})
		if err != nil {
			return nil, err
		}
		ps, err := rpc.Records(v)
		if err != nil {
			return nil, fmt.Errorf("odoo: res.partner %d: %w", partner, err)
		}
		if len(ps) == 1 {
			tz, err := ps[0].Str("tz")
			if err != nil {
				return nil, fmt.Errorf("odoo: res.partner %d: %w", partner, err)
			}
			if l, err := time.LoadLocation(tz); tz != "" && tz != "Local" && err == nil {
				z = l
			}
		}
	}
	c.mu.Lock()
	c.zones[cid] = z
	c.mu.Unlock()
	return z, nil
}

// today is the date of a payment made now: today in the company's
// calendar, YYYY-MM-DD.
func (c *Client) today(ctx context.Context, cid int64) (string, error) {
	z, err := c.companyZone(ctx, cid)
	if err != nil {
		return "", err
	}
	return c.now().In(z).Format(time.DateOnly), nil
}

// Version returns the server's Odoo version, read at the first call
// that needs it (common.version, no login).
func (c *Client) Version(ctx context.Context) (Version, error) { return c.t.Version(ctx) }

// Calls returns the number of calls, XML-RPC or JSON-2 (HTTP round
// trips), the Client has made.
func (c *Client) Calls() int64 { return c.t.Calls() }

func (c *Client) company(name string) (int64, bool) {
	id, ok := c.companies[name]
	return id, ok && id > 0
}

// setting returns id with its Setting, field when it names none.
func setting(id Identity, field string) Identity {
	if id.Setting == "" {
		id.Setting = field
	}
	return id
}

// ErrNotSetUp is returned by LookupCompany when the company is not in the
// database.
var ErrNotSetUp = errors.New("odoo: database not set up")

// LookupCompany returns the id of the res.company named name, as cfg's
// reader sees it over cfg's transport, for building the Companies of the
// Config it then runs with (cfg.Companies is not needed).
func LookupCompany(ctx context.Context, cfg Config, name string) (int64, error) {
	c, err := New(cfg)
	if err != nil {
		return 0, err
	}
	rs, err := c.reader.SearchRead(ctx, "res.company", []any{rpc.Leaf("name", "=", name)}, []string{"name"}, nil)
	if err != nil {
		return 0, err
	}
	if len(rs) != 1 {
		return 0, fmt.Errorf("%w: no company %q", ErrNotSetUp, name)
	}
	return rs[0].ID()
}
