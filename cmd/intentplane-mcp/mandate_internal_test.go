package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/intentplane/intentplane/cmd/intentplane-mcp/internal/config"
	"github.com/intentplane/intentplane/core/intent"
)

// TestWantedMandateBudgets (issue 17): [mandate] budgets adds a budget per
// further currency; a malformed one or two in one currency are refused
// naming the key; the store key of a configuration without budgets is the
// one it always was.
func TestWantedMandateBudgets(t *testing.T) {
	c := &config.Config{Mandate: config.Mandate{Owner: "northwind", Budget: "EUR 12000.00", Budgets: []string{"USD 5000.00", " GBP 10.00 "}}}
	m, err := wantedMandate(c, []intent.Action{"ap.pay_bill"})
	if err != nil {
		t.Fatal(err)
	}
	want := []intent.Money{{Currency: "EUR", Amount: 1200000}, {Currency: "USD", Amount: 500000}, {Currency: "GBP", Amount: 1000}}
	if diff := cmp.Diff(want, m.AllBudgets()); diff != "" {
		t.Errorf("budgets (-want, +got):\n%s", diff)
	}
	for _, tc := range []struct{ budgets []string }{{[]string{"usd 1.00"}}, {[]string{"USD 1.00", "USD 2.00"}}, {[]string{"EUR 1.00"}}} {
		c.Mandate.Budgets = tc.budgets
		if _, err := wantedMandate(c, nil); err == nil || !strings.Contains(err.Error(), "budget") {
			t.Errorf("budgets %q: %v; want refused", tc.budgets, err)
		}
	}
	c.Mandate.Budgets = nil
	m, err = wantedMandate(c, []intent.Action{"ap.pay_bill"})
	if err != nil {
		t.Fatal(err)
	}
	// The key as it was computed before budgets existed.
	b, err := json.Marshal(struct {
		Issuer, Audience, Owner, Mode string
		Budget                        intent.Money
		Scope                         []intent.Action
		Claims                        map[string][]string
		ValidFor                      int64
	}{Issuer: m.Issuer, Audience: m.Audience, Owner: string(m.Owner), Budget: m.Budget, Mode: string(m.Mode), Scope: m.Scope, Claims: m.Claims})
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.Sum256(b)
	if k := mandateKey(m, 0); k != "intentplane-mcp/mandate/"+hex.EncodeToString(h[:]) {
		t.Errorf("a configuration without budgets changed its mandate's key: %s", k)
	}
}
