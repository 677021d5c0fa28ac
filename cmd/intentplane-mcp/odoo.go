package main

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/intentplane/intentplane/cmd/intentplane-mcp/internal/config"
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
// do what it must not. zone is the company's time zone of the mount's
// controls (nil: none set): Odoo dates payments in it when the company's
// contact has none. Errors name the file and line.
func openOdoo(ctx context.Context, c *config.Config, at []string, oc *config.Odoo, zone *time.Location, log *slog.Logger) (*odoo.Client, error) {
	at = append(append([]string{}, at...), "odoo")
	// config checked logins and password_env; the passwords are in the
	// environment.
	identity := func(key string, ic *config.OdooIdentity) (odoo.Identity, error) {
		iat := append(append([]string{}, at...), key)
		pw, ok := os.LookupEnv(ic.PasswordEnv)
		if !ok || pw == "" {
			return odoo.Identity{}, c.ErrAt(append(iat, "password_env"), "environment variable %s (the %s's password) is not set", ic.PasswordEnv, key)
		}
		setting := "environment variable " + ic.PasswordEnv + " (" + strings.Join(iat, ".") + ".password_env in " + c.Path() + ")"
		return odoo.Identity{Login: ic.Login, Password: pw, Setting: setting}, nil
	}
	cfg := odoo.Config{URL: oc.URL, DB: oc.DB, Timeout: oc.Timeout.Duration, Companies: map[string]int64{}, Logger: log, Transport: oc.Transport}
	if zone != nil {
		cfg.TimeZone = zone.String()
	}
	var err error
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
	for name, id := range oc.Companies {
		cfg.Companies[name] = id
	}
	client, err := odoo.New(cfg)
	if err != nil {
		return nil, c.ErrAt(at, "%v", err)
	}
	// Logging in and probing rights: at most a minute in all, so that an
	// unreachable Odoo fails the start instead of hanging it.
	ctx, cancel := context.WithTimeout(ctx, max(time.Minute, 3*cfg.Timeout))
	defer cancel()
	if err := client.Login(ctx); err != nil {
		return nil, c.ErrAt(at, "cannot log in to Odoo at %s (database %s): %v", oc.URL, oc.DB, err)
	}
	for _, name := range config.SortedKeys(oc.Companies) {
		if err := client.CheckRights(ctx, name); err != nil {
			var re *odoo.RightsError
			if errors.As(err, &re) {
				return nil, c.ErrAt(at, "refusing to start: in Odoo, the %s (company %s) can %s, which it must not; remove the extra groups from that user (intentplane odoo setup gives each user exactly its groups)", re.Role, name, re.Probe)
			}
			return nil, c.ErrAt(at, "checking the Odoo users' rights (company %s): %v", name, err)
		}
	}
	return client, nil
}

// checkOwner refuses a mandate whose owner no Odoo mount maps to a
// company: none of its records could be found.
func (m odooMount) checkOwner(c *config.Config, owner string) error {
	if _, ok := m.companies[owner]; !ok {
		return c.ErrAt(append(append([]string{}, m.at...), "companies"), "the mandate's owner %q is not mapped to an Odoo company: add it to companies", owner)
	}
	return nil
}
