package main

import (
	"context"
	"os"
	"strings"
	"time"

	"github.com/intentplane/intentplane/cmd/intentplane-mcp/internal/config"
	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/mandate"
)

// buildMandate reads the signed mandate, or issues one at start, and
// returns it verified.
func buildMandate(ctx context.Context, c *config.Config, actions []intent.Action, now func() time.Time) (string, mandate.Keys, *mandate.Mandate, error) {
	tok, keys, err := mandateToken(c, actions, now)
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
func mandateToken(c *config.Config, actions []intent.Action, now func() time.Time) (string, mandate.Keys, error) {
	if c.Mandate.File != "" {
		return readMandate(c)
	}
	return issueMandate(c, actions, now)
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

// issueMandate issues the mandate [mandate] describes for this run, with a
// key generated for it: for every action when no scope is given, a budget
// of nothing when none is, valid for valid_for (8h by default).
func issueMandate(c *config.Config, actions []intent.Action, now func() time.Time) (string, mandate.Keys, error) {
	m := c.Mandate
	at := []string{"mandate"}
	budget := intent.Money{Currency: "EUR"}
	if m.Budget != "" {
		var err error
		if budget, err = intent.ParseMoney(strings.TrimSpace(m.Budget)); err != nil {
			return "", nil, c.ErrAt(append(at, "budget"), "budget must read like \"EUR 12000.00\": %v", err)
		}
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
	valid := m.ValidFor.Duration
	if valid == 0 {
		valid = 8 * time.Hour
	}
	pub, priv, err := mandate.GenerateKey(nil)
	if err != nil {
		return "", nil, err
	}
	id, err := mandate.NewID(nil)
	if err != nil {
		return "", nil, err
	}
	t := now().UTC().Truncate(time.Second)
	tok, err := mandate.Issue(mandate.Mandate{
		ID: id, Issuer: "intentplane-mcp-start", Audience: c.Audience, Owner: intent.Owner(m.Owner),
		Scope: scope, Budget: budget, Claims: m.Claims, Mode: mode,
		NotBefore: t.Add(-time.Minute), Expiry: t.Add(valid),
	}, "intentplane-mcp-start", priv)
	if err != nil {
		return "", nil, c.ErrAt(at, "%v", err)
	}
	return tok, mandate.StaticKeys{"intentplane-mcp-start": pub}, nil
}
