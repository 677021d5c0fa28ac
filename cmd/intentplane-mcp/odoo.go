package main

import (
	"context"
	"errors"
	"log/slog"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/intentplane/intentplane/odoo"
)

// odooMount is an Odoo database a pack is mounted on, with where its
// configuration is, to check the mandate's owner against it.
type odooMount struct {
	at        []string // the [servers.NAME.odoo] table
	companies map[string]int64
}

// openOdoo builds the Odoo client of a pack mount from its configuration
// and the environment, logs every identity in and checks with
// odoo.Client.CheckRights, for each mapped company, that no identity can
// do what it must not. Errors name the file and line.
func openOdoo(ctx context.Context, c *config, at []string, oc *odooConfig, log *slog.Logger) (*odoo.Client, error) {
	at = append(append([]string{}, at...), "odoo")
	if oc == nil {
		return nil, c.errAt(at, `erp = "odoo" needs a [%s] table: url, db, reader, payer, bank_admin, companies`, strings.Join(at, "."))
	}
	if oc.URL == "" {
		return nil, c.errAt(at, "odoo needs url (Odoo's base URL, e.g. http://127.0.0.1:8069)")
	}
	u, err := url.Parse(oc.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, c.errAt(append(at, "url"), "url %q is not an http(s) URL", oc.URL)
	}
	if u.User != nil {
		return nil, c.errAt(append(at, "url"), "url must not carry credentials: name the identities' password variables with password_env")
	}
	if oc.DB == "" {
		return nil, c.errAt(at, "odoo needs db (the database)")
	}
	identity := func(key string, ic *odooIdentityConfig) (odoo.Identity, error) {
		iat := append(append([]string{}, at...), key)
		if ic.Password != "" {
			return odoo.Identity{}, c.errAt(append(iat, "password"), "a password is never written in the configuration: put it in an environment variable and name that variable with password_env")
		}
		if ic.Login == "" {
			return odoo.Identity{}, c.errAt(iat, "odoo identity %s needs login and password_env", key)
		}
		if ic.PasswordEnv == "" {
			return odoo.Identity{}, c.errAt(iat, "odoo identity %s needs password_env: the name of the environment variable holding its password", key)
		}
		pw, ok := os.LookupEnv(ic.PasswordEnv)
		if !ok || pw == "" {
			return odoo.Identity{}, c.errAt(append(iat, "password_env"), "environment variable %s (the %s's password) is not set", ic.PasswordEnv, key)
		}
		return odoo.Identity{Login: ic.Login, Password: pw}, nil
	}
	cfg := odoo.Config{URL: oc.URL, DB: oc.DB, Timeout: oc.Timeout.Duration, Companies: map[string]int64{}, Logger: log}
	if cfg.Reader, err = identity("reader", &oc.Reader); err != nil {
		return nil, err
	}
	if cfg.Payer, err = identity("payer", &oc.Payer); err != nil {
		return nil, err
	}
	if oc.BankAdmin != nil {
		if cfg.BankAdmin, err = identity("bank_admin", oc.BankAdmin); err != nil {
			return nil, err
		}
	}
	if len(oc.Companies) == 0 {
		return nil, c.errAt(at, "odoo needs companies: each mandate owner mapped to its res.company id (intentplane odoo setup prints it), e.g. companies = { northwind = 1 }")
	}
	for _, name := range sortedKeys(oc.Companies) {
		if oc.Companies[name] <= 0 {
			return nil, c.errAt(append(at, "companies", name), "company %q: a res.company id is a positive integer", name)
		}
		cfg.Companies[name] = oc.Companies[name]
	}
	client, err := odoo.New(cfg)
	if err != nil {
		return nil, c.errAt(at, "%v", err)
	}
	// Logging in and probing rights: at most a minute in all, so that an
	// unreachable Odoo fails the start instead of hanging it.
	ctx, cancel := context.WithTimeout(ctx, max(time.Minute, 3*cfg.Timeout))
	defer cancel()
	if err := client.Login(ctx); err != nil {
		return nil, c.errAt(at, "cannot log in to Odoo at %s (database %s): %v", oc.URL, oc.DB, err)
	}
	for _, name := range sortedKeys(oc.Companies) {
		if err := client.CheckRights(ctx, name); err != nil {
			var re *odoo.RightsError
			if errors.As(err, &re) {
				return nil, c.errAt(at, "refusing to start: in Odoo, the %s (company %s) can %s, which it must not; remove the extra groups from that user (intentplane odoo setup gives each user exactly its groups)", re.Role, name, re.Probe)
			}
			return nil, c.errAt(at, "checking the Odoo users' rights (company %s): %v", name, err)
		}
	}
	return client, nil
}

// checkOwner refuses a mandate whose owner no Odoo mount maps to a
// company: none of its records could be found.
func (m odooMount) checkOwner(c *config, owner string) error {
	if _, ok := m.companies[owner]; !ok {
		return c.errAt(append(append([]string{}, m.at...), "companies"), "the mandate's owner %q is not mapped to an Odoo company: add it to companies", owner)
	}
	return nil
}
