package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"

	"github.com/intentplane/intentplane/ap"
	"github.com/intentplane/intentplane/approvals"
	"github.com/intentplane/intentplane/cmd/intentplane-mcp/internal/config"
	"github.com/intentplane/intentplane/core/gateway"
	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/mandate"
)

// page is the approval page wired for the proxy: the server, the channel
// requests go to (the server itself, or the webhook in front of it), and
// who may approve for whom.
type page struct {
	srv     *approvals.Server
	ch      approvals.Channel
	webhook *approvals.Webhook // non-nil when callbacks are accepted
	// owners maps each page approver to the owners they may approve for;
	// none means every owner (approval.Scope.Owners).
	owners map[string][]intent.Owner
}

// buildPage builds the approval page from [approvals] (config checked its
// addresses and keys), or returns nil when no page approver is configured.
// callbacks, when not nil, takes the call-backs recorded on the page. The
// page records receipts into st and keeps its requests, sessions and
// call-backs in entries.
func buildPage(c *config.Config, st approvals.Log, entries approvals.Store, callbacks approvals.CallbackSink, roles func(intent.Action) (approvals.ArgRoles, bool), log *slog.Logger) (*page, error) {
	ac := c.Approvals
	at := []string{"approvals"}
	if len(ac.Approvers) == 0 {
		return nil, nil
	}
	p := &page{owners: map[string][]intent.Owner{}}
	cfg := approvals.Config{Addr: ac.Listen, BaseURL: strings.TrimSuffix(ac.BaseURL, "/"), TTL: ac.RequestTTL.Duration, MaxPending: ac.MaxRequests,
		Callbacks: callbacks, Logger: log, Phrasers: phrasers(), Roles: roles, Passkeys: approvals.PasskeyRule(ac.Passkeys)}
	if callbacks != nil {
		// Whoever recorded a change's call-back is not one of its two
		// approvers.
		cfg.NotApprovers = []string{ap.FactCalledBy}
	}
	for i, a := range ac.Approvers {
		aat := append(at, "approvers", fmt.Sprint(i))
		priv, err := readPrivateKey(c.File(a.Key))
		if err != nil {
			return nil, c.ErrAt(append(aat, "key"), "%v", err)
		}
		var owners []intent.Owner
		for _, o := range a.Owners {
			owners = append(owners, intent.Owner(o))
		}
		p.owners[a.Name] = owners
		cfg.Approvers = append(cfg.Approvers, approvals.Approver{Name: a.Name, Passcode: a.PasscodeHash, Key: priv, Owners: owners})
	}
	srv, err := approvals.New(cfg, st, entries)
	var ae *approvals.ApproverError
	if errors.As(err, &ae) {
		key := map[string]string{"name": "name", "key": "key", "passcode": "passcode_hash"}[ae.Field]
		hint := ""
		if ae.Field == "passcode" {
			hint = " (make one with `intentplane hash-passcode`)"
		}
		return nil, c.ErrAt(append(at, "approvers", fmt.Sprint(ae.Index), key), "approver %q: %s%s", ae.Name, ae.Reason, hint)
	}
	if err != nil {
		return nil, c.ErrAt(append(at, "approvers"), "%v", err)
	}
	p.srv, p.ch = srv, srv
	if ac.Webhook != nil {
		if err := p.addWebhook(c, ac.Webhook); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// serve binds the page's address, then serves the page (and the webhook's
// callbacks at /webhook) until ctx is done. It returns once the listener is
// bound; errc receives the server's error, if any.
func (p *page) serve(ctx context.Context) (<-chan error, error) {
	ln, err := p.srv.Listen()
	if err != nil {
		return nil, fmt.Errorf("approval page: %w", err)
	}
	errc := make(chan error, 1)
	go func() { errc <- p.srv.Serve(ctx, ln, p.webhook) }()
	return errc, nil
}

// addWebhook puts the webhook [approvals.webhook] describes in front of the
// page: requests go to it, and, with a callback key, its signed callbacks
// are served at /webhook.
func (p *page) addWebhook(c *config.Config, w *config.Webhook) error {
	wat := []string{"approvals", "webhook"}
	key, err := readPrivateKey(c.File(w.Key))
	if err != nil {
		return c.ErrAt(append(wat, "key"), "%v", err)
	}
	wc := approvals.WebhookConfig{URL: w.URL, Key: key, Approvers: w.Approvers}
	if w.CallbackKey != "" {
		b, err := os.ReadFile(c.File(w.CallbackKey))
		if err != nil {
			return c.ErrAt(append(wat, "callback_key"), "%v", err)
		}
		if wc.CallbackKey, err = mandate.ParsePublicKey(strings.TrimSpace(string(b))); err != nil {
			return c.ErrAt(append(wat, "callback_key"), "%v", err)
		}
	}
	wh, err := approvals.NewWebhook(p.srv, wc)
	var ae *approvals.ApproverError
	if errors.As(err, &ae) {
		return c.ErrAt(append(wat, "approvers"), "approver %q: %s", ae.Name, ae.Reason)
	}
	if err != nil {
		return c.ErrAt(wat, "%v", err)
	}
	p.ch = wh
	if wc.CallbackKey != nil {
		p.webhook = wh
	}
	return nil
}

// argRoles returns, for the audit view, the roles of each action's
// arguments as the packs' contracts declare them (rolesOf).
func argRoles(packs []gateway.Pack, budget string) func(intent.Action) (approvals.ArgRoles, bool) {
	roles := rolesOf(packs, budget)
	return func(a intent.Action) (approvals.ArgRoles, bool) {
		ro, ok := roles[a]
		return ro, ok
	}
}

// payeeParams returns the parameters that name a payee in any of the
// packs' actions (rolesOf), sorted: what the audit view's payee filter
// matches.
func payeeParams(packs []gateway.Pack) []string {
	var out []string
	for _, ro := range rolesOf(packs, "") {
		for _, p := range ro.Payee {
			if !slices.Contains(out, p) {
				out = append(out, p)
			}
		}
	}
	slices.Sort(out)
	return out
}

// rolesOf returns the roles of each action's arguments as the packs'
// contracts declare them: the payee is what all its running totals add up
// by, the amount the budget parameter, in the currency of the
// BudgetCurrency fact or else of the mandate's budget.
func rolesOf(packs []gateway.Pack, budget string) map[intent.Action]approvals.ArgRoles {
	roles := map[intent.Action]approvals.ArgRoles{}
	for _, p := range packs {
		for _, ct := range p.Contracts {
			ro := approvals.ArgRoles{Amount: ct.Budget, CurrencyFrom: ct.BudgetCurrency}
			if ct.Budget != "" && ct.BudgetCurrency == "" {
				ro.Currency = budget
			}
			// The payee is what every total adds up by (ap's totals are
			// by vendor, one also by bill: the payee is the vendor).
			for i, t := range ct.Totals {
				if i == 0 {
					ro.Payee = slices.Clone(t.By)
					continue
				}
				ro.Payee = slices.DeleteFunc(ro.Payee, func(p string) bool { return !slices.Contains(t.By, p) })
			}
			roles[ct.Action] = ro
		}
	}
	return roles
}
