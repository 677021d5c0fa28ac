package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"

	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/mandate"
	"github.com/intentplane/intentplane/core/state"
)

// keptMandate is a mandate issued at start as kept in the store: the
// signed token and the public key that verifies it. The private key is
// never kept; nothing needs to sign again under it.
type keptMandate struct {
	Token     string `json:"token"`
	IssuerKey string `json:"issuer_key"` // "ed25519-pub:…"
}

// mandateKey is the store key of the mandate a configuration issues at
// start: a hash of everything that makes it (issuer, audience, owner,
// scope, budgets, claims, mode, lifetime), so that a changed
// configuration gets a new mandate.
func mandateKey(m mandate.Mandate, valid time.Duration) string {
	b, _ := json.Marshal(struct { // fields of plain types: never fails
		Issuer, Audience, Owner, Mode string
		Budget                        intent.Money
		Budgets                       []intent.Money `json:",omitempty"` // absent when none: keys of earlier configurations stay
		Scope                         []intent.Action
		Claims                        map[string][]string
		ValidFor                      int64 // seconds
	}{
		Issuer: m.Issuer, Audience: m.Audience, Owner: string(m.Owner), Budget: m.Budget, Budgets: m.Budgets,
		Mode: string(m.Mode), Scope: m.Scope, Claims: m.Claims, ValidFor: int64(valid / time.Second),
	})
	h := sha256.Sum256(b)
	return "intentplane-mcp/mandate/" + hex.EncodeToString(h[:])
}

// keepMandate keeps issued under key until expires, unless the store holds
// an unexpired mandate there already, and returns the one kept.
func keepMandate(ctx context.Context, records state.Records, key string, issued keptMandate, expires time.Time) (keptMandate, error) {
	b, err := json.Marshal(issued)
	if err != nil {
		return keptMandate{}, err
	}
	v, _, err := records.Keep(ctx, key, b, expires)
	if err != nil {
		return keptMandate{}, err
	}
	var kept keptMandate
	if err := json.Unmarshal(v, &kept); err != nil || kept.Token == "" {
		return keptMandate{}, fmt.Errorf("unreadable mandate record under %s", key)
	}
	return kept, nil
}
