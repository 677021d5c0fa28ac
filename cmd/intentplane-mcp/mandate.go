package main

import (
	"context"
	"os"
	"strings"
	"time"

	"github.com/intentplane/intentplane/cmd/intentplane-mcp/internal/config"
	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/mandate"
	"github.com/intentplane/intentplane/core/state"
)

// buildMandate reads the signed mandate, or issues one at start (or
// continues the one kept in records for this configuration; records may be
// nil), and returns it verified.
func buildMandate(ctx context.Context, c *config.Config, actions []intent.Action, records state.Records, now func() time.Time) (string, mandate.Keys, *mandate.Mandate, error) {
	tok, keys, err := mandateToken(ctx, c, actions, records, now)
	if err != nil {
		return "", nil, nil, err
	}
	m, err := mandate.Verifier{Keys: keys, Audience: c.Audience, Now: now}.Verify(ctx, tok)
	if err != nil {
		at := []string{"mandate"}
		if c.Mandate.File != "" {
			at = append(at, "file")
		}
		return "", nil, nil, c.ErrAt(at, "the mandate is not valid for this gateway: %v", err)
	}
	return tok, keys, m, nil
}

// mandateToken reads the signed mandate, or issues one at start.
func mandateToken(ctx context.Context, c *config.Config, actions []intent.Action, records state.Records, now func() time.Time) (string, mandate.Keys, error) {
	if c.Mandate.File != "" {
		return readMandate(c)
	}
	return issueMandate(ctx, c, actions, records, now)
}

// readMandate reads the mandate file and its issuer's public key.
func readMandate(c *config.Config) (string, mandate.Keys, error) {
	m := c.Mandate
	at := []string{"mandate"}
	tok, err := os.ReadFile(c.File(m.File))
	if err != nil {
		return "", nil, c.ErrAt(append(at, "file"), "%v", err)
	}
	kb, err := os.ReadFile(c.File(m.IssuerKey))
	if err != nil {
		return "", nil, c.ErrAt(append(at, "issuer_key"), "%v", err)
	}
	pub, err := mandate.ParsePublicKey(string(kb))
	if err != nil {
		return "", nil, c.ErrAt(append(at, "issuer_key"), "%v", err)
	}
	return strings.TrimSpace(string(tok)), mandate.StaticKeys{m.Issuer: pub}, nil

}

// issueMandate issues the mandate [mandate] describes, with a key
// generated for it: for every action when no scope is given, a budget of
// nothing when none is, valid for valid_for (8h by default). With a store
// that keeps records, the mandate is kept there under the configuration's
// identity (mandateKey), so that a restart of the same configuration
// continues the same mandate (its id, hence its budget and its executed
// operations) until it expires; a changed configuration gets a new one.
func issueMandate(ctx context.Context, c *config.Config, actions []intent.Action, records state.Records, now func() time.Time) (string, mandate.Keys, error) {
	want, err := wantedMandate(c, actions)
	if err != nil {
		return "", nil, err
	}
	valid := c.Mandate.ValidFor.Duration
	if valid == 0 {
		valid = 8 * time.Hour
	}
	pub, priv, err := mandate.GenerateKey(nil)
	if err != nil {
		return "", nil, err
	}
	if want.ID, err = mandate.NewID(nil); err != nil {
		return "", nil, err
	}
	t := now().UTC().Truncate(time.Second)
	want.NotBefore, want.Expiry = t.Add(-time.Minute), t.Add(valid)
	tok, err := mandate.Issue(want, startIssuer, priv)
	if err != nil {
		return "", nil, c.ErrAt([]string{"mandate"}, "%v", err)
	}
	issued := keptMandate{Token: tok, IssuerKey: mandate.EncodePublicKey(pub)}
	if records != nil {
		if issued, err = keepMandate(ctx, records, mandateKey(want, valid), issued, want.Expiry); err != nil {
			return "", nil, c.ErrAt([]string{"store"}, "keeping the mandate issued at start: %v", err)
		}
	}
	pk, err := mandate.ParsePublicKey(issued.IssuerKey)
	if err != nil {
		return "", nil, c.ErrAt([]string{"store"}, "the mandate kept in the store: %v", err)
	}
	return issued.Token, mandate.StaticKeys{startIssuer: pk}, nil
}

// startIssuer is the issuer id of mandates issued at start.
const startIssuer = "intentplane-mcp-start"

// wantedMandate is the mandate [mandate] describes, without id or times.
func wantedMandate(c *config.Config, actions []intent.Action) (mandate.Mandate, error) {
	m := c.Mandate
	budget := intent.Money{Currency: "EUR"}
	if m.Budget != "" {
		var err error
		if budget, err = intent.ParseMoney(strings.TrimSpace(m.Budget)); err != nil {
			return mandate.Mandate{}, c.ErrAt([]string{"mandate", "budget"}, "budget must read like \"EUR 12000.00\": %v", err)
		}
	}
	var budgets []intent.Money
	for _, f := range m.Budgets {
		b, err := intent.ParseMoney(strings.TrimSpace(f))
		if err != nil {
			return mandate.Mandate{}, c.ErrAt([]string{"mandate", "budgets"}, "each budget must read like \"USD 5000.00\": %v", err)
		}
		if _, dup := (&mandate.Mandate{Budget: budget, Budgets: budgets}).BudgetIn(b.Currency); dup {
			return mandate.Mandate{}, c.ErrAt([]string{"mandate", "budgets"}, "two budgets in %s: give one budget per currency", b.Currency)
		}
		budgets = append(budgets, b)
	}
	scope := actions
	if len(m.Scope) > 0 {
		scope = nil
		for _, s := range m.Scope {
			scope = append(scope, intent.Action(s))
		}
	}
	mode := mandate.ModeKnownCounterparties
	if m.Mode != "" {
		mode = mandate.Mode(m.Mode)
	}
	return mandate.Mandate{
		Issuer: startIssuer, Audience: c.Audience, Owner: intent.Owner(m.Owner),
		Scope: scope, Budget: budget, Budgets: budgets, Claims: m.Claims, Mode: mode,
	}, nil
}
